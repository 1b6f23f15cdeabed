/**
 * FIT activity files → Recordings (engine/ingest/recording.ts): one per session, CRC-checked, with the
 * session's records (in SI units) and laps. Pure CPU work with no I/O and no shared state, so it
 * can run in the piscina pool.
 *
 * Decoding is fit-file-parser's (docs/architecture.md, "Data flow"): `force: false` makes it verify the header and file
 * CRCs and reject a truncated or corrupt file instead of returning what it could read. Its unit
 * options give m/s, m and °C; latitude/longitude come out in degrees (it converts semicircles).
 * It does not expand FIT component fields, so `speed`/`altitude` are read when the enhanced
 * fields are absent (fitsdk would expand one into the other).
 *
 * The record messages (thousands per file) are normally decoded by the lean path
 * (engine/ingest/fit-records.ts) into columns, value for value what fit-file-parser gives, and
 * fit-file-parser decodes the rest of the file; files that path declines are decoded by
 * fit-file-parser as a whole.
 */
import FitParser, { getFitGarminProductDisplayName, getFitGarminProductName, type ParsedFit } from 'fit-file-parser';
import { sportFromFit } from '../../lib/sports.ts';
import {
  DEVICE_SUMMARY_FIELDS,
  IngestError,
  type DeviceSummary,
  type DroppedRecords,
  type Lap,
  type Pause,
  type Recording,
  type SwimLength,
} from './recording.ts';
import { CHANNELS, type Channel } from '../channels.ts';
import { leanDecodeFit, RECORD_FIELDS, type RecordField, type RecordTable } from './fit-records.ts';
import { developerFieldsConcernChannels, readDeveloperFields } from './developer-fields.ts';

type Fields = Record<string, unknown>;

const PARSER_OPTIONS = {
  speedUnit: 'm/s',
  lengthUnit: 'm',
  temperatureUnit: 'celsius',
  elapsedRecordField: true,
  mode: 'list',
} as const;

/** Real UTC offsets lie within −12 h … +14 h; a `local_timestamp` further off is a device clock error. */
const MAX_UTC_OFFSET_SECONDS = 14 * 3600;

/**
 * Parse a FIT file into one Recording per session that has records (a multisport file gives several).
 *
 * A session's records and laps are those from its start_time to its end (see SessionSpan) and
 * before the next session's start. Its `end` is start + total_elapsed_time, or the last record when
 * that is later (devices round the elapsed time or leave a pause out of it: records would otherwise
 * fall outside [start, end]) or when the session has no elapsed time. Records are ascending by
 * timestamp; of duplicated timestamps the last in the file is kept. A session without records
 * gives no Recording.
 *
 * Rejects with IngestError: `empty_file` (zero bytes), `invalid_fit` (not FIT, truncated, CRC
 * mismatch, undecodable), `no_activity` (a valid FIT file without a session with records, e.g. a
 * settings or monitoring file).
 */
export async function parseFit(bytes: Uint8Array | Buffer, options: { decoder?: 'lean' | 'library' } = {}): Promise<Recording[]> {
  // `decoder: 'library'` forces fit-file-parser for every message (the lean path's reference in tests and benchmarks).
  if (bytes.byteLength === 0) throw new IngestError('empty_file', 'The file is empty (0 bytes).');
  const { fit, samples } = (options.decoder !== 'library' && leanDecode(bytes)) || libraryDecode(bytes);

  const sessions = sessionSpans(fit);
  if (sessions.length === 0) {
    throw new IngestError('no_activity', 'The FIT file contains no activity session (it may be a settings, course or monitoring file).');
  }
  const laps = lapSpans(fit.laps ?? []);
  const utcOffsetSeconds = utcOffset(fit);
  const devices = deviceNames(fit);
  const pauses = timerPauses(fit.events ?? []);

  const recordings: Recording[] = [];
  /** Each recording's run of samples [from, to), to count the records left out (droppedRecords). */
  const runs: [number, number][] = [];
  const times = samples.timestamps;
  for (const [i, session] of sessions.entries()) {
    const next = sessions[i + 1]?.start ?? Infinity;
    const inSpan = (t: number) => t >= session.start && t <= session.selectionEnd && t < next;
    // The session's records: timestamps ascend, so they are one run [from, to).
    let from = 0;
    while (from < times.length && !(times[from]! >= session.start)) from++;
    let to = from;
    while (to < times.length && inSpan(times[to]!)) to++;
    if (to === from) continue;
    const lastSample = times[to - 1]!;
    const end = session.elapsedEnd === undefined ? lastSample : Math.max(session.elapsedEnd, lastSample);
    const channels: Recording['channels'] = {};
    for (const channel of CHANNELS) {
      const values = samples.channels[channel];
      if (!values) continue;
      let present = false;
      for (let k = from; k < to && !present; k++) present = !Number.isNaN(values[k]!);
      if (present) channels[channel] = values.slice(from, to);
    }
    const timestamps = times.slice(from, to);
    recordings.push({
      sport: session.sport,
      start: new Date(session.start),
      end: new Date(end),
      utcOffsetSeconds,
      devices: [...devices],
      laps: laps
        .filter((lap) => inSpan(lap.start.getTime()))
        .map((lap) => ({ ...lap, start: new Date(lap.start), end: new Date(lap.end) })),
      timestamps,
      channels,
      ...(pauses ? { pauses: sessionPauses(pauses, session.start, end, timestamps) } : {}),
      ...(session.poolLength !== undefined
        ? swimLengths(fit.lengths ?? [], session.start, Math.min(session.selectionEnd, next), session.poolLength)
        : {}),
      deviceSummary: session.deviceSummary,
    });
    runs.push([from, to]);
  }
  if (recordings.length === 0) {
    throw new IngestError('no_activity', 'The FIT file has an activity session but no recorded samples (no record messages).');
  }
  countDropped(recordings, runs, samples);
  return recordings;
}

/**
 * Each recording's `dropped`: the records of the file with a duplicated timestamp (within its run of
 * samples), and the records no session took (`outside_session`: a clock jump, records long after
 * the end), counted on the recording before them (the first one for records before every session).
 */
function countDropped(recordings: Recording[], runs: [number, number][], samples: Samples) {
  const counts: DroppedRecords[] = recordings.map(() => ({}));
  const times = samples.timestamps;
  // owner[k]: the recording whose run starts last at or before sample k (the first one before every run).
  const owner = new Int32Array(times.length);
  for (let k = 0, r = 0; k < times.length; k++) {
    while (r + 1 < runs.length && runs[r + 1]![0] <= k) r++;
    owner[k] = r;
    const [from, to] = runs[r]!;
    if (k < from || k >= to) counts[r]!.outside_session = (counts[r]!.outside_session ?? 0) + 1;
  }
  for (const t of samples.duplicates) {
    // The kept sample of the same timestamp (the first at or after t): the duplicate belongs where its twin went.
    let lo = 0;
    let hi = times.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (times[mid]! < t) lo = mid + 1;
      else hi = mid;
    }
    const c = counts[owner[Math.min(lo, times.length - 1)]!]!;
    c.duplicate_timestamp = (c.duplicate_timestamp ?? 0) + 1;
  }
  for (const [i, rec] of recordings.entries()) rec.dropped = counts[i]!;
}

/**
 * A pool swim's active lengths within [from, to] (FIT length messages whose length_type is active and
 * whose start lies in the session), each covering the pool's length at the device's own speed and
 * stroke rate (a drill length, which has neither, at the pool's length over its time and no stroke
 * rate), ascending; `{}` when the session has none (the records are used as they are).
 */
function swimLengths(messages: object[], from: number, to: number, poolLength: number): { lengths?: SwimLength[] } {
  const lengths: SwimLength[] = [];
  for (const message of messages) {
    const l = fields(message);
    const start = time(l, 'start_time');
    const elapsed = num(l, 'total_elapsed_time');
    const speed = num(l, 'avg_speed');
    if (l['length_type'] !== 'active' || start === undefined || !(start >= from && start <= to) || elapsed === undefined || !(elapsed > 0))
      continue;
    // A drill length has no speed or strokes of its own (0): it covered the pool in its time, at an unknown stroke rate.
    const cadence = num(l, 'avg_swimming_cadence');
    lengths.push({
      start,
      end: start + elapsed * 1000,
      speed: speed !== undefined && speed > 0 ? speed : poolLength / elapsed,
      cadence: cadence !== undefined && cadence > 0 ? cadence : undefined,
      distance: poolLength,
    });
  }
  lengths.sort((a, b) => a.start - b.start);
  // A drill set's lengths can all carry the set's start (two 53 s lengths both from 449 s): a length
  // starting more than a second before the previous one ends follows it instead.
  for (let i = 1; i < lengths.length; i++) {
    const previous = lengths[i - 1]!;
    const l = lengths[i]!;
    if (l.start < previous.end - 1000) lengths[i] = { ...l, start: previous.end, end: previous.end + (l.end - l.start) };
  }
  return lengths.length ? { lengths } : {};
}

const TIMER_STARTS = new Set(['start']);
const TIMER_STOPS = new Set(['stop', 'stop_all', 'stop_disable', 'stop_disable_all']);

/**
 * When the file's timer was stopped, from its timer events (event `timer`: `stop`/`stop_all`/
 * `stop_disable`/`stop_disable_all` … `start`), ascending; undefined when the file has no timer
 * event at all (the caller then lets resampling infer pauses from gaps). Before a first `start`
 * event the timer is stopped; a stop never followed by a start lasts to the end.
 */
export function timerPauses(events: object[]): Pause[] | undefined {
  const timer: { t: number; type: string }[] = [];
  for (const message of events) {
    const e = fields(message);
    const t = time(e, 'timestamp');
    const type = e['event_type'];
    if ((e['event'] === 'timer' || e['event'] === 0) && t !== undefined && typeof type === 'string') timer.push({ t, type });
  }
  if (timer.length === 0) return undefined;
  timer.sort((a, b) => a.t - b.t); // stable: file order within an instant
  const pauses: Pause[] = [];
  let stoppedAt: number | undefined = TIMER_STARTS.has(timer[0]!.type) ? -Infinity : undefined;
  for (const { t, type } of timer) {
    if (TIMER_STARTS.has(type) && stoppedAt !== undefined) {
      if (t > stoppedAt) pauses.push({ start: stoppedAt, end: t });
      stoppedAt = undefined;
    } else if (TIMER_STOPS.has(type) && stoppedAt === undefined) stoppedAt = t;
  }
  if (stoppedAt !== undefined) pauses.push({ start: stoppedAt, end: Infinity });
  return pauses;
}

/**
 * The file's pauses within one session's [start, end], dropping a pause that the records contradict:
 * a device writes few records while its timer is stopped (a pool swim's rest has one), so a pause
 * with records at least every other second inside it (more than PAUSE_EDGE_MS from both of its
 * ends, two at least) did not stop the recording: a producer's stop event written at the timer time
 * rather than the wall-clock time, as one Sigma file does, followed by half a minute of records.
 */
function sessionPauses(pauses: Pause[], start: number, end: number, timestamps: Float64Array): Pause[] {
  const out: Pause[] = [];
  for (const p of pauses) {
    const from = Math.max(p.start, start);
    const to = Math.min(p.end, end + 1000);
    if (!(to > from)) continue;
    let inside = 0;
    for (const t of timestamps) if (t > from + PAUSE_EDGE_MS && t < to - PAUSE_EDGE_MS) inside++;
    const interior = Math.max(0, (to - from - 2 * PAUSE_EDGE_MS) / 1000);
    if (inside < 2 || inside < interior / 2) out.push({ start: from, end: to });
  }
  return out;
}

/** How far inside a pause a record may lie (its stop or restart second) without counting against it. */
const PAUSE_EDGE_MS = 1000;

/**
 * Every record of the file with a timestamp, ascending (of several with the same timestamp the last
 * in the file), and each channel's value in each (NaN where the record has none; a channel no
 * record has is absent or all NaN).
 */
interface Samples {
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
function leanDecode(bytes: Uint8Array): { fit: ParsedFit; samples: Samples } | undefined {
  const lean = leanDecodeFit(bytes);
  if (!lean) return undefined;
  // The rest is a few dozen messages; any failure there is left to the library path to report.
  const rest = attempt(lean.rest.buffer as ArrayBuffer, false);
  if (!('fit' in rest)) return undefined;
  const fit = rest.fit;
  if (developerFieldsConcernChannels(fit)) return undefined;
  return { fit, samples: samplesOfTable(lean.records) };
}

function libraryDecode(bytes: Uint8Array): { fit: ParsedFit; samples: Samples } {
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

/**
 * fit-file-parser's decode, its failures turned into `invalid_fit`. With `force: false` it reports
 * header, size and CRC failures through its callback before decoding any message, and throws on a
 * message it cannot decode strictly. A thrown failure therefore comes from a file whose CRC is
 * good; among them is a quirk any producer can write (a developer field whose base type lacks the
 * endian bit, as Garmin's own JS SDK constants give it), so such a file is decoded once
 * more leniently (`force: true`: undecodable developer fields are skipped) before being refused.
 */
function decode(bytes: Uint8Array): ParsedFit {
  // A private copy: the parser gets an ArrayBuffer of exactly these bytes, whatever `bytes` views.
  const buffer = new Uint8Array(bytes).buffer;
  const strict = attempt(buffer, false);
  if ('fit' in strict) return strict.fit;
  if (strict.thrown) {
    const lenient = attempt(buffer, true);
    if ('fit' in lenient) return lenient.fit;
  }
  throw new IngestError('invalid_fit', describeFailure(strict.failure, bytes.byteLength));
}

function attempt(buffer: ArrayBuffer, force: boolean): { fit: ParsedFit } | { failure: unknown; thrown: boolean } {
  let result: ParsedFit | undefined;
  let reported: unknown;
  try {
    new FitParser({ ...PARSER_OPTIONS, force }).parse(buffer, (error, data) => {
      reported = error;
      result = data;
    });
  } catch (error) {
    return { failure: error ?? 'decoding failed', thrown: true };
  }
  if (reported !== undefined || result === undefined) return { failure: reported ?? 'decoding failed', thrown: false };
  return { fit: result };
}

function describeFailure(failure: unknown, size: number): string {
  const reason = failure instanceof Error ? failure.message : String(failure ?? 'decoding failed');
  const known: Record<string, string> = {
    'File to small to be a FIT file': `is too small to be a FIT file (${size} bytes)`,
    'Incorrect header size': 'does not start with a FIT file header',
    "Missing '.FIT' in header": "lacks the '.FIT' signature in its header",
    'Header CRC mismatch': 'has a corrupt header (header CRC mismatch)',
    'File data exceeds input length': 'is truncated (its header announces more data than the file contains)',
    'File CRC missing': 'is truncated (the final CRC is missing)',
    'File CRC mismatch': 'is corrupt (file CRC mismatch)',
  };
  return `The file is not a valid FIT file: it ${known[reason] ?? `could not be decoded (${reason})`}.`;
}

// ─── Field access ────────────────────────────────────────────────────────────────────────────────

function num(m: Fields, key: string): number | undefined {
  const v = m[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

function time(m: Fields, key: string): number | undefined {
  const v = m[key];
  return v instanceof Date && Number.isFinite(v.getTime()) ? v.getTime() : undefined;
}

function str(m: Fields, key: string): string | undefined {
  const v = m[key];
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
}

const fields = (m: object) => m as Fields;

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

// ─── Sessions and laps ──────────────────────────────────────────────────────────────────────────

interface SessionSpan {
  sport: string;
  /** Session start_time, epoch ms. */
  start: number;
  /** start + total_elapsed_time, when the session has it. */
  elapsedEnd: number | undefined;
  /**
   * The last instant whose records belong to the session: start + total_elapsed_time rounded up to
   * the whole second (records carry whole seconds), or the session's own timestamp when later
   * (some devices' elapsed time leaves out a pause); unbounded when the session has neither.
   */
  selectionEnd: number;
  deviceSummary: DeviceSummary;
  /** A pool swim's pool length (m): the session's pool_length (only pool swims have one). */
  poolLength: number | undefined;
}

function sessionSpans(fit: ParsedFit): SessionSpan[] {
  const sportMessages = fit.sports ?? [];
  const onlySport = sportMessages.length === 1 ? fields(sportMessages[0]!) : undefined;
  const spans: SessionSpan[] = [];
  for (const message of fit.sessions ?? []) {
    const s = fields(message);
    const elapsed = num(s, 'total_elapsed_time');
    const stamp = time(s, 'timestamp');
    const start = time(s, 'start_time') ?? (stamp !== undefined && elapsed !== undefined ? stamp - elapsed * 1000 : undefined);
    if (start === undefined) continue;
    const elapsedEnd = elapsed !== undefined && elapsed >= 0 ? start + elapsed * 1000 : undefined;
    const bounds = [elapsedEnd === undefined ? undefined : Math.ceil(elapsedEnd / 1000) * 1000, stamp].filter(
      (t): t is number => t !== undefined && t >= start,
    );
    const hasSport = s['sport'] !== undefined;
    const sport = hasSport
      ? sportFromFit(sportName(s['sport']), sportName(s['sub_sport']))
      : sportFromFit(sportName(onlySport?.['sport']), sportName(onlySport?.['sub_sport']));
    const pool = num(s, 'pool_length');
    const poolLength = pool !== undefined && pool > 0 ? pool : undefined;
    spans.push({
      sport,
      start,
      elapsedEnd,
      selectionEnd: bounds.length > 0 ? Math.max(...bounds) : Infinity,
      deviceSummary: deviceSummary(s),
      poolLength,
    });
  }
  return spans.sort((a, b) => a.start - b.start);
}

/** The session message's own values (recording.ts DEVICE_SUMMARY_FIELDS): enhanced speeds where present, fractional cadence added. */
function deviceSummary(s: Fields): DeviceSummary {
  const out: DeviceSummary = {};
  for (const field of DEVICE_SUMMARY_FIELDS) {
    const v = field === 'avg_speed' || field === 'max_speed' ? (num(s, `enhanced_${field}`) ?? num(s, field)) : num(s, field);
    if (v !== undefined) out[field] = v;
  }
  const fraction = num(s, 'avg_fractional_cadence');
  if (out.avg_cadence !== undefined && fraction !== undefined) out.avg_cadence += fraction;
  return out;
}

function sportName(v: unknown): string | number | undefined {
  return typeof v === 'string' || typeof v === 'number' ? v : undefined;
}

function lapSpans(laps: object[]): Lap[] {
  const out: Lap[] = [];
  for (const message of laps) {
    const l = fields(message);
    const start = time(l, 'start_time');
    if (start === undefined) continue;
    const elapsed = num(l, 'total_elapsed_time');
    const stamp = time(l, 'timestamp');
    const end = elapsed !== undefined && elapsed >= 0 ? start + elapsed * 1000 : stamp !== undefined && stamp >= start ? stamp : start;
    const ascent = num(l, 'total_ascent');
    const descent = num(l, 'total_descent');
    out.push({
      start: new Date(start),
      end: new Date(end),
      ...(ascent !== undefined ? { totalAscent: ascent } : {}),
      ...(descent !== undefined ? { totalDescent: descent } : {}),
    });
  }
  return out.sort((a, b) => a.start.getTime() - b.start.getTime());
}

/** The activity message's local_timestamp − timestamp, to the nearest 15 minutes; 0 when absent or implausible. */
function utcOffset(fit: ParsedFit): number {
  for (const message of fit.messages?.activity ?? []) {
    const a = fields(message);
    const utc = time(a, 'timestamp');
    const local = time(a, 'local_timestamp');
    if (utc === undefined || local === undefined) continue;
    const offset = Math.round((local - utc) / 1000 / 900) * 900;
    return Math.abs(offset) <= MAX_UTC_OFFSET_SECONDS ? offset + 0 : 0; // + 0: no −0
  }
  return 0;
}

// ─── Devices ────────────────────────────────────────────────────────────────────────────────────

/** Display names of FIT manufacturers that title-casing their profile name gets wrong. */
const MANUFACTURERS: Record<string, string> = {
  '4iiiis': '4iiii',
  bryton: 'Bryton',
  concept2: 'Concept2',
  coros: 'COROS',
  favero_electronics: 'Favero',
  polar_electro: 'Polar',
  saris: 'Saris',
  sigmasport: 'Sigma',
  sram: 'SRAM',
  srm: 'SRM',
  stages_cycling: 'Stages',
  the_sufferfest: 'The Sufferfest',
  wahoo_fitness: 'Wahoo',
  zwift_byte: 'Zwift',
};

/** Manufacturers whose `product` field holds a Garmin product id (FIT profile: the garmin_product sub-field). */
const GARMIN_PRODUCT_MAKERS = new Set(['garmin', 'dynastream', 'dynastream_oem', 'tacx']);

/** Garmin sensors whose profile names read badly. */
const GARMIN_PRODUCTS: Record<string, string> = {
  hrm1: 'HRM',
  hrm2ss: 'HRM2-SS',
  hrm3ss: 'HRM3-SS',
  hrm_run: 'HRM-Run',
  hrm_tri: 'HRM-Tri',
  hrm4_run: 'HRM4-Run',
  hrm_dual: 'HRM-Dual',
  hrm_pro: 'HRM-Pro',
  hrm_pro_plus: 'HRM-Pro Plus',
  hrm_fit: 'HRM-Fit',
  bsm: 'Speed Sensor',
  bcm: 'Cadence Sensor',
  gen3_bsm: 'Speed Sensor 2',
  gen3_bcm: 'Cadence Sensor 2',
  vector_ss: 'Vector S',
  vector_cp: 'Vector',
  swim: 'Swim',
};

function titleCase(name: string): string {
  return name
    .split('_')
    .filter((w) => w !== '')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join(' ');
}

function garminProductName(product: unknown): string | undefined {
  const id = typeof product === 'number' || typeof product === 'string' ? product : undefined;
  const name = getFitGarminProductName(id)?.replace(/_single_byte_product_id$/, '');
  if (!name) return undefined;
  return GARMIN_PRODUCTS[name] ?? getFitGarminProductDisplayName(id) ?? titleCase(name);
}

/**
 * "Manufacturer Product" for the file's creator (file_id) and each device_info entry, in file order,
 * without duplicates. The head unit's own sub-devices (device_info with source_type `local` other
 * than the creator: barometer, GPS chip, optical HR) are part of it and not listed; entries without
 * a known manufacturer are skipped; a product is named when the file or the FIT profile names it
 * (a bare product number means nothing to a reader and is left out).
 */
function deviceNames(fit: ParsedFit): string[] {
  const names: string[] = [];
  const add = (m: Fields) => {
    const maker = m['manufacturer'];
    if (typeof maker !== 'string' || maker === '') return;
    const manufacturer = MANUFACTURERS[maker] ?? titleCase(maker);
    const productName = str(m, 'product_name');
    const product = GARMIN_PRODUCT_MAKERS.has(maker)
      ? (garminProductName(m['product']) ?? (productName && !/^\d+$/.test(productName) ? productName : undefined))
      : productName && !/^\d+$/.test(productName)
        ? productName
        : undefined;
    const name =
      product && !product.toLowerCase().startsWith(manufacturer.toLowerCase()) ? `${manufacturer} ${product}` : (product ?? manufacturer);
    if (!names.includes(name)) names.push(name);
  };
  for (const fileId of fit.file_ids ?? []) add(fields(fileId));
  for (const info of fit.device_infos ?? []) {
    const d = fields(info);
    if (d['source_type'] === 'local' && d['device_index'] !== 'creator' && d['device_index'] !== 0) continue;
    add(d);
  }
  return names;
}
