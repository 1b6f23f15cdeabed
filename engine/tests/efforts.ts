/**
 * A test's maximal efforts and its highest heart rate, from the 1 Hz recordings of the activities inside the
 * test's window (each already cut to the window, gaps as 0). Pure functions on typed arrays.
 *
 * Efforts (for critical power or speed, ./critical-power.ts):
 * - At durations the client names: for each duration, the best mean over any window of that many seconds in any
 *   of the recordings (the mean-max; a duration longer than every recording has no effort).
 * - Otherwise from the laps: a lap of EFFORT_MIN_SECONDS to EFFORT_MAX_SECONDS is an effort when its mean is at
 *   least LAP_EFFORT_SHARE of the best mean the test holds over the lap's duration. A maximal effort is the
 *   best of its duration (its share is 1, or nearly: a lap pressed a second late), whereas a warm-up, a
 *   recovery or a cool-down lap falls far below the efforts it sits beside.
 * Heart rate max: the highest 30-second mean heart rate of the recordings.
 */
import { meanMax } from '../curves/mean-max.ts';

export const EFFORT_MIN_SECONDS = 60;
export const EFFORT_MAX_SECONDS = 1800;
export const LAP_EFFORT_SHARE = 0.9;
export const HEART_RATE_MAX_SECONDS = 30;

/** One recording cut to the test's window: the metric (gaps as 0) and its laps as [from, to) sample indices. */
export interface EffortRecording {
  values: Float64Array;
  laps: { from: number; to: number }[];
}

/** An effort: which recording, its first sample, its duration (s) and its mean. */
export interface Effort {
  recording: number;
  start: number;
  duration: number;
  value: number;
}

/** The best mean of each duration over the recordings: the recording and start of the earliest best. */
function bestOf(recordings: readonly Float64Array[], durations: Int32Array): Effort[] {
  const out: Effort[] = Array.from(durations, (duration) => ({ recording: -1, start: -1, duration, value: Number.NaN }));
  const best = new Float64Array(durations.length);
  const start = new Int32Array(durations.length);
  recordings.forEach((values, recording) => {
    meanMax(values, durations, best, start);
    for (let k = 0; k < durations.length; k++)
      if (start[k]! >= 0 && !(best[k]! <= out[k]!.value))
        out[k] = { recording, start: start[k]!, duration: durations[k]!, value: best[k]! };
  });
  return out;
}

/** Ascending distinct durations. */
function distinct(durations: Iterable<number>): Int32Array {
  return Int32Array.from([...new Set(durations)].sort((a, b) => a - b));
}

/** The best effort at each duration asked (ascending), where a recording is that long and the mean is above 0. */
export function effortsAtDurations(recordings: readonly EffortRecording[], durations: readonly number[]): Effort[] {
  return bestOf(
    recordings.map((r) => r.values),
    distinct(durations),
  ).filter((e) => e.recording >= 0 && e.value > 0);
}

/** The laps that are maximal efforts (see the header), by duration, then time. */
export function lapEfforts(recordings: readonly EffortRecording[]): Effort[] {
  const laps = recordings.flatMap((r, recording) =>
    r.laps
      .map((lap) => ({ recording, from: Math.max(0, lap.from), to: Math.min(r.values.length, lap.to) }))
      .filter((lap) => lap.to - lap.from >= EFFORT_MIN_SECONDS && lap.to - lap.from <= EFFORT_MAX_SECONDS),
  );
  if (!laps.length) return [];
  const durations = distinct(laps.map((lap) => lap.to - lap.from));
  const best = bestOf(
    recordings.map((r) => r.values),
    durations,
  );
  const bestAt = new Map(best.map((e) => [e.duration, e.value]));
  const efforts: Effort[] = [];
  for (const lap of laps) {
    const values = recordings[lap.recording]!.values;
    let sum = 0;
    for (let i = lap.from; i < lap.to; i++) sum += values[i]!;
    const duration = lap.to - lap.from;
    const value = sum / duration;
    if (value > 0 && value >= LAP_EFFORT_SHARE * bestAt.get(duration)!)
      efforts.push({ recording: lap.recording, start: lap.from, duration, value });
  }
  return efforts.sort((a, b) => a.duration - b.duration || a.recording - b.recording || a.start - b.start);
}

/** The highest HEART_RATE_MAX_SECONDS mean heart rate of the recordings (gaps as 0), or null when none is that long. */
export function heartRateMax(heartRates: readonly Float64Array[]): number | null {
  const [best] = bestOf(heartRates, Int32Array.of(HEART_RATE_MAX_SECONDS));
  return best!.recording >= 0 && best!.value > 0 ? best!.value : null;
}
