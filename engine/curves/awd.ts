import { LEVEL_EPSILON } from './levels.ts';

/**
 * Accumulated work duration (AWD): for each intensity level k (engine/curves/levels.ts), the time spent at
 * or above it. On the 1 Hz grid one sample is one second, so
 *
 *   awd[k-1] = #{ i : levelOf(samples[i], step) ≥ k }      for k = 1 .. K
 *
 * with K the highest level any sample reaches; an empty array when no sample reaches level 1.
 * awd is non-increasing in k and awd[0] is the time at or above one step.
 *
 * Algorithm: a histogram of the samples by level, then a reverse cumulative sum. O(n + K).
 *
 * Decided here:
 * - NaN samples (no value: pauses, dropouts) and ±Infinity are not counted. Samples below level 1
 *   (zero, negative, less than one step) count towards no level.
 * - Levels above MAX_LEVEL throw a RangeError rather than allocating an array of that size: no
 *   physical power, speed or heart rate comes near it, so such a sample is corrupt data that the
 *   caller must clean first (kernels do not validate; the edge does).
 * - Sums of AWD arrays (sumAwd) are the AWD of the concatenated samples, since counts add: a day's
 *   AWD is the sum over its activities.
 *
 * Longitudinal AWD (awdPercentiles): over a range of training days, per level, the highest daily
 * value (`max`) and quantiles of the daily values (API: hard, medium, easy = 0.9, 0.75, 0.5).
 * Every day given counts at every level, a day whose array is shorter than level k being 0 there.
 * Quantiles use linear interpolation between order statistics, numpy's default ("linear", also
 * R's type 7 and pandas' default): for N sorted values v[0..N) and quantile q,
 *   h = (N − 1)·q,  quantile = v[⌊h⌋] + (h − ⌊h⌋)·(v[⌊h⌋+1] − v[⌊h⌋]).
 */

/** The highest level the kernels accept: 100,000 steps (100 kW, 1,000 m/s). */
export const MAX_LEVEL = 100_000;

/** AWD of a 1 Hz series: out[k-1] = seconds at level ≥ k, k = 1..K (see the header). */
export function accumulatedWorkDuration(samples: Float64Array, step: number): Int32Array {
  const n = samples.length;
  // Pass 1: each sample's level (0 = not counted) and the highest level K.
  const levels = new Int32Array(n);
  let top = 0;
  for (let i = 0; i < n; i++) {
    const x = samples[i]!;
    const k = Math.floor(x / step + LEVEL_EPSILON); // levelOf(x, step), inlined
    if (!(k >= 1)) continue; // NaN, -Infinity, or below level 1
    if (k > MAX_LEVEL) {
      if (x === Infinity) continue;
      throw new RangeError(`accumulatedWorkDuration: sample ${x} is above level ${MAX_LEVEL}`);
    }
    levels[i] = k;
    if (k > top) top = k;
  }
  // Pass 2: histogram by level, in out itself (out[k-1] = #samples at exactly level k)…
  const out = new Int32Array(top);
  for (let i = 0; i < n; i++) {
    const k = levels[i]!;
    if (k > 0) out[k - 1]!++;
  }
  // …then the reverse cumulative sum turns "at k" into "at k or above".
  for (let k = top - 1; k > 0; k--) out[k - 1]! += out[k]!;
  return out;
}

/** Elementwise sum of AWD arrays of different lengths (a missing level counts 0). */
export function sumAwd(arrays: Int32Array[]): Int32Array {
  let length = 0;
  for (const a of arrays) if (a.length > length) length = a.length;
  const out = new Int32Array(length);
  for (const a of arrays) {
    for (let k = 0; k < a.length; k++) out[k]! += a[k]!;
  }
  return out;
}

export interface AwdPercentiles {
  /** max[k-1] = the highest daily value at level k. */
  max: Int32Array;
  /** quantiles[j][k-1] = quantile `quantiles[j]` of the daily values at level k. */
  quantiles: Float64Array[];
}

/**
 * Longitudinal AWD over the days given (one AWD array per training day), for levels 1..maxK where
 * maxK is the longest array: `max` and the requested quantiles (each in [0, 1]) per level, with
 * linear interpolation between order statistics (see the header). No days: empty arrays.
 *
 * O(maxK · N log N) for N days: per level the N daily values are sorted once (typed-array sort)
 * and every quantile read from them.
 */
export function awdPercentiles(perDay: Int32Array[], quantiles: number[]): AwdPercentiles {
  for (const q of quantiles) {
    if (!(q >= 0 && q <= 1)) throw new RangeError(`awdPercentiles: quantile ${q} is not in [0, 1]`);
  }
  const days = perDay.length;
  let top = 0;
  for (const a of perDay) if (a.length > top) top = a.length;
  const max = new Int32Array(top);
  const outs = quantiles.map(() => new Float64Array(top));
  const column = new Int32Array(days);
  for (let k = 0; k < top; k++) {
    for (let d = 0; d < days; d++) {
      const a = perDay[d]!;
      column[d] = k < a.length ? a[k]! : 0;
    }
    column.sort(); // numeric, ascending
    max[k] = column[days - 1]!;
    for (let j = 0; j < quantiles.length; j++) {
      const h = (days - 1) * quantiles[j]!;
      const lo = Math.floor(h);
      const below = column[lo]!;
      outs[j]![k] = lo + 1 < days ? below + (h - lo) * (column[lo + 1]! - below) : below;
    }
  }
  return { max, quantiles: outs };
}
