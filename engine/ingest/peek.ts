/**
 * A cheap look at when an activity file was recorded, to order a history import newest first
 * without parsing every file (docs/api-clients.md, "Activities": History import). No allocation beyond a few small objects, no
 * I/O; never throws: anything unexpected gives null (the file is then ordered by the caller's
 * fallback and fails or succeeds on its own when ingested).
 *
 * FIT: walks the record headers only as far as needed. Returns file_id.time_created (global
 * message 0, field 4) when the file_id message has an absolute one; otherwise the first absolute
 * `timestamp` (field 253) of any message, in file order. "Absolute" is the FIT rule for
 * date_time: values below 0x10000000 are seconds since device power-on (and 0xFFFFFFFF is
 * invalid), so they are passed over. Handles 12/14-byte headers (the header CRC is checked when
 * present and non-zero), little- and big-endian definitions, developer-field definitions (their
 * bytes are skipped) and compressed-timestamp headers (data skipped; their implied timestamps are
 * relative to an earlier explicit one, so never the first). Stops at the answer. A file shorter
 * than its header's data size (+ CRC) is truncated → null; the file CRC is not computed (that
 * would read every byte; a corrupt file fails at ingestion anyway). Only the first FIT file of a
 * chained file is looked at.
 *
 * CSV: the `timestamp` column (header cell matched case-insensitively, trimmed; BOM, quoted cells,
 * CRLF and blank lines handled as the ingest parser does) of the first data row, which must be an
 * ISO 8601 date-time with `Z` or a UTC offset; null for a naive or invalid value, a missing or
 * duplicated timestamp column, no data row, or a first row not within the first 64 KiB.
 *
 * GPX and TCX (read as text, not parsed: the first 64 KiB): GPX, the `<time>` of the first track point
 * (`trkpt`, any namespace prefix); TCX, the first activity's `<Id>` (an instant by the schema) or, failing
 * that, its first lap's `StartTime`. The value must carry `Z` or an offset; a route without times, a naive
 * value or none within 64 KiB gives null.
 */
import { parse as parseCsvSync } from 'csv-parse/sync';
import { parseInstant } from '../../lib/time.ts';

export type PeekFormat = 'fit' | 'csv' | 'gpx' | 'tcx';

/** When the file was recorded (see the module comment), or null. Never throws. */
export function recordedAt(bytes: Uint8Array, format: PeekFormat): Date | null {
  try {
    if (format === 'fit') return fitRecordedAt(bytes);
    if (format === 'csv') return csvRecordedAt(bytes);
    return trackRecordedAt(bytes, format);
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------
// FIT

/** 1989-12-31T00:00:00Z, the FIT epoch, in Unix milliseconds. */
const FIT_EPOCH_MS = Date.UTC(1989, 11, 31);
/** date_time values below this are relative (seconds since power-on), not instants. */
const FIT_MIN_ABSOLUTE = 0x10000000;
const FIT_INVALID_UINT32 = 0xffffffff;

const CRC_TABLE = [
  0x0000, 0xcc01, 0xd801, 0x1400, 0xf001, 0x3c00, 0x2800, 0xe401, 0xa001, 0x6c00, 0x7800, 0xb401, 0x5000, 0x9c01, 0x8801, 0x4400,
];

function fitCrc(bytes: Uint8Array, start: number, end: number): number {
  let crc = 0;
  for (let i = start; i < end; i++) {
    const byte = bytes[i]!;
    let tmp = CRC_TABLE[crc & 0xf]!;
    crc = (crc >> 4) & 0x0fff;
    crc = crc ^ tmp ^ CRC_TABLE[byte & 0xf]!;
    tmp = CRC_TABLE[crc & 0xf]!;
    crc = (crc >> 4) & 0x0fff;
    crc = crc ^ tmp ^ CRC_TABLE[(byte >> 4) & 0xf]!;
  }
  return crc;
}

interface Definition {
  global: number;
  littleEndian: boolean;
  /** Bytes of one data message (fields and developer fields). */
  size: number;
  /** Offsets within the data of a 4-byte time_created (file_id only) and timestamp, or −1. */
  timeCreated: number;
  timestamp: number;
}

function readUint32(bytes: Uint8Array, at: number, littleEndian: boolean): number {
  const [a, b, c, d] = [bytes[at]!, bytes[at + 1]!, bytes[at + 2]!, bytes[at + 3]!];
  return littleEndian ? (a | (b << 8) | (c << 16) | (d << 24)) >>> 0 : ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
}

function fitDate(seconds: number): Date {
  return new Date(FIT_EPOCH_MS + seconds * 1000);
}

const absolute = (v: number) => v >= FIT_MIN_ABSOLUTE && v !== FIT_INVALID_UINT32;

function fitRecordedAt(bytes: Uint8Array): Date | null {
  if (bytes.length < 12) return null;
  const headerSize = bytes[0]!;
  if (headerSize !== 12 && headerSize !== 14) return null;
  if (bytes[8] !== 0x2e || bytes[9] !== 0x46 || bytes[10] !== 0x49 || bytes[11] !== 0x54) return null; // ".FIT"
  const dataSize = readUint32(bytes, 4, true);
  const end = headerSize + dataSize;
  if (bytes.length < end + 2) return null; // truncated (data + file CRC)
  if (headerSize === 14) {
    const headerCrc = bytes[12]! | (bytes[13]! << 8);
    if (headerCrc !== 0 && headerCrc !== fitCrc(bytes, 0, 12)) return null;
  }

  const definitions: (Definition | undefined)[] = new Array(16);
  let firstTimestamp = -1;
  let sawFileId = false;
  let pos = headerSize;
  while (pos < end) {
    const header = bytes[pos++]!;
    if (header & 0x80) {
      // Compressed timestamp header: a data message of local type 0–3, time implied.
      const definition = definitions[(header >> 5) & 0x03];
      if (!definition || pos + definition.size > end) return null;
      pos += definition.size;
      continue;
    }
    const local = header & 0x0f;
    if (header & 0x40) {
      // Definition message: reserved, architecture, global number, field count, fields (3 bytes each),
      // then with the developer flag (0x20) a developer field count and fields (3 bytes each).
      if (pos + 5 > end) return null;
      const architecture = bytes[pos + 1]!;
      if (architecture > 1) return null;
      const littleEndian = architecture === 0;
      const global = littleEndian ? bytes[pos + 2]! | (bytes[pos + 3]! << 8) : (bytes[pos + 2]! << 8) | bytes[pos + 3]!;
      const fieldCount = bytes[pos + 4]!;
      pos += 5;
      if (pos + fieldCount * 3 > end) return null;
      let size = 0;
      let timeCreated = -1;
      let timestamp = -1;
      for (let i = 0; i < fieldCount; i++, pos += 3) {
        const num = bytes[pos]!;
        const fieldSize = bytes[pos + 1]!;
        if (fieldSize === 4 && num === 253) timestamp = size;
        if (fieldSize === 4 && num === 4 && global === 0) timeCreated = size;
        size += fieldSize;
      }
      if (header & 0x20) {
        if (pos + 1 > end) return null;
        const developerCount = bytes[pos++]!;
        if (pos + developerCount * 3 > end) return null;
        for (let i = 0; i < developerCount; i++, pos += 3) size += bytes[pos + 1]!;
      }
      definitions[local] = { global, littleEndian, size, timeCreated, timestamp };
      continue;
    }
    // Data message.
    const definition = definitions[local];
    if (!definition || pos + definition.size > end) return null;
    if (definition.timestamp >= 0 && firstTimestamp < 0) {
      const t = readUint32(bytes, pos + definition.timestamp, definition.littleEndian);
      if (absolute(t)) firstTimestamp = t;
    }
    if (definition.global === 0 && !sawFileId) {
      sawFileId = true;
      if (definition.timeCreated >= 0) {
        const t = readUint32(bytes, pos + definition.timeCreated, definition.littleEndian);
        if (absolute(t)) return fitDate(t);
      }
    }
    if (sawFileId && firstTimestamp >= 0) return fitDate(firstTimestamp);
    pos += definition.size;
  }
  return firstTimestamp >= 0 ? fitDate(firstTimestamp) : null;
}

// ---------------------------------------------------------------------------------------------
// CSV

const CSV_PEEK_BYTES = 64 * 1024;

function csvRecordedAt(bytes: Uint8Array): Date | null {
  const complete = bytes.length <= CSV_PEEK_BYTES;
  const head = new TextDecoder('utf-8').decode(complete ? bytes : bytes.subarray(0, CSV_PEEK_BYTES)); // strips a BOM
  // Of a longer file, only whole lines: a row cut off at the peek limit is not read.
  const text = complete ? head : head.slice(0, head.lastIndexOf('\n') + 1);
  let records: string[][];
  try {
    // The header and the first data row.
    records = parseCsvSync(text, { to: 2, trim: true, skip_empty_lines: true, relax_column_count: true });
  } catch {
    return null;
  }
  if (records.length < 2) return null;
  const header = records[0]!.map((cell) => cell.trim().toLowerCase());
  const column = header.indexOf('timestamp');
  if (column < 0 || header.indexOf('timestamp', column + 1) >= 0) return null;
  const cell = records[1]![column];
  const instant = cell === undefined ? undefined : parseInstant(cell.trim());
  return instant?.ok ? new Date(instant.t) : null;
}

// ---------------------------------------------------------------------------------------------
// GPX and TCX

const TRACK_PEEK_BYTES = 64 * 1024;
const GPX_POINT = /<(?:[\w.-]+:)?trkpt\b/;
const GPX_TIME = /<(?:[\w.-]+:)?time>\s*([^<\s]+)\s*</;
const TCX_ID = /<(?:[\w.-]+:)?Activity\b[^>]*>\s*<(?:[\w.-]+:)?Id>\s*([^<\s]+)\s*</;
const TCX_LAP_START = /<(?:[\w.-]+:)?Lap\b[^>]*\bStartTime\s*=\s*["']([^"']+)["']/;

/** Each search scans the text once (no pattern here backtracks over it). */
function trackRecordedAt(bytes: Uint8Array, format: 'gpx' | 'tcx'): Date | null {
  const head = new TextDecoder('utf-8').decode(bytes.subarray(0, TRACK_PEEK_BYTES));
  let value: string | undefined;
  if (format === 'gpx') {
    const at = head.search(GPX_POINT);
    value = at < 0 ? undefined : GPX_TIME.exec(head.slice(at))?.[1];
  } else value = (TCX_ID.exec(head) ?? TCX_LAP_START.exec(head))?.[1];
  const parsed = value === undefined ? undefined : parseInstant(value);
  return parsed?.ok ? new Date(parsed.t) : null;
}
