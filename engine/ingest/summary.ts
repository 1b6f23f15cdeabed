import type { ChannelStats, LapStats, Summary } from './ingested.ts';
import { normalisedMean } from '../normalised-mean.ts';
import type { Lap } from './recording.ts';
import { STANDSTILL_SPEED, type Grid, type GridChannels } from './resample.ts';

/**
 * Summaries and laps of a 1 Hz grid (ActivityStatistics and Lap; docs/api-clients.md, "Summaries"): per member the
 * statistics the schema lists, over the grid seconds [from, to), by the conventions of the field (ingest
 * rules version 2, engine/ingest/rules.ts):
 *
 *   altitude           gain, loss  the device's own totals (FIT session / lap total_ascent and
 *                                  total_descent) when the file has them, else counted with a
 *                                  ALTITUDE_HYSTERESIS_M hysteresis (GoldenCheetah's default)
 *                      max, mean, min
 *   cadence            max; mean over the seconds with cadence > 0 (coasting left out, as devices
 *                      and GoldenCheetah show it)
 *   power              max; mean over recorded seconds (zeros kept); normalized (NP, below);
 *                      work (kJ: Σ power × 1 s)
 *   speed              max; mean = distance / moving time (Strava, GoldenCheetah; a device divides
 *                      by its timer time, which differs when the timer ran at a standstill); under
 *                      MIN_MOVING_FOR_SPEED of moving time, the mean of the recorded speeds
 *   distance           sum: the cumulative distance channel's increase from the span's start (for
 *                      the activity: from 0 when its first value can have been covered since the
 *                      start, see distanceSum), else Σ speed · 1 s
 *   core_temperature, heart_rate, smo2, temperature   end, max, mean, min, start
 *
 * NaN seconds (pauses, dropouts) are left out: means are over recorded seconds, start/end are the
 * first/last recorded values. A member is absent when its channel has no value in the span.
 * Nothing is rounded (the API formats).
 *
 * Timer and moving time (timing): the span's seconds whose timer ran (grid.running), and of those
 * the seconds in motion: speed ≥ STANDSTILL_SPEED, or power > 0, or cadence > 0; a recording with
 * none of these channels moves whenever something is recorded; a pool swim moves in the seconds of
 * its active lengths (grid.active).
 *
 * Normalized power: the 30 s rolling mean of power over the seconds the timer ran and power was
 * recorded, in order (a pause is skipped, so a window spans it; coasting zeros are kept); NP is the
 * fourth root of the mean of its fourth powers, over the full windows (absent under 30 such seconds).
 */

/** Altitude changes smaller than this (m) are noise, not climbing (see elevationChange). */
export const ALTITUDE_HYSTERESIS_M = 3;

/**
 * Below this moving time (s) a span's speed is the mean of its recorded speeds, not distance / moving
 * time: a lap of a fraction of a second (a rest lap whose end shares a grid second with the next
 * length) would divide a second's distance by a tenth of a second.
 */
export const MIN_MOVING_FOR_SPEED = 5;

/** The rolling window of normalized power (s). */
export const NP_WINDOW_SECONDS = 30;

/** The fastest a first distance value can have been covered since the start (m/s): faster means a counter that did not start at 0. */
const DISTANCE_FROM_START_SPEED = 100;

/** What the file itself totalled for a span (FIT session or lap), used where the field's convention says so. */
export interface SpanTotals {
  ascent?: number;
  descent?: number;
}

type Member = keyof Summary;
interface Span {
  grid: Grid;
  from: number;
  to: number;
  totals: SpanTotals;
  /** The span's distance and moving seconds (computed once, for speed). */
  distance: number | undefined;
  moving: number;
}
type Statistics = (span: Span, member: Member) => ChannelStats | undefined;

const altitude: Statistics = ({ grid, from, to, totals }) => {
  const x = grid.channels.altitude;
  const m = x && moments(x, from, to);
  if (!m) return undefined;
  const counted =
    totals.ascent === undefined || totals.descent === undefined ? elevationChange(x, from, to, ALTITUDE_HYSTERESIS_M) : undefined;
  return { gain: totals.ascent ?? counted!.gain, loss: totals.descent ?? counted!.loss, max: m.max, mean: m.mean, min: m.min };
};
const cadence: Statistics = ({ grid, from, to }) => {
  const x = grid.channels.cadence;
  const m = x && moments(x, from, to);
  if (!m) return undefined;
  const turning = moments(x, from, to, (v) => v > 0);
  return { max: m.max, mean: turning ? turning.mean : 0 };
};
const power: Statistics = ({ grid, from, to }) => {
  const x = grid.channels.power;
  const m = x && moments(x, from, to);
  if (!m) return undefined;
  const np = normalizedPower(x, grid.running, from, to);
  return { max: m.max, mean: m.mean, ...(np === undefined ? {} : { normalized: np }), work: (m.mean * m.count) / 1000 };
};
const speed: Statistics = ({ grid, from, to, distance, moving }) => {
  const x = grid.channels.speed;
  const m = x && moments(x, from, to);
  if (!m) return undefined;
  return { max: m.max, mean: distance !== undefined && moving >= MIN_MOVING_FOR_SPEED ? distance / moving : m.mean };
};
const level: Statistics = ({ grid, from, to }, member) => {
  const x = grid.channels[member];
  const m = x && moments(x, from, to);
  return m ? { end: m.last, max: m.max, mean: m.mean, min: m.min, start: m.first } : undefined;
};
const distance: Statistics = ({ distance }) => (distance === undefined ? undefined : { sum: distance });

/** The schema's members, in its (alphabetical) order, and the statistics each has. */
const MEMBERS: [Member, Statistics][] = [
  ['altitude', altitude],
  ['cadence', cadence],
  ['core_temperature', level],
  ['distance', distance],
  ['heart_rate', level],
  ['power', power],
  ['smo2', level],
  ['speed', speed],
  ['temperature', level],
];

/** The summary of grid seconds [from, to); `moving`: the span's moving seconds (timing), for the speed's mean. */
export function summarise(grid: Grid, from: number, to: number, totals: SpanTotals = {}, moving = movingSeconds(grid, from, to)): Summary {
  const span: Span = { grid, from, to, totals, distance: distanceSum(grid.channels, from, to), moving };
  const summary: Summary = {};
  for (const [member, statistics] of MEMBERS) {
    const stats = statistics(span, member);
    if (stats) summary[member] = stats;
  }
  return summary;
}

/**
 * The timer time of the span [start, end] (epoch ms): its length less the pauses in it, to the
 * millisecond (as the device's total_timer_time), and the seconds in motion among the grid
 * seconds [from, to) whose timer ran (see the module comment).
 */
export function timing(
  grid: Grid,
  span: { start: number; end: number },
  from: number,
  to: number,
): { timer_seconds: number; moving_seconds: number } {
  let paused = 0;
  for (const p of grid.pauses) paused += Math.max(0, Math.min(p.end, span.end) - Math.max(p.start, span.start));
  const timer = Math.max(0, span.end - span.start - paused) / 1000;
  // Each run of the timer has a record more than its seconds (the one written as it stops): moving time is at most the timer time.
  return { timer_seconds: timer, moving_seconds: Math.min(timer, movingSeconds(grid, from, to)) };
}

function movingSeconds(grid: Grid, from: number, to: number): number {
  if (grid.active) {
    let swum = 0;
    for (let i = from; i < to; i++) if (grid.running[i] && grid.active[i]) swum++;
    return swum;
  }
  const { speed, power, cadence } = grid.channels;
  const anyMotionChannel = speed || power || cadence;
  const recorded = Object.values(grid.channels);
  let moving = 0;
  for (let i = from; i < to; i++) {
    if (!grid.running[i]) continue;
    const moves = anyMotionChannel
      ? (speed !== undefined && speed[i]! >= STANDSTILL_SPEED) ||
        (power !== undefined && power[i]! > 0) ||
        (cadence !== undefined && cadence[i]! > 0)
      : recorded.some((x) => !Number.isNaN(x[i]!));
    if (moves) moving++;
  }
  return moving;
}

/** Normalized power over [from, to) (see the module comment); undefined under NP_WINDOW_SECONDS recorded running seconds. */
export function normalizedPower(power: Float64Array, running: Uint8Array, from: number, to: number): number | undefined {
  return normalisedMean(power, NP_WINDOW_SECONDS, from, to, running);
}

/**
 * The statistics of each lap. A lap owns the grid seconds whose 1 s bin overlaps [lap.start,
 * lap.end): from ⌊(start − grid.start)/1 s⌋ to ⌈(end − grid.start)/1 s⌉, clamped to the grid (FIT
 * lap starts are whole seconds, so consecutive laps share no second unless the file's laps
 * overlap). A recording without laps gets one lap spanning the activity (`activity`, by default
 * the whole grid).
 */
export function lapStats(
  grid: Grid,
  laps: readonly Lap[],
  activity: { start: number; end: number; totals?: SpanTotals } = { start: grid.start, end: grid.start + grid.length * 1000 },
): LapStats[] {
  const spans =
    laps.length > 0
      ? laps.map((lap) => ({
          start: lap.start.getTime(),
          end: lap.end.getTime(),
          totals: { ascent: lap.totalAscent, descent: lap.totalDescent },
        }))
      : [{ ...activity, totals: activity.totals ?? {} }];
  return spans.map(({ start, end, totals }) => {
    const from = clamp(Math.floor((start - grid.start) / 1000), 0, grid.length);
    const to = clamp(Math.ceil((end - grid.start) / 1000), from, grid.length);
    const times = timing(grid, { start, end }, from, to);
    return { start, end, ...times, ...summarise(grid, from, to, totals, times.moving_seconds) };
  });
}

// ─── Kernels ─────────────────────────────────────────────────────────────────────────────────────

interface Moments {
  count: number;
  first: number;
  last: number;
  min: number;
  max: number;
  mean: number;
}

/** One pass over x[from, to), NaN (and values `keep` refuses) skipped; undefined when no value is left. */
function moments(x: Float64Array, from: number, to: number, keep?: (v: number) => boolean): Moments | undefined {
  let count = 0;
  let sum = 0;
  let min = Infinity;
  let max = -Infinity;
  let first = Number.NaN;
  let last = Number.NaN;
  for (let i = from; i < to; i++) {
    const v = x[i]!;
    if (Number.isNaN(v) || (keep && !keep(v))) continue;
    if (count === 0) first = v;
    last = v;
    count++;
    sum += v;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  return count === 0 ? undefined : { count, first, last, min, max, mean: sum / count };
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
 * value recorded before the span (so that laps add up to the activity's total) to the last value
 * in it. With no value before the span, it counts from 0 when the first value can have been
 * covered since the grid's start (a pool swim's first record comes after its first length, 25 m),
 * else from that first value (a counter that did not start at 0, such as a later session of a
 * multisport file). Without distance values, Σ speed · 1 s.
 */
function distanceSum(channels: GridChannels, from: number, to: number): number | undefined {
  const d = channels.distance;
  const inSpan = d && moments(d, from, to);
  if (d && inSpan) {
    let before = Number.NaN;
    let at = -1;
    for (let i = from - 1; i >= 0 && Number.isNaN(before); i--) before = d[i]!;
    if (Number.isNaN(before)) {
      for (let i = from; i < to && at < 0; i++) if (!Number.isNaN(d[i]!)) at = i;
      before = inSpan.first <= DISTANCE_FROM_START_SPEED * (at + 1) ? 0 : inSpan.first;
    }
    return inSpan.last - before;
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
