/**
 * Normalized power's algorithm on any 1 Hz series: the rolling mean over `window` seconds of the
 * values taken in order (a second without a value, NaN, or outside `include` is skipped, so a window
 * spans it), then the fourth root of the mean of its fourth powers over the full windows; undefined
 * under `window` such seconds. Normalized power is it on power over the seconds the timer ran
 * (engine/ingest/summary.ts), normalised speed on speed (engine/load/stress.ts).
 */
export function normalisedMean(
  values: Float64Array,
  window: number,
  from = 0,
  to = values.length,
  include?: Uint8Array,
): number | undefined {
  const ring = new Float64Array(window);
  let n = 0;
  let sum = 0;
  let sum4 = 0;
  let windows = 0;
  for (let i = from; i < to; i++) {
    const v = values[i]!;
    if ((include && !include[i]) || v !== v) continue;
    sum += v - ring[n % window]!;
    ring[n % window] = v;
    n++;
    if (n >= window) {
      const mean = sum / window;
      sum4 += mean * mean * mean * mean;
      windows++;
    }
  }
  return windows === 0 ? undefined : (sum4 / windows) ** 0.25;
}
