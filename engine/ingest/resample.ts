import type { Channel, Recording } from './recording.ts';
import { MAX_ACTIVITY_SECONDS, tooLong } from './limits.ts';

/**
 * Resampling a Recording onto the regular 1 Hz grid the sample store and every curve use.
 *
 * Grid second i is the instant `start + i·1000 ms` and stands for the bin [i s, i+1 s) after it:
 *
 *   value[i] = the last recorded (non-NaN) value among the samples in the bin;
 *              else, when the bin is empty, the value of the bin of the previous sample if the gap
 *              from that sample to the next one is ≤ MAX_HOLD_SECONDS (smart recording: a device
 *              writes a record only when something changes, so a short gap means "unchanged");
 *              else NaN (a pause or a dropout stays empty).
 *
 * Decided here:
 * - A sample whose value is NaN is a recorded absence (the sensor sent nothing), not a missing
 *   record: its bin stays NaN, and holding copies that NaN (a NaN is never held across).
 * - A gap is the time between two consecutive samples (any channel), or between the last sample
 *   and `rec.end`. A gap longer than MAX_HOLD_SECONDS is empty as a whole, not held for its
 *   first 5 s: a pause is not stretched.
 * - Samples before the grid origin (there are none in a valid Recording) are left out.
 *
 * O(n + length) per channel: one pass over the samples, one over the grid.
 */

/** The longest gap between two samples (s) that counts as "value unchanged" rather than a pause. */
export const MAX_HOLD_SECONDS = 5;

export type GridChannels = Partial<Record<Channel, Float64Array>>;

export interface Grid {
  /** Epoch ms of grid second 0: rec.start floored to a whole second. */
  start: number;
  /** Number of grid seconds (≥ 1). */
  length: number;
  /** One array of `length` per channel that has at least one value; NaN where there is none. */
  channels: GridChannels;
}

export function resample(rec: Recording): Grid {
  const start = Math.floor(rec.start.getTime() / 1000) * 1000;
  const ts = rec.timestamps;
  const end = rec.end.getTime();
  const lastBin = ts.length > 0 ? Math.floor((ts[ts.length - 1]! - start) / 1000) : 0;
  const length = Math.max(1, Math.ceil((end - start) / 1000), lastBin + 1);
  if (length > MAX_ACTIVITY_SECONDS) throw tooLong(length); // (before a grid of that length is made)

  const bins = binOf(ts, start, length);
  const source = holdSources(ts, bins, end, length);
  const channels: GridChannels = {};
  for (const [name, values] of Object.entries(rec.channels) as [Channel, Float64Array][]) {
    const placed = lastPerBin(values, bins, length);
    const out = gather(placed, source);
    if (out.some((v) => !Number.isNaN(v))) channels[name] = out;
  }
  return { start, length, channels };
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

/**
 * source[i] = the grid second whose value second i takes: i itself when a sample falls in it; the
 * previous sample's second across a gap ≤ MAX_HOLD_SECONDS; −1 (empty) otherwise. Depends on the
 * timestamps only, so it is computed once for all channels.
 */
function holdSources(ts: Float64Array, bins: Int32Array, end: number, length: number): Int32Array {
  const source = new Int32Array(length).fill(-1);
  const maxGap = MAX_HOLD_SECONDS * 1000;
  for (let k = 0; k < ts.length; k++) {
    const b = bins[k]!;
    if (b < 0) continue;
    source[b] = b;
    // The gap to the next sample (or to the end of the recording): held only when short.
    const next = k + 1 < ts.length ? ts[k + 1]! : end;
    const nextBin = k + 1 < ts.length ? bins[k + 1]! : length;
    if (next - ts[k]! > maxGap) continue;
    for (let i = b + 1; i < nextBin; i++) source[i] = b; // the empty seconds between the two samples' bins
  }
  return source;
}

/** placed[i] = the last non-NaN value among the samples of bin i (samples ascend), else NaN. */
function lastPerBin(values: Float64Array, bins: Int32Array, length: number): Float64Array {
  const placed = new Float64Array(length).fill(Number.NaN);
  for (let k = 0; k < values.length; k++) {
    const v = values[k]!;
    if (bins[k]! >= 0 && !Number.isNaN(v)) placed[bins[k]!] = v;
  }
  return placed;
}

/** out[i] = placed[source[i]], NaN where source[i] = −1. */
function gather(placed: Float64Array, source: Int32Array): Float64Array {
  const out = new Float64Array(source.length);
  for (let i = 0; i < source.length; i++) out[i] = source[i]! < 0 ? Number.NaN : placed[source[i]!]!;
  return out;
}
