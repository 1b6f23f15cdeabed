/**
 * When a FIT file's timer was stopped (engine/ingest/fit.ts): its timer events as pauses, and each
 * session's pauses, those its records contradict left out.
 */
import type { Pause } from './recording.ts';
import { fields, time } from './fit-fields.ts';

const TIMER_STARTS = new Set(['start']);
const TIMER_STOPS = new Set(['stop', 'stop_all', 'stop_disable', 'stop_disable_all']);

/**
 * When the file's timer was stopped, from its timer events (event `timer`: `stop`/`stop_all`/
 * `stop_disable`/`stop_disable_all` … `start`), ascending; undefined when the file has no timer
 * event at all (the caller then lets resampling infer pauses from gaps). Before a first `start`
 * event the timer is stopped; a stop never followed by a start lasts to the end.
 */
export function timerPauses(events: object[]): Pause[] | undefined {
  const timer = timerEvents(events);
  if (timer.length === 0) return undefined;
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

/** The file's timer events (event `timer`), ascending (stable: file order within an instant). */
export function timerEvents(events: object[]): { t: number; type: string }[] {
  const timer: { t: number; type: string }[] = [];
  for (const message of events) {
    const e = fields(message);
    const t = time(e, 'timestamp');
    const type = e['event_type'];
    if ((e['event'] === 'timer' || e['event'] === 0) && t !== undefined && typeof type === 'string') timer.push({ t, type });
  }
  return timer.sort((a, b) => a.t - b.t);
}

/**
 * The file's pauses within one session's [start, end], dropping a pause that the records contradict:
 * a device writes few records while its timer is stopped (a pool swim's rest has one), so a pause
 * with records at least every other second inside it (more than PAUSE_EDGE_MS from both of its
 * ends, two at least) did not stop the recording: a producer's stop event written at the timer time
 * rather than the wall-clock time, as one Sigma file does, followed by half a minute of records.
 */
export function sessionPauses(pauses: Pause[], start: number, end: number, timestamps: Float64Array): Pause[] {
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
