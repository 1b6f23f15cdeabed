/**
 * An activity's curves, computed once at ingestion (and by the recompute job) and stored in
 * `activity_curves` (compactly: engine/curves/curve-codec.ts), so that longitudinal queries read them
 * instead of the samples:
 *
 * - power and speed: the value-indexed view of the exact mean-max curve — for every intensity level
 *   the longest duration sustained at or above it and the start of that window
 *   (engine/curves/value-indexed.ts), from the exact mean-max at every duration 1..n s with the start
 *   of each best window (engine/curves/mean-max.ts), which is not kept: the per-activity mean-max
 *   route computes it from the sample file, exact either way, and stored it took more room than the
 *   sample file itself;
 * - power, speed and heart rate: the accumulated work duration, seconds at or above each level
 *   (engine/curves/awd.ts).
 *
 * Gaps in the 1 Hz grid (NaN) count as 0 for mean-max — no work is done in a pause, docs/architecture.md, "The engine's algorithms" —
 * and are not counted by AWD. A metric the activity does not record has no row.
 */
import { accumulatedWorkDuration } from './awd.ts';
import { LEVEL_STEP } from './levels.ts';
import { meanMaxAll } from './mean-max.ts';
import type { Channel } from '../channels.ts';
import { valueIndexed } from './value-indexed.ts';

/** Bumped when the curves' definition changes: the recompute job then recomputes older rows. */
export const CURVES_VERSION = 1;

/** Metrics with a mean-max curve (work-like quantities, whose pauses count as zero). */
export const MEAN_MAX_METRICS = ['power', 'speed'] as const;
export type MeanMaxMetric = (typeof MEAN_MAX_METRICS)[number];
/** Metrics with an accumulated work duration. */
export const AWD_METRICS = ['power', 'speed', 'heart_rate'] as const;
export type AwdMetric = (typeof AWD_METRICS)[number];

export interface MetricCurves {
  metric: AwdMetric;
  /** Per intensity level k = 1..K (index k−1): the longest duration with mean-max ≥ k·step, and its window's start; power and speed only. */
  levelDuration: Int32Array | null;
  levelStart: Int32Array | null;
  /** Per level k = 1..K: seconds at or above k·step. */
  awd: Int32Array;
}

/** A work series for mean-max: the channel with gaps (NaN) as 0. */
export function zeroFilled(values: Float64Array): Float64Array {
  const out = new Float64Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const x = values[i]!;
    out[i] = x === x ? x : 0;
  }
  return out;
}

export function computeCurves(channels: Partial<Record<Channel, Float64Array>>): MetricCurves[] {
  const curves: MetricCurves[] = [];
  for (const metric of AWD_METRICS) {
    const values = channels[metric];
    if (!values?.some((x) => x === x)) continue; // absent, or a column of gaps only
    const step = LEVEL_STEP[metric];
    const awd = accumulatedWorkDuration(values, step);
    if ((MEAN_MAX_METRICS as readonly string[]).includes(metric)) {
      const { best, start } = meanMaxAll(zeroFilled(values));
      const levels = valueIndexed(best, start, step);
      curves.push({ metric, levelDuration: levels.duration, levelStart: levels.start, awd });
    } else {
      curves.push({ metric, levelDuration: null, levelStart: null, awd });
    }
  }
  return curves;
}
