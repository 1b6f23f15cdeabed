/**
 * Mean-max, the plain definition: for each duration d, the best mean over every window of d
 * consecutive 1 Hz samples, and the earliest start among tied best windows. Prefix sums make each
 * window O(1), so one duration costs O(n) and all durations O(n²). This is the reference every
 * faster kernel is checked against, and the baseline its benchmarks compare with.
 *
 * Writes into caller-provided buffers: `best[k]` and `start[k]` for `durations[k]`; a duration
 * longer than the series gets NaN and -1.
 */
export function meanMaxPlain(samples: Float64Array, durations: Int32Array, best: Float64Array, start: Int32Array): void {
  const n = samples.length;
  const prefix = new Float64Array(n + 1);
  for (let i = 0; i < n; i++) prefix[i + 1] = prefix[i]! + samples[i]!;
  for (let k = 0; k < durations.length; k++) {
    const d = durations[k]!;
    if (d < 1 || d > n) {
      best[k] = Number.NaN;
      start[k] = -1;
      continue;
    }
    let bestSum = -Infinity;
    let bestStart = -1;
    for (let i = 0; i + d <= n; i++) {
      const sum = prefix[i + d]! - prefix[i]!; // Σ samples[i .. i+d)
      if (sum > bestSum) {
        bestSum = sum; // strictly greater keeps the earliest start on ties
        bestStart = i;
      }
    }
    best[k] = bestSum / d;
    start[k] = bestStart;
  }
}
