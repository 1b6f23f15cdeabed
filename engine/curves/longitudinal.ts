/**
 * Longitudinal curves: the best over many activities, keeping which activity (its index in the
 * input, oldest activity first) each point comes from.
 *
 * - From stored curves (no `after`): the value-indexed view of each activity was stored at
 *   ingestion; the longitudinal one is, per intensity level, the longest duration of any activity,
 *   ties to the older activity, merged from the stored (encoded) curves in
 *   engine/curves/stored-curves.ts, as is the longitudinal AWD.
 * - After accumulated work (`after`): the curves of the part of each activity after its work
 *   (Σ x·1 s: J for power, m for speed) first reaches each threshold, computed from the samples
 *   (meanMaxAfter, one pass for every threshold). Activities are visited oldest first; each
 *   threshold's running best of the activities seen so far is its floor, below which a window
 *   cannot matter (by intensity: the least mean of the next level above the running best of every
 *   longer duration, levelFloor), which prunes most windows of most activities (docs/architecture.md,
 *   "The engine's algorithms"). A chunk of activities is one pool task;
 *   chunks are merged in order (mergeChunks), so the answer does not depend on how they were split.
 */
import { meanMaxAfter } from './mean-max.ts';
import { mergeCurves, mergeValueIndexed, valueIndexed } from './value-indexed.ts';
import { LEVEL_EPSILON } from './levels.ts';
import { checkStop } from '../stop.ts';

/** Per intensity level k = 1..K (index k−1): the longest duration, its window's start (sample index) and its activity. */
export interface LevelCurve {
  duration: Int32Array;
  start: Int32Array;
  owner: Int32Array;
}
/** Per requested duration: the best mean, its window's start and its activity (NaN / -1 / -1 when none). */
export interface DurationCurve {
  best: Float64Array;
  start: Int32Array;
  owner: Int32Array;
}

/** Some activities' arrays as slices of one buffer (a shared column): activity a is values[from[a] .. from[a] + length[a]). */
export interface Slices {
  values: Float64Array;
  from: Int32Array;
  length: Int32Array;
}

function slices(s: Slices): Float64Array[] {
  return Array.from(s.from, (from, a) => s.values.subarray(from, from + s.length[a]!));
}

/**
 * Where each threshold's suffix begins: the first sample index i at which the accumulated work
 * Σ x[0..i) reaches the threshold (0 for a threshold ≤ 0; n when the activity never reaches it).
 * Thresholds ascending give cuts ascending.
 */
export function workCuts(x: Float64Array, thresholds: Float64Array): Int32Array {
  const cuts = new Int32Array(thresholds.length).fill(x.length);
  let sum = 0;
  let j = 0;
  while (j < thresholds.length && thresholds[j]! <= 0) cuts[j++] = 0;
  for (let i = 0; i < x.length && j < thresholds.length; i++) {
    sum += x[i]!;
    while (j < thresholds.length && sum >= thresholds[j]!) cuts[j++] = i + 1;
  }
  return cuts;
}

export interface AfterInput {
  /** Each activity's work series (gaps as 0), oldest activity first. */
  samples: Slices;
  /** Work thresholds, ascending (J for power, m for speed). */
  thresholds: Float64Array;
  /** Durations (ascending) for the duration-indexed curve; null for the value-indexed one. */
  durations: Int32Array | null;
  /** Level step (1 W, 0.01 m/s) for the value-indexed curve. */
  step: number;
}

/** One curve per threshold: duration-indexed (`best`) or value-indexed (`duration`), with start and owner. */
export type AfterOutput = { kind: 'duration'; curves: DurationCurve[] } | { kind: 'intensity'; curves: LevelCurve[] };

export function longitudinalAfter(input: AfterInput): AfterOutput {
  const activities = slices(input.samples);
  const m = input.thresholds.length;
  return input.durations
    ? afterByDuration(activities, input.thresholds, input.durations, m)
    : afterByIntensity(activities, input.thresholds, input.step, m);
}

function afterByDuration(activities: Float64Array[], thresholds: Float64Array, durations: Int32Array, m: number): AfterOutput {
  const curves: DurationCurve[] = Array.from({ length: m }, () => ({
    best: new Float64Array(durations.length).fill(Number.NaN),
    start: new Int32Array(durations.length).fill(-1),
    owner: new Int32Array(durations.length).fill(-1),
  }));
  activities.forEach((x, a) => {
    checkStop();
    const cuts = workCuts(x, thresholds);
    if (cuts[0] === x.length) return; // never reaches the smallest threshold
    // Only the durations the activity has (no window is longer than it), each threshold with its
    // running best as the floor (NaN, nothing yet: no floor).
    let own = 0;
    while (own < durations.length && durations[own]! <= x.length) own++;
    const floor = curves.map((c) => c.best.slice(0, own));
    const got = meanMaxAfter(x, durations.subarray(0, own), cuts, { floor });
    for (let j = 0; j < m; j++) {
      const c = curves[j]!;
      const best = got.best[j]!;
      const start = got.start[j]!;
      for (let k = 0; k < own; k++) {
        const v = best[k]!;
        const old = c.best[k]!;
        if (v === v && (old !== old || v > old)) {
          c.best[k] = v;
          c.start[k] = start[k]!;
          c.owner[k] = a;
        }
      }
    }
  });
  return { kind: 'duration', curves };
}

function afterByIntensity(activities: Float64Array[], thresholds: Float64Array, step: number, m: number): AfterOutput {
  const longest = activities.reduce((n, x) => Math.max(n, x.length), 0);
  // Per threshold: the running best mean at every duration, and its suffix maximum (NaN: none).
  const best = Array.from({ length: m }, () => new Float64Array(longest).fill(Number.NaN));
  const suffix = Array.from({ length: m }, () => new Float64Array(longest + 1).fill(Number.NaN));
  // Every activity's durations and floors are the first n of these (no allocation per activity).
  const every = Int32Array.from({ length: longest }, (_, i) => i + 1);
  const floors = Array.from({ length: m }, () => new Float64Array(longest));
  const merged: LevelCurve[] = Array.from({ length: m }, () => ({
    duration: new Int32Array(0),
    start: new Int32Array(0),
    owner: new Int32Array(0),
  }));
  activities.forEach((x, a) => {
    checkStop();
    const cuts = workCuts(x, thresholds);
    if (cuts[0] === x.length) return;
    const n = x.length;
    const durations = every.subarray(0, n);
    // Per threshold, a window at duration d can lengthen a level only if its mean is at a level
    // above every longer duration's running best (levelFloor); level 1 at least.
    const floor = suffix.map((s, j) => {
      const f = floors[j]!.subarray(0, n); // (past the cut's suffix, n − cut: not read)
      let last = Number.NaN;
      let bar = levelFloor(last, step);
      for (let d = n - cuts[j]!; d >= 1; d--) {
        const v = s[d - 1]!;
        if (v !== last) bar = levelFloor((last = v), step);
        f[d - 1] = bar;
      }
      return f;
    });
    const got = meanMaxAfter(x, durations, cuts, { floor });
    for (let j = 0; j < m; j++) {
      const span = n - cuts[j]!; // (no window of a longer duration from the cut)
      const curve = got.best[j]!.subarray(0, span);
      const own = valueIndexed(curve, got.start[j]!.subarray(0, span), step);
      if (!own.duration.length) continue;
      const owner = new Int32Array(own.duration.length).fill(a);
      merged[j] = combineLevels(merged[j]!, { ...own, owner });
      const b = best[j]!;
      const s = suffix[j]!;
      let top = s[span]!; // (no longer duration here: the suffix beyond stands)
      for (let d = span; d >= 1; d--) {
        const v = curve[d - 1]!;
        if (v === v && !(b[d - 1]! >= v)) b[d - 1] = v;
        const u = b[d - 1]!;
        if (u === u && !(top >= u)) top = u;
        s[d - 1] = top;
      }
    }
  });
  return { kind: 'intensity', curves: merged };
}

/**
 * Just below the least mean at a level above `mean`'s (above level 0 for NaN): every mean at a
 * higher level is strictly greater (levelOf nudges by LEVEL_EPSILON; the floor is shaded further
 * down, so a rounding can only report more, never less).
 */
function levelFloor(mean: number, step: number): number {
  const level = mean === mean ? Math.max(0, Math.floor(mean / step + LEVEL_EPSILON)) : 0;
  const next = (level + 1 - 2 * LEVEL_EPSILON) * step;
  return next - Math.abs(next) * 2 ** -40;
}

/** Two level curves with owners → per level the longer duration; ties keep `older`. */
export function combineLevels(older: LevelCurve, newer: LevelCurve): LevelCurve {
  const m = mergeValueIndexed([older, newer]);
  const owner = new Int32Array(m.duration.length);
  for (let k = 0; k < owner.length; k++) owner[k] = m.owner[k] === 0 ? older.owner[k]! : m.owner[k] === 1 ? newer.owner[k]! : -1;
  return { duration: m.duration, start: m.start, owner };
}

/** Two duration curves with owners (same durations) → elementwise best; ties keep `older`. */
export function combineDurations(older: DurationCurve, newer: DurationCurve): DurationCurve {
  const m = mergeCurves([older, newer]);
  const owner = new Int32Array(m.best.length);
  for (let k = 0; k < owner.length; k++) owner[k] = m.owner[k] === 0 ? older.owner[k]! : m.owner[k] === 1 ? newer.owner[k]! : -1;
  return { best: m.best, start: m.start, owner };
}

/**
 * Split activities [0, m) (packed at `offsets`) into at most `parts` consecutive chunks of about equal
 * samples, one pool task each; their outputs are merged in order by mergeChunks.
 */
export function chunkBySamples(offsets: Int32Array, parts: number): [number, number][] {
  const m = offsets.length - 1;
  const total = offsets[m]!;
  const chunks: [number, number][] = [];
  let from = 0;
  for (let p = 1; p <= parts && from < m; p++) {
    let to = from + 1;
    const target = (total * p) / parts;
    while (to < m && (p === parts || offsets[to]! < target)) to++;
    chunks.push([from, to]);
    from = to;
  }
  return chunks;
}

/** Merge the outputs of consecutive chunks (oldest chunk first; `firsts[c]` = global index of chunk c's first activity). */
export function mergeChunks(outputs: AfterOutput[], firsts: number[]): AfterOutput {
  const shift = (owner: Int32Array, by: number) => owner.map((o) => (o < 0 ? o : o + by));
  let result: AfterOutput | undefined;
  outputs.forEach((out, c) => {
    const by = firsts[c]!;
    if (out.kind === 'duration') {
      const curves = out.curves.map((x) => ({ ...x, owner: shift(x.owner, by) }));
      result =
        result?.kind === 'duration'
          ? { kind: 'duration', curves: result.curves.map((r, j) => combineDurations(r, curves[j]!)) }
          : { kind: 'duration', curves };
    } else {
      const curves = out.curves.map((x) => ({ ...x, owner: shift(x.owner, by) }));
      result =
        result?.kind === 'intensity'
          ? { kind: 'intensity', curves: result.curves.map((r, j) => combineLevels(r, curves[j]!)) }
          : { kind: 'intensity', curves };
    }
  });
  if (!result) throw new RangeError('mergeChunks needs at least one output');
  return result;
}
