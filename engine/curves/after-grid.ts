/**
 * Fatigue curves from a grid stored per ride: each ride's best mean power at every default duration
 * after each multiple of 250 kJ it reaches (0, 250, 500, … 10,000 kJ), computed once (when the ride is
 * ingested, or by the first request that misses it) and kept in the user's channel columns
 * (engine/samples/channel-columns.ts, channel AFTER_GRID_CHANNEL). A request whose `after` values are
 * all on the grid and whose durations are all default ones merges the rides' grid entries, a few
 * hundred numbers per ride, instead of reading and scanning their samples: the answer is the same,
 * value, window start and owning activity, because each entry holds exactly what the samples' kernel
 * (meanMaxAfter, engine/curves/mean-max.ts) finds in that ride, and the merge keeps the older ride on
 * ties as engine/curves/longitudinal.ts does.
 *
 * An entry (a Float64Array, one per ride): [K, then per grid point k < K reached by the ride (its
 * work reaches k·step before its last sample): the D best means, then the D window starts]. A
 * duration longer than the part after point k has start −1 (its best, stored as 0, is no value).
 */
import { meanMaxAfter } from './mean-max.ts';
import { workCuts, type DurationCurve, type Slices } from './longitudinal.ts';
import { DEFAULT_DURATIONS } from './durations.ts';
import { checkStop } from '../stop.ts';

/** The column the entries are kept in (its name changes with the layout, so an old layout is never read). */
export const AFTER_GRID_CHANNEL = 'power-after-v1';

/** A grid: its spacing (J), its number of points from 0, and the durations of every entry. */
export interface GridShape {
  step: number;
  points: number;
  durations: Int32Array;
}
/** The service's: every 250 kJ from 0 to 10,000 kJ, at the default durations. */
export const AFTER_GRID: GridShape = { step: 250_000, points: 41, durations: Int32Array.from(DEFAULT_DURATIONS) };

/** One ride's entry from its power series (gaps NaN or 0). */
export function afterGridEntry(power: Float64Array, shape: GridShape = AFTER_GRID): Float64Array {
  const x = new Float64Array(power.length);
  for (let i = 0; i < x.length; i++) {
    const v = power[i]!;
    x[i] = v === v ? v : 0;
  }
  const thresholds = Float64Array.from({ length: shape.points }, (_, k) => k * shape.step);
  const cuts = workCuts(x, thresholds);
  let reached = 0;
  while (reached < cuts.length && cuts[reached]! < x.length) reached++;
  const D = shape.durations.length;
  const entry = new Float64Array(1 + reached * 2 * D);
  entry[0] = reached;
  if (!reached) return entry;
  let own = 0;
  while (own < D && shape.durations[own]! <= x.length) own++;
  const got = meanMaxAfter(x, shape.durations.subarray(0, own), cuts.subarray(0, reached));
  for (let k = 0; k < reached; k++) {
    const at = 1 + k * 2 * D;
    const best = got.best[k]!;
    const start = got.start[k]!;
    for (let d = 0; d < D; d++) {
      const v = d < own ? best[d]! : Number.NaN;
      const none = v !== v || !(start[d]! >= 0);
      entry[at + d] = none ? 0 : v;
      entry[at + D + d] = none ? -1 : start[d]!;
    }
  }
  return entry;
}

/**
 * The grid point of a threshold (J), or −1 when it is not one. Thresholds are whole multiples of the
 * step as the API computes them (kJ × 1000), so the test is exact.
 */
export function gridPoint(threshold: number, shape: GridShape = AFTER_GRID): number {
  const k = threshold / shape.step;
  return Number.isInteger(k) && k >= 0 && k < shape.points ? k : -1;
}

/** The index of each duration in the grid's durations, or null when one is not there. */
export function gridDurations(durations: Int32Array, shape: GridShape = AFTER_GRID): Int32Array | null {
  const index = new Int32Array(durations.length);
  for (let i = 0; i < durations.length; i++) {
    const at = shape.durations.indexOf(durations[i]!);
    if (at < 0) return null;
    index[i] = at;
  }
  return index;
}

/**
 * The longitudinal curves at grid points `points` (one curve per point, in that order) and durations
 * `columns` (indices into the grid's durations) from the rides' entries, oldest ride first: per
 * (point, duration) the best mean of any ride, its start and its ride; ties keep the older ride.
 */
export function mergeAfterGrid(entries: Slices, points: Int32Array, columns: Int32Array, shape: GridShape = AFTER_GRID): DurationCurve[] {
  const D = shape.durations.length;
  const curves: DurationCurve[] = Array.from(points, () => ({
    best: new Float64Array(columns.length).fill(Number.NaN),
    start: new Int32Array(columns.length).fill(-1),
    owner: new Int32Array(columns.length).fill(-1),
  }));
  const { values, from, length } = entries;
  for (let a = 0; a < from.length; a++) {
    if ((a & 255) === 0) checkStop();
    const at = from[a]!;
    const reached = length[a]! > 0 ? values[at]! : 0;
    if (!(reached >= 0 && 1 + reached * 2 * D === length[a]!))
      throw new Error(`A fatigue-grid entry of ${length[a]} values does not hold the ${reached} points it says`);
    for (let j = 0; j < points.length; j++) {
      const k = points[j]!;
      if (k >= reached) continue;
      const base = at + 1 + k * 2 * D;
      const c = curves[j]!;
      for (let i = 0; i < columns.length; i++) {
        const d = columns[i]!;
        const s = values[base + D + d]!;
        if (s < 0) continue;
        const v = values[base + d]!;
        const old = c.best[i]!;
        if (old !== old || v > old) {
          c.best[i] = v;
          c.start[i] = s;
          c.owner[i] = a;
        }
      }
    }
  }
  return curves;
}

/**
 * The grid points around a threshold t (J): `lo` the last point ≤ t, `hi` the first point ≥ t (−1
 * beyond the grid). A ride's best after t is at most its best after `lo` (its part after t lies
 * within its part after `lo`) and at least its best after `hi`.
 */
export function bracket(threshold: number, shape: GridShape = AFTER_GRID): { lo: number; hi: number } {
  // k: the last point ≤ t, searched only among the grid's points (0 … points): the division is at
  // most one off either way, so each loop turns at most once or twice, whatever t is. (Unclamped, a
  // t past 2⁵³ steps made k + 1 === k and the second loop endless, on the event loop.)
  let k = Math.min(shape.points, Math.max(0, Math.floor(threshold / shape.step) || 0));
  while (k > 0 && k * shape.step > threshold) k--;
  while (k < shape.points && (k + 1) * shape.step <= threshold) k++;
  const lo = Math.min(k, shape.points - 1);
  const hi = k * shape.step === threshold ? k : k + 1;
  return { lo, hi: hi < shape.points ? hi : -1 };
}

/**
 * Which rides can hold the best (or a tie for it) after thresholds between grid points: per
 * threshold j (points lo[j] ≤ t ≤ hi[j]) and duration, the best of every ride's lower bound (its
 * value at hi) is a floor the answer reaches; a ride whose upper bound (its value at lo) is below
 * that floor at every threshold and duration can be neither the best nor a tie, and is not read.
 * 1 for a ride to compute from its samples, 0 for one that cannot matter.
 *
 * Only thresholds are bounded so, not durations: a ride's best mean need not fall as the duration
 * grows (10, 0, 10 W: 5 W over 2 s, 6.7 W over 3 s), so a duration between two grid durations has no
 * bound from them, and a request with such a duration reads every ride.
 */
export function ridesThatCanMatter(
  entries: Slices,
  lo: Int32Array,
  hi: Int32Array,
  columns: Int32Array,
  shape: GridShape = AFTER_GRID,
): Uint8Array {
  const floors = mergeAfterGrid(
    entries,
    Int32Array.from(hi, (k) => (k < 0 ? shape.points : k)), // (beyond the grid: no ride reaches it, no floor)
    columns,
    shape,
  );
  const { values, from, length } = entries;
  const D = shape.durations.length;
  const needed = new Uint8Array(from.length);
  for (let a = 0; a < needed.length; a++) {
    if ((a & 255) === 0) checkStop();
    const at = from[a]!;
    const reached = length[a]! > 0 ? values[at]! : 0;
    search: for (let j = 0; j < lo.length; j++) {
      const k = lo[j]!;
      if (k >= reached) continue; // the ride never reaches lo, so never t
      const base = at + 1 + k * 2 * D;
      const floor = floors[j]!.best;
      for (let i = 0; i < columns.length; i++) {
        const d = columns[i]!;
        if (values[base + D + d]! < 0) continue; // no window of d after lo, so none after t
        const f = floor[i]!;
        if (f !== f || values[base + d]! >= f) {
          needed[a] = 1;
          break search;
        }
      }
    }
  }
  return needed;
}
