import type { ChannelStats, LapStats, Summary } from './ingested.ts';
import type { Lap } from './recording.ts';
import type { Grid, GridChannels } from './resample.ts';

/**
 * Summaries and laps of a 1 Hz grid (SPEC "ActivitySummarySummary" and "Lap"): per member exactly
 * the statistics SPEC lists, over the grid seconds [from, to).
 *
 *   altitude                                       gain, loss, max, mean, min
 *   cadence, power, speed                          max, mean
 *   distance                                       sum
 *   core_temperature, heart_rate, smo2, temperature end, max, mean, min, start
 *
 * NaN seconds (pauses, dropouts) are left out: means are over recorded seconds, start/end are the
 * first/last recorded values. A member is absent when its channel has no value in the span.
 * Nothing is rounded (the API formats).
 */

/** Altitude changes smaller than this (m) are noise, not climbing (see elevationChange). */
export const ALTITUDE_HYSTERESIS_M = 1;

type Member = keyof Summary;
type Statistics = (channels: GridChannels, member: Member, from: number, to: number) => ChannelStats | undefined;

const altitude: Statistics = (channels, _member, from, to) => {
  const x = channels.altitude;
  const m = x && moments(x, from, to);
  return m && { ...elevationChange(x, from, to, ALTITUDE_HYSTERESIS_M), max: m.max, mean: m.mean, min: m.min };
};
const peak: Statistics = (channels, member, from, to) => {
  const x = channels[member];
  const m = x && moments(x, from, to);
  return m ? { max: m.max, mean: m.mean } : undefined;
};
const level: Statistics = (channels, member, from, to) => {
  const x = channels[member];
  const m = x && moments(x, from, to);
  return m ? { end: m.last, max: m.max, mean: m.mean, min: m.min, start: m.first } : undefined;
};
const distance: Statistics = (channels, _member, from, to) => {
  const sum = distanceSum(channels, from, to);
  return sum === undefined ? undefined : { sum };
};

/** SPEC's members, in its (alphabetical) order, and the statistics each has. */
const MEMBERS: [Member, Statistics][] = [
  ['altitude', altitude],
  ['cadence', peak],
  ['core_temperature', level],
  ['distance', distance],
  ['heart_rate', level],
  ['power', peak],
  ['smo2', level],
  ['speed', peak],
  ['temperature', level],
];

export function summarise(channels: GridChannels, from: number, to: number): Summary {
  const summary: Summary = {};
  for (const [member, statistics] of MEMBERS) {
    const stats = statistics(channels, member, from, to);
    if (stats) summary[member] = stats;
  }
  return summary;
}

/**
 * The statistics of each lap. A lap owns the grid seconds whose 1 s bin overlaps [lap.start,
 * lap.end): from ⌊(start − grid.start)/1 s⌋ to ⌈(end − grid.start)/1 s⌉, clamped to the grid (FIT
 * lap starts are whole seconds, so consecutive laps share no second unless the file's laps
 * overlap). A recording without laps gets one lap spanning the activity (`activity`, by default
 * the whole grid).
 */
export function lapStats(grid: Grid, laps: readonly Lap[], activity: { start: number; end: number } = { start: grid.start, end: grid.start + grid.length * 1000 }): LapStats[] {
  const spans = laps.length > 0 ? laps.map((lap) => ({ start: lap.start.getTime(), end: lap.end.getTime() })) : [activity];
  return spans.map(({ start, end }) => {
    const from = clamp(Math.floor((start - grid.start) / 1000), 0, grid.length);
    const to = clamp(Math.ceil((end - grid.start) / 1000), from, grid.length);
    return { start, end, ...summarise(grid.channels, from, to) };
  });
}

// ─── Kernels ─────────────────────────────────────────────────────────────────────────────────────

interface Moments {
  first: number;
  last: number;
  min: number;
  max: number;
  mean: number;
}

/** One pass over x[from, to), NaN skipped; undefined when no value is recorded there. */
function moments(x: Float64Array, from: number, to: number): Moments | undefined {
  let count = 0;
  let sum = 0;
  let min = Infinity;
  let max = -Infinity;
  let first = Number.NaN;
  let last = Number.NaN;
  for (let i = from; i < to; i++) {
    const v = x[i]!;
    if (Number.isNaN(v)) continue;
    if (count === 0) first = v;
    last = v;
    count++;
    sum += v;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  return count === 0 ? undefined : { first, last, min, max, mean: sum / count };
}

/**
 * Total ascent and descent with a hysteresis of `h` metres (a zigzag filter): a climb or descent
 * is counted only once it has moved more than `h` away from the last turning point, and then in
 * full, from that turning point to its extreme. Wobbles of up to `h` (barometric noise, GPS
 * altitude jitter) are not counted; a steady climb loses nothing. Until the first move of more
 * than `h`, the reference is the first recorded value. NaN seconds are skipped.
 *
 * Invariant: gain − loss = (the last counted extreme) − (the first value).
 */
export function elevationChange(x: Float64Array, from: number, to: number, h: number): { gain: number; loss: number } {
  let gain = 0;
  let loss = 0;
  let ref = Number.NaN; // the last turning point
  let extreme = Number.NaN; // the furthest value from `ref` in the current direction
  let direction = 0; // +1 climbing, −1 descending, 0 not yet moved more than h
  for (let i = from; i < to; i++) {
    const v = x[i]!;
    if (Number.isNaN(v)) continue;
    if (Number.isNaN(ref)) {
      ref = extreme = v;
    } else if (direction === 0) {
      if (Math.abs(v - ref) > h) {
        direction = v > ref ? 1 : -1;
        extreme = v;
      }
    } else if (direction === 1) {
      if (v > extreme) extreme = v;
      else if (extreme - v > h) {
        gain += extreme - ref; // the climb ended at `extreme`: a turning point
        ref = extreme;
        extreme = v;
        direction = -1;
      }
    } else {
      if (v < extreme) extreme = v;
      else if (v - extreme > h) {
        loss += ref - extreme;
        ref = extreme;
        extreme = v;
        direction = 1;
      }
    }
  }
  if (direction === 1) gain += extreme - ref; // the climb in progress at the end
  if (direction === -1) loss += ref - extreme;
  return { gain, loss };
}

/**
 * Distance covered in [from, to): the increase of the cumulative `distance` channel, from the last
 * value recorded before the span (so that laps add up to the activity's total; for a span at the
 * start, the first value in it) to the last value in it. Without distance values, Σ speed · 1 s.
 */
function distanceSum(channels: GridChannels, from: number, to: number): number | undefined {
  const d = channels.distance;
  const inSpan = d && moments(d, from, to);
  if (d && inSpan) {
    let before = Number.NaN;
    for (let i = from - 1; i >= 0 && Number.isNaN(before); i--) before = d[i]!;
    return inSpan.last - (Number.isNaN(before) ? inSpan.first : before);
  }
  const speed = channels.speed;
  if (!speed) return undefined;
  let sum = 0;
  let recorded = false;
  for (let i = from; i < to; i++) {
    if (Number.isNaN(speed[i]!)) continue;
    sum += speed[i]!; // m/s × 1 s
    recorded = true;
  }
  return recorded ? sum : undefined;
}

function clamp(v: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, v));
}
