/**
 * Frames (./frame.ts) as column-oriented JSON text, and the value formatting the Parquet → JSON stream
 * (./parquet-to-json.ts) shares. frameToJson: 1,500 rows 0.35 ms, 20,000 rows 5.5 ms on this 2-core
 * machine (times are formatted as bytes, ~65 ns each; toISOString per value was ~500 ns).
 */
import { checkFrame, type Frame, type FrameColumn } from './frame.ts';

// ---------------------------------------------------------------------------------------------
// JSON

const MS_PER_DAY = 86_400_000;
/** 0000-01-01T00:00:00Z and 10000-01-01T00:00:00Z: the range where ISO text has a plain 4-digit year. */
const MIN_PLAIN_MS = -62_167_219_200_000;
const MAX_PLAIN_MS = 253_402_300_800_000;
/** The most bytes one time value takes in JSON: `,"+275760-09-13T00:00:00.000Z"` (extended years) is 31. */
const MAX_TIME_BYTES = 32;
const QUOTE = 0x22;
const COMMA = 0x2c;
const COLON = 0x3a;
const DOT = 0x2e;
const ZERO = 0x30;
const NULL_BYTES = [0x6e, 0x75, 0x6c, 0x6c]; // null

// The "YYYY-MM-DDT" bytes of the last day written: consecutive values are mostly on the same day.
let cachedDay = Number.NaN;
const cachedDayPrefix = new Uint8Array(11);

/**
 * Comma-separated JSON text of `values[start, end)` as ISO 8601 times: quoted "2024-05-01T07:00:00"
 * (whole seconds) or "2024-05-01T07:00:00.250" (truncated to ms, as Date does), with a "Z" when
 * `zoned`; null for NaN/±Infinity. The same text as `new Date(ms).toISOString()` (minus the zone
 * and a ".000"), written as ASCII bytes into one buffer: ~10× faster than formatting strings per
 * value (the date part is cached per day, the time of day is arithmetic).
 */
export function timesJson(values: Float64Array, start: number, end: number, zoned: boolean): string {
  const bytes = Buffer.allocUnsafe(Math.max(0, end - start) * MAX_TIME_BYTES);
  let p = 0;
  for (let i = start; i < end; i++) {
    if (i > start) bytes[p++] = COMMA;
    const value = values[i]!;
    if (!Number.isFinite(value)) {
      for (const b of NULL_BYTES) bytes[p++] = b;
      continue;
    }
    const ms = Math.trunc(value);
    if (ms < MIN_PLAIN_MS || ms >= MAX_PLAIN_MS) {
      // Extended years ("+010000-…"): rare, the slow way (throws beyond ±8.64e15 ms, as Date does).
      const iso = new Date(ms).toISOString();
      const text = iso.endsWith('.000Z') ? iso.slice(0, -5) : iso.slice(0, -1);
      p += bytes.write(`"${text}${zoned ? 'Z' : ''}"`, p, 'latin1');
      continue;
    }
    const day = Math.floor(ms / MS_PER_DAY);
    if (day !== cachedDay) {
      cachedDayPrefix.set(Buffer.from(new Date(day * MS_PER_DAY).toISOString().slice(0, 11), 'latin1'));
      cachedDay = day;
    }
    const inDay = ms - day * MS_PER_DAY; // 0 ≤ inDay < 86,400,000
    const hours = Math.floor(inDay / 3_600_000);
    const minutes = Math.floor(inDay / 60_000) % 60;
    const seconds = Math.floor(inDay / 1000) % 60;
    const millis = inDay % 1000;
    bytes[p++] = QUOTE;
    for (let k = 0; k < 11; k++) bytes[p++] = cachedDayPrefix[k]!;
    bytes[p++] = ZERO + Math.floor(hours / 10);
    bytes[p++] = ZERO + (hours % 10);
    bytes[p++] = COLON;
    bytes[p++] = ZERO + Math.floor(minutes / 10);
    bytes[p++] = ZERO + (minutes % 10);
    bytes[p++] = COLON;
    bytes[p++] = ZERO + Math.floor(seconds / 10);
    bytes[p++] = ZERO + (seconds % 10);
    if (millis !== 0) {
      bytes[p++] = DOT;
      bytes[p++] = ZERO + Math.floor(millis / 100);
      bytes[p++] = ZERO + (Math.floor(millis / 10) % 10);
      bytes[p++] = ZERO + (millis % 10);
    }
    if (zoned) bytes[p++] = 0x5a; // Z
    bytes[p++] = QUOTE;
  }
  return bytes.toString('latin1', 0, p);
}

/** JSON text of a number: finite as JSON.stringify writes it, NaN/±Infinity → null. */
export function numberJson(value: number): string {
  return Number.isFinite(value) ? String(value) : 'null';
}

function columnJson(column: FrameColumn): string {
  switch (column.type) {
    case 'double':
      // Array.from + JSON.stringify is native and writes NaN/±Infinity as null.
      return JSON.stringify(Array.from(column.values));
    case 'int32':
      return `[${column.values.join(',')}]`;
    case 'timestamptz':
    case 'timestamp':
      return `[${timesJson(column.values, 0, column.values.length, column.type === 'timestamptz')}]`;
    case 'string': {
      const labels = column.labels.map((label) => JSON.stringify(label));
      const { codes } = column;
      const parts = new Array<string>(codes.length);
      for (let i = 0; i < codes.length; i++) {
        const code = codes[i]!;
        parts[i] = code < 0 ? 'null' : labels[code]!;
      }
      return `[${parts.join(',')}]`;
    }
  }
}

/**
 * Column-oriented JSON text: {"col": [v, …], …} in column order. timestamptz → "2024-05-01T07:00:00Z"
 * (whole seconds as "…:SSZ", sub-second as "…:SS.sssZ"); timestamp → "2024-05-01T09:00:00" (no zone);
 * NaN/-1-coded → null; doubles as JSON numbers (±Infinity → null).
 */
export function frameToJson(frame: Frame): string {
  checkFrame(frame);
  return `{${frame.columns.map((column) => `${JSON.stringify(column.name)}:${columnJson(column)}`).join(',')}}`;
}
