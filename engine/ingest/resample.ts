import type { Pause, Recording, SwimLength } from './recording.ts';
import type { Channel } from '../channels.ts';
import { MAX_ACTIVITY_SECONDS, tooLong } from './limits.ts';

/**
 * Resampling a Recording onto the regular 1 Hz grid the sample store and every curve use, as the
 * device meant its records (ingest rules version 2, engine/ingest/rules.ts).
 *
 * Grid second i is the instant `start + i·1000 ms` and stands for the bin [i s, i+1 s) after it.
 *
 * **When the timer ran.** A pause is what the file says: its timer stop … start events
 * (`rec.pauses`, engine/ingest/fit.ts). A file without timer events (CSV, some producers) has a
 * pause wherever two consecutive samples are more than MAX_FILL_SECONDS apart. Second i is paused
 * when its instant lies in a pause; `running[i]` is 1 for the others (the timer time).
 *
 * **Values.** value[i] = the last recorded (non-NaN) value among the samples in bin i. An empty bin
 * between two consecutive samples k, k+1 (bins b₀ < i < b₁) is filled when the timer ran through
 * the whole gap and the gap is at most MAX_FILL_SECONDS: devices that record "smart" (Garmin's
 * default) write a record only when something changes, so a gap inside a running timer means
 * "changed smoothly", not "stopped" (GoldenCheetah's Fix Gaps does the same up to 90 s):
 *   - linear between the two samples' values, per channel, where both bins have one;
 *   - held (sample k's value) where only bin b₀ has one, or when the gap starts at a standstill
 *     (bin b₀ records speed, power or cadence, and none of them shows motion: speed below
 *     STANDSTILL_SPEED, power and cadence 0 — the motion test of moving time, engine/ingest/
 *     summary.ts; a rider waiting at a light has no speed or power to interpolate towards the
 *     next record's, while a trainer that writes speed 0 under 250 W is not standing);
 *   - empty where bin b₀ has no value (a NaN, such as a dropped implausible sample, is never
 *     spread).
 * The seconds from the timer's start (the activity's start, or its restart after a pause) to the
 * first sample after it, when at most MAX_FILL_SECONDS, take that sample's values: a device that
 * writes a record at the end of a length or split (a pool swim) reports what those seconds were;
 * not so the cumulative `distance`, whose later value is not what it read before.
 * Paused seconds (a sample recorded there included, except the cumulative `distance`, whose value
 * at a rest is what was covered before it) and gaps longer than MAX_FILL_SECONDS stay empty
 * (NaN), as do the seconds after the last sample.
 * Curves count empty seconds as 0 (docs/architecture.md, "The engine's algorithms"); summaries skip them.
 *
 * O(n + length) per channel: one pass over the samples, one over the grid.
 */

/** The longest gap between two samples (s) inside a running timer that is filled rather than left empty. */
export const MAX_FILL_SECONDS = 90;

/** Below this speed (m/s) at the start of a gap the athlete stood still: the gap is held, not interpolated. */
export const STANDSTILL_SPEED = 0.5;

export type GridChannels = Partial<Record<Channel, Float64Array>>;

export interface Grid {
  /** Epoch ms of grid second 0: rec.start floored to a whole second. */
  start: number;
  /** Number of grid seconds (≥ 1). */
  length: number;
  /** One array of `length` per channel that has at least one value; NaN where there is none. */
  channels: GridChannels;
  /** 1 where the timer ran at that second, 0 where it was paused. Not stored: summaries use it. */
  running: Uint8Array;
  /** The pauses `running` was made from (the file's, or the long gaps of a file without timer events), epoch ms. */
  pauses: Pause[];
  /** A pool swim's: 1 in the seconds of its active lengths, its moving time (engine/ingest/summary.ts). */
  active?: Uint8Array;
}

export function resample(rec: Recording): Grid {
  const start = Math.floor(rec.start.getTime() / 1000) * 1000;
  const ts = rec.timestamps;
  const end = rec.end.getTime();
  const lastBin = ts.length > 0 ? Math.floor((ts[ts.length - 1]! - start) / 1000) : 0;
  const length = Math.max(1, Math.ceil((end - start) / 1000), lastBin + 1);
  if (length > MAX_ACTIVITY_SECONDS) throw tooLong(length); // (before a grid of that length is made)

  const bins = binOf(ts, start, length);
  const pauses = rec.pauses ?? gapPauses(ts);
  const running = runningSeconds(pauses, start, length);
  const fills = gapsToFill(ts, bins, pauses);
  const placed: GridChannels = {};
  for (const [name, values] of Object.entries(rec.channels) as [Channel, Float64Array][]) placed[name] = lastPerBin(values, bins, length);
  const standstill = standstillAt(placed, fills); // (before the filling below changes `placed`)
  const leads = leadIns(bins, running);
  const { channels: fromLengths, active } = rec.lengths
    ? lengthChannels(rec.lengths, start, length)
    : { channels: {} as GridChannels, active: undefined };
  const channels: GridChannels = {};
  for (const name of new Set([...Object.keys(placed), ...Object.keys(fromLengths)] as Channel[])) {
    let out = fromLengths[name];
    if (!out) {
      out = placed[name]!;
      fill(out, fills, standstill);
      if (name !== 'distance') backFill(out, leads); // a counter's later value is not what it read before
    }
    // A counter keeps its value: emptied, a rest's record would lose the distance covered before it.
    if (name !== 'distance') for (let i = 0; i < length; i++) if (!running[i]) out[i] = Number.NaN;
    if (out.some((v) => !Number.isNaN(v))) channels[name] = out;
  }
  return { start, length, channels, running, pauses, ...(active ? { active } : {}) };
}

/**
 * A pool swim's speed, cadence (strokes/min) and distance from its active lengths (rec.lengths): a
 * length [s, e) gives seconds ⌊s⌋ … ⌈e⌉ − 1 its own speed and stroke rate, and the distance counter
 * rises by the pool's length across them (reaching it at the length's last second); seconds in no
 * active length (rests) have none. The seconds of active lengths are the swim's moving time
 * (`active`), whatever their speed (a kick drill's 0.4 m/s is swimming). The records of a pool
 * swim are sparse and written late (a length's record may fall in the rest after it), while its
 * length messages are the device's own account of every length.
 */
function lengthChannels(lengths: readonly SwimLength[], start: number, length: number): { channels: GridChannels; active: Uint8Array } {
  const active = new Uint8Array(length);
  const speed = new Float64Array(length).fill(Number.NaN);
  const cadence = new Float64Array(length).fill(Number.NaN);
  const distance = new Float64Array(length).fill(Number.NaN);
  let covered = 0;
  for (const l of lengths) {
    const s = Math.max(0, Math.floor((l.start - start) / 1000));
    const e = Math.min(length, Math.max(s + 1, Math.ceil((l.end - start) / 1000)));
    for (let i = s; i < e; i++) {
      active[i] = 1;
      speed[i] = l.speed;
      if (l.cadence !== undefined) cadence[i] = l.cadence;
      distance[i] = covered + (l.distance * (i - s + 1)) / (e - s);
    }
    covered += l.distance;
  }
  const channels: GridChannels = { speed, distance };
  if (lengths.some((l) => l.cadence !== undefined)) channels.cadence = cadence;
  return { channels, active };
}

/** bins[k] = ⌊(ts[k] − start) / 1 s⌋, or −1 for a sample outside the grid. */
function binOf(ts: Float64Array, start: number, length: number): Int32Array {
  const bins = new Int32Array(ts.length);
  for (let k = 0; k < ts.length; k++) {
    const b = Math.floor((ts[k]! - start) / 1000);
    bins[k] = b >= 0 && b < length ? b : -1;
  }
  return bins;
}

/** For a file without timer events: every gap between consecutive samples longer than MAX_FILL_SECONDS, as a pause. */
function gapPauses(ts: Float64Array): Pause[] {
  const pauses: Pause[] = [];
  for (let k = 0; k + 1 < ts.length; k++) {
    // The pause starts at the sample before it, whose second is the last running one (runningSeconds).
    if (ts[k + 1]! - ts[k]! > MAX_FILL_SECONDS * 1000) pauses.push({ start: ts[k]!, end: ts[k + 1]! });
  }
  return pauses;
}

/**
 * running[i] = 0 when second i starts after a pause's start and before its end, else 1: the second
 * in which the timer stops is its last running one (it holds the record a device writes as it
 * stops, with the final distance). Pauses ascend.
 */
function runningSeconds(pauses: readonly Pause[], start: number, length: number): Uint8Array {
  const running = new Uint8Array(length).fill(1);
  for (const p of pauses) {
    const from = Math.max(0, Math.floor((p.start - start) / 1000) + 1);
    const to = Math.min(length, Math.floor((p.end - start) / 1000)); // the second in which it ends runs (it holds the restart's sample)
    if (to > from) running.fill(0, from, to);
  }
  return running;
}

/**
 * The gaps to fill, as pairs [b₀, b₁] of the bins of consecutive samples with empty bins between
 * them (b₁ − b₀ ≥ 2), at most MAX_FILL_SECONDS apart, and no pause overlapping the time between them.
 */
function gapsToFill(ts: Float64Array, bins: Int32Array, pauses: readonly Pause[]): Int32Array {
  const out: number[] = [];
  let p = 0; // the first pause that may end after the current sample
  for (let k = 0; k + 1 < ts.length; k++) {
    const b0 = bins[k]!;
    const b1 = bins[k + 1]!;
    if (b0 < 0 || b1 < 0 || b1 - b0 < 2) continue;
    if (ts[k + 1]! - ts[k]! > MAX_FILL_SECONDS * 1000) continue;
    while (p < pauses.length && pauses[p]!.end <= ts[k]!) p++;
    if (p < pauses.length && pauses[p]!.start < ts[k + 1]!) continue; // the timer stopped in between
    out.push(b0, b1);
  }
  return Int32Array.from(out);
}

/**
 * The lead-ins to back-fill, as pairs [a, b]: a is a second at which the timer starts running (0, or
 * the first running second after a pause) with no sample in it, b the bin of the first sample at or
 * after it, when b − a ≤ MAX_FILL_SECONDS and the timer runs throughout.
 */
function leadIns(bins: Int32Array, running: Uint8Array): Int32Array {
  const hasSample = new Uint8Array(running.length);
  for (let k = 0; k < bins.length; k++) if (bins[k]! >= 0) hasSample[bins[k]!] = 1;
  const out: number[] = [];
  for (let a = 0; a < running.length; a++) {
    if (!running[a] || (a > 0 && running[a - 1]) || hasSample[a]) continue;
    let b = a + 1;
    while (b < running.length && b - a <= MAX_FILL_SECONDS && running[b] && !hasSample[b]) b++;
    if (b < running.length && b - a <= MAX_FILL_SECONDS && running[b] && hasSample[b]) out.push(a, b);
  }
  return Int32Array.from(out);
}

/** Each lead-in [a, b) takes the value at b (when it has one). */
function backFill(x: Float64Array, leads: Int32Array) {
  for (let g = 0; g < leads.length; g += 2) {
    const v = x[leads[g + 1]!]!;
    if (!Number.isNaN(v)) x.fill(v, leads[g]!, leads[g + 1]!);
  }
}

/**
 * Per gap to fill, 1 when it starts at a standstill: bin b₀ records at least one of speed, power and
 * cadence, and none shows motion (speed ≥ STANDSTILL_SPEED, power > 0, cadence > 0). An unknown
 * value (NaN) is no evidence either way.
 */
function standstillAt(placed: GridChannels, fills: Int32Array): Uint8Array {
  const out = new Uint8Array(fills.length / 2);
  const motion = (
    [
      ['speed', STANDSTILL_SPEED],
      ['power', Number.MIN_VALUE],
      ['cadence', Number.MIN_VALUE],
    ] as const
  )
    .filter(([name]) => placed[name])
    .map(([name, threshold]) => ({ placed: placed[name]!, threshold }));
  if (motion.length === 0) return out;
  for (let g = 0; g < out.length; g++) {
    const b0 = fills[2 * g]!;
    let known = false;
    let moving = false;
    for (const { placed, threshold } of motion) {
      const v = placed[b0]!;
      if (Number.isNaN(v)) continue;
      known = true;
      if (v >= threshold) moving = true;
    }
    if (known && !moving) out[g] = 1;
  }
  return out;
}

/** out[i] = the last non-NaN value among the samples of bin i (samples ascend), else NaN. */
function lastPerBin(values: Float64Array, bins: Int32Array, length: number): Float64Array {
  const placed = new Float64Array(length).fill(Number.NaN);
  for (let k = 0; k < values.length; k++) {
    const v = values[k]!;
    if (bins[k]! >= 0 && !Number.isNaN(v)) placed[bins[k]!] = v;
  }
  return placed;
}

/** Fill each gap's empty bins in place: linear between its ends, held from a standstill or towards a missing end, empty after a missing start. */
function fill(x: Float64Array, fills: Int32Array, standstill: Uint8Array) {
  for (let g = 0; g < standstill.length; g++) {
    const b0 = fills[2 * g]!;
    const b1 = fills[2 * g + 1]!;
    const v0 = x[b0]!;
    if (Number.isNaN(v0)) continue;
    const v1 = x[b1]!;
    if (standstill[g] || Number.isNaN(v1)) {
      x.fill(v0, b0 + 1, b1);
      continue;
    }
    const step = (v1 - v0) / (b1 - b0);
    for (let i = b0 + 1; i < b1; i++) x[i] = v0 + step * (i - b0);
  }
}
