/**
 * The frames of curve responses (docs/api-clients.md, "Curves and time series"), built from the kernels' typed arrays:
 *
 * - levelFrame: value-indexed mean-max, one row per intensity level an activity reaches (one block
 *   per `after` value, with an `after` column; without `after` the metric column is the pandas index);
 * - durationFrame: mean-max at the requested durations, one block per `after` value;
 * - awdFrame (and descendingLevels/descending for the longitudinal AWD): accumulated work duration,
 *   descending by level;
 * - activityColumns: the `activity_id` and `sport` columns of a longitudinal frame.
 *
 * A row's activity is an index into `activities` (the order the curves were computed in, oldest
 * first); −1 means none, and such rows are left out.
 */
import type { MeanMaxMetric } from '../curves/activity-curves.ts';
import { LEVEL_STEP, levelValue } from '../curves/levels.ts';
import type { DurationCurve, LevelCurve } from '../curves/longitudinal.ts';
import type { Frame, FrameColumn } from './frame.ts';

/** An activity a longitudinal row can come from; `start` in epoch ms (window starts are seconds after it). */
export interface CurveActivity {
  id: string;
  sport: string;
  start: number;
}

/**
 * The `activity_id` and `sport` columns of a longitudinal frame: each row's activity is an index
 * into `activities` (−1 for none), written as dictionary-coded strings.
 */
export function activityColumns(owner: Int32Array, activities: readonly { id: string; sport: string }[]): FrameColumn[] {
  // Labels of the activities that own a row only (a year's curve names a few dozen of hundreds):
  // the Parquet writer spells a short label list into its SQL.
  const used = [...new Set(owner)].filter((o) => o >= 0).sort((a, b) => a - b);
  const usedIndex = new Map(used.map((o, i) => [o, i]));
  const sports = [...new Set(used.map((o) => activities[o]!.sport))];
  const sportIndex = new Map(sports.map((s, i) => [s, i]));
  return [
    {
      name: 'activity_id',
      type: 'string',
      codes: owner.map((o) => (o < 0 ? -1 : usedIndex.get(o)!)),
      labels: used.map((o) => activities[o]!.id),
    },
    { name: 'sport', type: 'string', codes: owner.map((o) => (o < 0 ? -1 : sportIndex.get(activities[o]!.sport)!)), labels: sports },
  ];
}

/** Rows of value-indexed curves (one per `after` value, or one without): level, duration, start, activity, sport[, after]. */
export function levelFrame(
  metric: MeanMaxMetric,
  curves: LevelCurve[],
  activities: readonly CurveActivity[],
  after: number[] | null,
): Frame {
  const step = LEVEL_STEP[metric];
  const rows = curves.reduce((n, c) => n + c.owner.filter((o) => o >= 0).length, 0);
  const level = new Float64Array(rows);
  const duration = new Int32Array(rows);
  const start = new Float64Array(rows);
  const owner = new Int32Array(rows);
  const afterValues = new Float64Array(rows);
  let r = 0;
  curves.forEach((c, j) => {
    for (let k = 0; k < c.duration.length; k++) {
      const o = c.owner[k]!;
      if (o < 0) continue;
      level[r] = levelValue(k + 1, step);
      duration[r] = c.duration[k]!;
      start[r] = activities[o]!.start + c.start[k]! * 1000;
      owner[r] = o;
      afterValues[r] = after ? after[j]! : 0;
      r++;
    }
  });
  const columns: FrameColumn[] = [
    { name: metric, type: 'double', values: level },
    { name: 'duration', type: 'int32', values: duration },
    { name: 'start', type: 'timestamptz', values: start },
    ...activityColumns(owner, activities),
  ];
  if (after) columns.push({ name: 'after', type: 'double', values: afterValues });
  return after ? { columns } : { columns, index: [metric] };
}

/** Rows of duration-indexed curves, one block per `after` value: duration, metric, start, activity, sport, after. */
export function durationFrame(
  metric: MeanMaxMetric,
  durations: Int32Array,
  curves: (DurationCurve | undefined)[],
  activities: readonly CurveActivity[],
  after: number[],
): Frame {
  const rows: { d: number; v: number; s: number; o: number; a: number }[] = [];
  curves.forEach((c, j) => {
    if (!c) return;
    for (let k = 0; k < durations.length; k++) {
      const o = c.owner[k]!;
      if (o < 0) continue;
      rows.push({ d: durations[k]!, v: c.best[k]!, s: activities[o]!.start + c.start[k]! * 1000, o, a: after[j]! });
    }
  });
  return {
    columns: [
      { name: 'duration', type: 'int32', values: Int32Array.from(rows, (r) => r.d) },
      { name: metric, type: 'double', values: Float64Array.from(rows, (r) => r.v) },
      { name: 'start', type: 'timestamptz', values: Float64Array.from(rows, (r) => r.s) },
      ...activityColumns(
        Int32Array.from(rows, (r) => r.o),
        activities,
      ),
      { name: 'after', type: 'double', values: Float64Array.from(rows, (r) => r.a) },
    ],
  };
}

/** Level values k·step for k = K..1 (descending, docs/api-clients.md), as a DOUBLE column. */
export function descendingLevels(count: number, step: number): Float64Array {
  const out = new Float64Array(count);
  for (let r = 0; r < count; r++) out[r] = levelValue(count - r, step);
  return out;
}

/** A per-level array (index k−1) reversed so that row r is level K−r. */
export function descending<A extends Int32Array | Float64Array>(values: A): A {
  return values.slice().reverse() as A;
}

/** The AWD frame of one activity: the metric's level and `duration` (s) at or above it, descending by level. */
export function awdFrame(metric: string, awd: Int32Array, step: number): Frame {
  return {
    columns: [
      { name: metric, type: 'double', values: descendingLevels(awd.length, step) },
      { name: 'duration', type: 'int32', values: descending(awd) },
    ],
  };
}
