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
 * fit-file-parser as a whole (./fit-samples.ts).
 *
 * This module puts a recording together; the file's parts are read by its neighbours: the decode
 * (./fit-decode.ts), records as samples (./fit-samples.ts), sessions, laps and pool lengths
 * (./fit-sessions.ts), timer pauses (./fit-pauses.ts), devices (./fit-devices.ts), all through the
 * field access of ./fit-fields.ts.
 */
import { IngestError, type DroppedRecords, type Recording } from './recording.ts';
import { CHANNELS } from '../channels.ts';
import { leanDecode, libraryDecode, type Samples } from './fit-samples.ts';
import { lapSpans, sessionSpans, swimLengths, utcOffset } from './fit-sessions.ts';
import { sessionPauses, timerEvents, timerPauses } from './fit-pauses.ts';
import { deviceNames } from './fit-devices.ts';

export { leanDecodes } from './fit-samples.ts';
export { timerPauses };

/**
 * Parse a FIT file into one Recording per session that has records (a multisport file gives several).
 *
 * A session's records and laps are those from its start_time to its end (see SessionSpan, ./fit-sessions.ts) and
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
  const timer = timerEvents(fit.events ?? []).map((e) => ({ t: e.t, running: e.type === 'start' }));

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
      facts: {
        ...(session.timestamp === undefined ? {} : { timestamp: session.timestamp }),
        ...(session.poolLength === undefined ? {} : { poolLength: session.poolLength }),
        timerEvents: timer,
        fractionalCadence: session.fractionalCadence,
      },
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
