/**
 * A FIT file's records as Samples (engine/ingest/fit.ts): every record with a timestamp, ascending,
 * each channel's value in each. Two paths give them, value for value the same: the lean path
 * (engine/ingest/fit-records.ts: the record messages decoded straight into columns, fit-file-parser
 * decoding the rest of the file) and, for the files it declines, fit-file-parser for the whole file
 * (its record objects read channel by channel, developer fields included: developer-fields.ts).
 */
import type { ParsedFit } from 'fit-file-parser';
import type { Recording } from './recording.ts';
import { CHANNELS, type Channel } from '../channels.ts';
import { leanDecodeFit, RECORD_FIELDS, type RecordField, type RecordTable } from './fit-records.ts';
import { developerFieldsConcernChannels, readDeveloperFields } from './developer-fields.ts';
import { attempt, decode } from './fit-decode.ts';
import { fields, num, time, type Fields } from './fit-fields.ts';

/**
 * Every record of the file with a timestamp, ascending (of several with the same timestamp the last
 * in the file), and each channel's value in each (NaN where the record has none; a channel no
 * record has is absent or all NaN).
 */
export interface Samples {
  timestamps: Float64Array;
  channels: Partial<Record<Channel, Float64Array>>;
  /** The timestamps of records left out because a later record of the file has the same one. */
  duplicates: number[];
}

/**
 * The lean path (engine/ingest/fit-records.ts): records decoded into columns, the rest of the file
 * by fit-file-parser. Undefined when it declines the file, or when the file has developer fields
 * that may fill channels or that share a name with the record fields read (developer-fields.ts):
 * the library path then decodes the whole file, as it always did.
 */
export function leanDecode(bytes: Uint8Array): { fit: ParsedFit; samples: Samples } | undefined {
  const lean = leanDecodeFit(bytes);
  if (!lean) return undefined;
  // The rest is a few dozen messages; any failure there is left to the library path to report.
  const rest = attempt(lean.rest.buffer as ArrayBuffer, false);
  if (!('fit' in rest)) return undefined;
  const fit = rest.fit;
  if (developerFieldsConcernChannels(fit)) return undefined;
  return { fit, samples: samplesOfTable(lean.records) };
}

export function libraryDecode(bytes: Uint8Array): { fit: ParsedFit; samples: Samples } {
  const fit = decode(bytes);
  const { records, duplicates } = sortedRecords(fit.records ?? []);
  return {
    fit,
    samples: {
      timestamps: Float64Array.from(records, (r) => r.t),
      channels: channelsOf(records, readDeveloperFields(fit, bytes)),
      duplicates,
    },
  };
}

/** Whether the lean path decodes this file (it declines some; parseFit then uses the library path). For tests. */
export function leanDecodes(bytes: Uint8Array): boolean {
  return leanDecode(bytes) !== undefined;
}

/** The record table's rows with a timestamp, ascending, the last of equal timestamps kept, read into channels as READERS read records. */
function samplesOfTable(table: RecordTable): Samples {
  const column = (field: RecordField) => table.columns[RECORD_FIELDS.indexOf(field)];
  const time = column('timestamp') ?? new Float64Array(0);
  // Row numbers in time order (stable: file order within equal timestamps), then the last of each timestamp.
  let rows: number[] = [];
  let ascending = true;
  for (let k = 0; k < table.count; k++) {
    if (Number.isNaN(time[k]!)) continue;
    if (rows.length && !(time[k]! > time[rows[rows.length - 1]!]!)) ascending = false;
    rows.push(k);
  }
  const duplicates: number[] = [];
  if (!ascending) {
    rows.sort((a, b) => time[a]! - time[b]!);
    rows = rows.filter((k, i) => {
      const kept = i + 1 === rows.length || time[rows[i + 1]!] !== time[k];
      if (!kept) duplicates.push(time[k]!);
      return kept;
    });
  }
  const n = rows.length;
  const timestamps = new Float64Array(n);
  for (let i = 0; i < n; i++) timestamps[i] = time[rows[i]!]!;
  const pick = (read: (k: number) => number): Float64Array => {
    const out = new Float64Array(n);
    for (let i = 0; i < n; i++) out[i] = read(rows[i]!);
    return out;
  };
  /** `a`, else `b` (a field, else its fallback), NaN when neither. */
  const either = (a: Float64Array | undefined, b: Float64Array | undefined) =>
    a && b ? pick((k) => (Number.isNaN(a[k]!) ? b[k]! : a[k]!)) : a || b ? pick((k) => (a ?? b)![k]!) : undefined;
  const within = (a: Float64Array | undefined, limit: number) => a && pick((k) => (Math.abs(a[k]!) <= limit ? a[k]! : Number.NaN));
  const plain = (a: Float64Array | undefined) => a && pick((k) => a[k]!);
  const cadence = column('cadence');
  const fraction = column('fractional_cadence');
  const all: Record<Channel, Float64Array | undefined> = {
    power: plain(column('power')),
    heart_rate: plain(column('heart_rate')),
    speed: either(column('enhanced_speed'), column('speed')),
    cadence:
      cadence &&
      pick((k) => (Number.isNaN(cadence[k]!) ? Number.NaN : cadence[k]! + (fraction && !Number.isNaN(fraction[k]!) ? fraction[k]! : 0))),
    altitude: either(column('enhanced_altitude'), column('altitude')),
    distance: plain(column('distance')),
    latitude: within(column('position_lat'), 90),
    longitude: within(column('position_long'), 180),
    temperature: plain(column('temperature')),
    core_temperature: plain(column('core_temperature')),
    smo2: plain(column('saturated_hemoglobin_percent')),
    respiration_rate: either(column('enhanced_respiration_rate'), column('respiration_rate')),
  };
  const channels: Samples['channels'] = {};
  for (const channel of CHANNELS) if (all[channel]) channels[channel] = all[channel];
  return { timestamps, channels, duplicates };
}

// ─── Records ─────────────────────────────────────────────────────────────────────────────────────

interface TimedRecord {
  t: number;
  r: Fields;
}

/** Records with a timestamp, ascending; of several with the same timestamp the last in the file wins (the others' timestamps in `duplicates`). */
function sortedRecords(records: object[]): { records: TimedRecord[]; duplicates: number[] } {
  const timed: TimedRecord[] = [];
  for (const record of records) {
    const t = time(fields(record), 'timestamp');
    if (t !== undefined) timed.push({ t, r: fields(record) });
  }
  timed.sort((a, b) => a.t - b.t); // stable: file order within equal timestamps
  const out: TimedRecord[] = [];
  const duplicates: number[] = [];
  for (const rec of timed) {
    if (out.length > 0 && out[out.length - 1]!.t === rec.t) {
      out[out.length - 1] = rec;
      duplicates.push(rec.t);
    } else out.push(rec);
  }
  return { records: out, duplicates };
}

type Reader = (r: Fields) => number | undefined;

/** How each channel is read from a record (fit-file-parser field names, units already SI). */
const READERS: Record<Channel, Reader> = {
  power: (r) => num(r, 'power'),
  heart_rate: (r) => num(r, 'heart_rate'),
  speed: (r) => num(r, 'enhanced_speed') ?? num(r, 'speed'),
  cadence: (r) => {
    const whole = num(r, 'cadence');
    return whole === undefined ? undefined : whole + (num(r, 'fractional_cadence') ?? 0);
  },
  altitude: (r) => num(r, 'enhanced_altitude') ?? num(r, 'altitude'),
  distance: (r) => num(r, 'distance'),
  latitude: (r) => inRange(num(r, 'position_lat'), 90),
  longitude: (r) => inRange(num(r, 'position_long'), 180),
  temperature: (r) => num(r, 'temperature'),
  core_temperature: (r) => num(r, 'core_temperature'),
  smo2: (r) => num(r, 'saturated_hemoglobin_percent'),
  respiration_rate: (r) => num(r, 'enhanced_respiration_rate') ?? num(r, 'respiration_rate'),
};

function inRange(v: number | undefined, limit: number): number | undefined {
  return v !== undefined && Math.abs(v) <= limit ? v : undefined;
}

/** Each channel's value per record: the native reader's, else the developer field's (developer-fields.ts readDeveloperFields). */
function channelsOf(records: TimedRecord[], developer: Partial<Record<Channel, Reader[]>>): Recording['channels'] {
  const channels: Recording['channels'] = {};
  for (const channel of CHANNELS) {
    const readers = [READERS[channel], ...(developer[channel] ?? [])];
    const values = new Float64Array(records.length);
    let present = false;
    for (const [i, { r }] of records.entries()) {
      let v: number | undefined;
      for (const read of readers) {
        v = read(r);
        if (v !== undefined) break;
      }
      values[i] = v ?? NaN;
      if (v !== undefined) present = true;
    }
    if (present) channels[channel] = values;
  }
  return channels;
}
