/**
 * Intensity levels: the discrete axis of accumulated work duration (AWD) and of value-indexed
 * mean-max curves. Level k of a metric stands for the intensity k·step:
 *
 *   power       1 W     (level 250 = 250 W)
 *   speed       0.01 m/s (level 235 = 2.35 m/s)
 *   heart_rate  1 bpm
 *
 *   levelOf(x, step) = the highest integer k with k·step ≤ x  =  ⌊x / step⌋
 *
 * Decided here:
 * - Robust to float error: x / step is nudged up by 1e-9 of a level before flooring, so a value
 *   that is a whole number of steps in decimal (0.57 m/s → 56.99999999999999 steps) gets its own
 *   level (57), not the one below. A value less than 1e-9 of a level below a boundary therefore
 *   counts as on it; at these units that is far below any sensor's resolution.
 * - A value below one step gives level 0 (or a negative level for negative values); callers treat
 *   every level < 1 as "below the first level" (AWD and value-indexed curves only have levels ≥ 1).
 * - NaN (no value) gives -1, which is also "below the first level". ±Infinity gives ±Infinity:
 *   kernels that size arrays by level skip non-finite samples themselves.
 * - Kernels inline this expression in their loops; LEVEL_EPSILON keeps them identical to levelOf.
 */

export type LevelMetric = 'power' | 'speed' | 'heart_rate';

/** The size of one intensity level, in the metric's unit (W, m/s, bpm). */
export const LEVEL_STEP: Readonly<Record<LevelMetric, number>> = Object.freeze({ power: 1, speed: 0.01, heart_rate: 1 });

/** Added to x / step before flooring (in levels): absorbs the float error of decimal steps. */
export const LEVEL_EPSILON = 1e-9;

/** The highest level k with k·step ≤ x (see the header); -1 for NaN. */
export function levelOf(x: number, step: number): number {
  if (x !== x) return -1; // NaN
  return Math.floor(x / step + LEVEL_EPSILON);
}

/**
 * The intensity a level stands for, k·step, as the nearest double to the decimal value: for a step
 * whose inverse is a whole number (0.01 → 100) it is k / 100, since 57 · 0.01 = 0.5700000000000001
 * but 57 / 100 = 0.57. levelOf(levelValue(k, step), step) === k.
 */
export function levelValue(k: number, step: number): number {
  const inverse = Math.round(1 / step);
  return Math.abs(1 / step - inverse) < 1e-9 * inverse ? k / inverse : k * step;
}
