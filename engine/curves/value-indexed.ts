import { MAX_LEVEL } from './awd.ts';
import { LEVEL_EPSILON } from './levels.ts';

/**
 * Value-indexed mean-max curves and the elementwise merges behind longitudinal curves.
 *
 * Value-indexed orientation of an exact duration-indexed curve best[d-1] (d = 1..n, NaN = none):
 *
 *   duration[k-1] = max { d : levelOf(best[d-1], step) ≥ k }     for k = 1 .. K
 *   start[k-1]    = start[d-1] of that d (the start of the best window of that duration)
 *
 * with K the highest level of any best value (engine/curves/levels.ts); an empty curve when none reaches
 * level 1. Every level 1..K has a duration (level K is reached by some d, and every lower level by
 * that same d at least), and duration is non-increasing in k.
 * The duration-indexed curve is not monotone (it can rise again after pauses), so the longest d at
 * level ≥ k is not found by bisection: one pass from the longest duration down keeps the suffix
 * maximum M of the levels; a duration d whose level exceeds M is the longest one for the levels
 * M+1 .. level(d), which it fills, and M becomes level(d). O(n + K).
 *
 * Merges (longitudinal curves from cached per-activity curves; `owner` = the index of the winning
 * curve in the input array, callers pass curves oldest activity first, so ties keep the oldest):
 * - mergeValueIndexed: per level, the longest duration among the curves that have that level (a
 *   shorter curve lacks the higher levels); ties → the lowest index. Levels no curve has: not
 *   possible for valueIndexed output; a duration ≤ 0 never wins and leaves owner -1, start -1.
 * - mergeCurves: duration-indexed curves on the same duration grid (index i is the same duration in
 *   every curve; a shorter curve lacks the longer durations), per index the highest value; NaN is
 *   absent and never wins; ties → the lowest index; an index no curve has gives NaN, start -1,
 *   owner -1.
 * Both are one tight pass per curve: O(Σ lengths), about 2 ms for 1,000 curves of 1,000 levels.
 *
 * Levels above MAX_LEVEL (engine/curves/awd.ts) throw a RangeError, as in the AWD kernel.
 */

export interface ValueIndexedCurve {
  /** duration[k-1]: the longest duration (s) whose best mean is at level ≥ k. */
  duration: Int32Array;
  /** start[k-1]: the start of that duration's best window (as given in the duration-indexed curve). */
  start: Int32Array;
}

export interface MergedValueIndexedCurve extends ValueIndexedCurve {
  /** owner[k-1]: the index in the input array of the curve the level's duration comes from. */
  owner: Int32Array;
}

export interface DurationCurve {
  /** best[i]: the best mean at the i-th duration of the grid; NaN = none. */
  best: Float64Array;
  /** start[i]: the start of that best window. */
  start: Int32Array;
}

export interface MergedDurationCurve extends DurationCurve {
  /** owner[i]: the index in the input array of the curve the value comes from; -1 = none. */
  owner: Int32Array;
}

/** The value-indexed orientation of an exact mean-max curve for every duration 1..n (see the header). */
export function valueIndexed(best: Float64Array, start: Int32Array, step: number): ValueIndexedCurve {
  const n = best.length;
  const levels = new Int32Array(n);
  let top = 0;
  for (let i = 0; i < n; i++) {
    const x = best[i]!;
    const k = Math.floor(x / step + LEVEL_EPSILON); // levelOf(x, step), inlined
    if (!(k >= 1)) continue; // NaN (no window), -Infinity, or below level 1
    if (k > MAX_LEVEL) {
      if (x === Infinity) continue;
      throw new RangeError(`valueIndexed: value ${x} is above level ${MAX_LEVEL}`);
    }
    levels[i] = k;
    if (k > top) top = k;
  }
  const duration = new Int32Array(top);
  const outStart = new Int32Array(top);
  let reached = 0; // the suffix maximum of the levels of durations > d
  for (let d = n; d >= 1 && reached < top; d--) {
    const k = levels[d - 1]!;
    if (k <= reached) continue;
    const s = start[d - 1]!;
    for (let j = reached; j < k; j++) {
      duration[j] = d;
      outStart[j] = s;
    }
    reached = k;
  }
  return { duration, start: outStart };
}

/** Per level, the longest duration among value-indexed curves; ties → the lowest index (see the header). */
export function mergeValueIndexed(curves: ValueIndexedCurve[]): MergedValueIndexedCurve {
  let top = 0;
  for (const c of curves) if (c.duration.length > top) top = c.duration.length;
  const duration = new Int32Array(top);
  const start = new Int32Array(top).fill(-1);
  const owner = new Int32Array(top).fill(-1);
  for (let c = 0; c < curves.length; c++) {
    const curve = curves[c]!;
    const dur = curve.duration;
    const st = curve.start;
    const m = dur.length;
    for (let k = 0; k < m; k++) {
      const v = dur[k]!;
      if (v > duration[k]!) {
        // strictly longer: an equal duration keeps the earlier curve
        duration[k] = v;
        start[k] = st[k]!;
        owner[k] = c;
      }
    }
  }
  return { duration, start, owner };
}

/** Per duration, the highest value among duration-indexed curves; NaN absent; ties → lowest index. */
export function mergeCurves(curves: DurationCurve[]): MergedDurationCurve {
  let length = 0;
  for (const c of curves) if (c.best.length > length) length = c.best.length;
  const best = new Float64Array(length).fill(-Infinity);
  const start = new Int32Array(length).fill(-1);
  const owner = new Int32Array(length).fill(-1);
  for (let c = 0; c < curves.length; c++) {
    const curve = curves[c]!;
    const values = curve.best;
    const st = curve.start;
    const m = values.length;
    for (let i = 0; i < m; i++) {
      const v = values[i]!;
      if (v > best[i]!) {
        // NaN compares false (never wins); strictly greater keeps the earlier curve on ties
        best[i] = v;
        start[i] = st[i]!;
        owner[i] = c;
      }
    }
  }
  for (let i = 0; i < length; i++) if (owner[i] === -1) best[i] = Number.NaN;
  return { best, start, owner };
}
