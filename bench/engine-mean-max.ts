/**
 * The exact mean-max kernel (engine/curves/mean-max.ts) beside the plain prefix-sum scan
 * (engine/curves/mean-max-plain.ts), measured in the same run on the same inputs (docs/architecture.md, "Benchmarks" (Targets)):
 *
 * - every duration 1..n of a synthetic 4 h ride at 1 Hz (target p50 ≤ 5 ms);
 * - the 19 default durations of the same ride (target ≤ 1 ms);
 * - every duration of each real FIT fixture with power (decoded, resampled to 1 Hz, gaps as 0 W;
 *   target ≤ 5 ms);
 * - adversarial series of 4 h (target ≤ 20 ms each): constants (integer and 0.1, which ties up to
 *   rounding), all zero, a ride with four 21,733 W glitch samples, integer and float noise,
 *   sawtooth power at periods 100, 97 (not a divisor of the length) and 7, a 30/30 s square wave,
 *   an integer sine of period 61.7 s, float sines of periods 100, 37 and 7 s (windows a period
 *   apart tie up to rounding at every duration: the hardest series found, dearer the shorter the
 *   period), a step and ramps; and periodic signals with noise (ERG intervals, a noisy sawtooth and
 *   square wave);
 * - a synthetic 24 h ride (target ≤ 60 ms), and the growth from 1 h to 48 h of the float sine of period 100 s
 *   (identity checked at a sample of durations from 12 h on, the plain scan's time beside it to 12 h);
 * - five "after" cuts in one pass beside five separate `from` searches (the kernel both times);
 * - a longitudinal floor (the running best of earlier activities) as engine/curves/longitudinal.ts
 *   passes it, restricted to the activity's own durations, and no floor: a floor must never be
 *   slower than none.
 *
 * Each workload: both outputs compared (values with Object.is, starts), a warm-up, then ITERATIONS
 * timed runs of each (p50, p90; the plain scan of long series fewer times). `npx tsx
 * bench/engine-mean-max.ts` prints the table.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseFit } from '../engine/ingest/fit.ts';
import { meanMax, meanMaxAfter, meanMaxAll } from '../engine/curves/mean-max.ts';
import { meanMaxPlain } from '../engine/curves/mean-max-plain.ts';
import { workCuts } from '../engine/curves/longitudinal.ts';
import { DEFAULT_DURATIONS as DEFAULTS } from '../engine/curves/durations.ts';
import { prng } from '../test/helpers/synthetic.ts';
import { resample } from '../engine/ingest/resample.ts';
import { fixturesDir } from '../test/helpers/fixtures.ts';
import { formatTable, quantile, round2 } from './report.ts';

export interface MeanMaxRow {
  workload: string;
  p50_ms: number;
  p90_ms: number;
  baseline_p50_ms: number;
  speedup: number;
  identical: boolean;
  note?: string;
}

const ITERATIONS = Number(process.env.BENCH_MEAN_MAX_ITERATIONS ?? 21);
const WARMUP = 3;
/** Timed runs of a baseline slower than this (ms) are cut to BASELINE_FEW. */
const SLOW_BASELINE = 100;
const BASELINE_FEW = 5;
/** The API's default durations (engine/curves/durations.ts). */
export const DEFAULT_DURATIONS = Int32Array.from(DEFAULTS);

/**
 * A ride's power at 1 Hz, whole watts: a slowly varying endurance base (150–300 W) with noise,
 * threshold intervals every ~25 min, sprints (700–1300 W, 5–15 s) every ~10 min, coasting (zeros,
 * a few to 40 s) and two stops of several minutes.
 */
export function syntheticRidePower(seconds: number, seed = 1): Float64Array {
  const rand = prng(seed);
  const out = new Float64Array(seconds);
  const phase1 = rand() * 2 * Math.PI;
  const phase2 = rand() * 2 * Math.PI;
  let noise = 0;
  let effort = 0; // seconds left in the current interval or sprint
  let effortWatts = 0;
  let coast = 0;
  const stops = [0.3, 0.65].map((f) => ({ at: Math.floor(seconds * (f + 0.1 * rand())), len: 180 + Math.floor(rand() * 600) }));
  for (let i = 0; i < seconds; i++) {
    const base = 225 + 55 * Math.sin((2 * Math.PI * i) / 2700 + phase1) + 20 * Math.sin((2 * Math.PI * i) / 611 + phase2);
    noise = 0.85 * noise + (rand() - 0.5) * 40;
    if (effort === 0 && coast === 0) {
      const r = rand();
      if (r < 1 / 1500) [effort, effortWatts] = [180 + Math.floor(rand() * 300), 300 + rand() * 60];
      else if (r < 1 / 1500 + 1 / 600) [effort, effortWatts] = [5 + Math.floor(rand() * 11), 700 + rand() * 600];
      else if (r < 1 / 1500 + 1 / 600 + 1 / 90) coast = 3 + Math.floor(rand() * 38);
    }
    let watts = base + noise;
    if (effort > 0) {
      watts = effortWatts + noise;
      effort--;
    } else if (coast > 0) {
      watts = 0;
      coast--;
    }
    if (stops.some((s) => i >= s.at && i < s.at + s.len)) watts = 0;
    out[i] = Math.max(0, Math.round(watts));
  }
  return out;
}

/** A ride with four glitch samples of 21,733 W (as some power meters record). */
export function glitchedRide(seconds: number, seed = 2024): Float64Array {
  const x = syntheticRidePower(seconds, seed);
  for (const f of [0.11, 0.37, 0.52, 0.88]) x[Math.floor(f * seconds)] = 21_733;
  return x;
}

/** ERG-mode intervals on a trainer: 5 min at 300 W, 3 min at 150 W, ±3 W of noise. */
export function ergIntervals(seconds: number, seed = 5): Float64Array {
  const rand = prng(seed);
  return Float64Array.from({ length: seconds }, (_, i) => (i % 480 < 300 ? 300 : 150) + Math.floor(rand() * 7) - 3);
}

/** The adversarial series (target ≤ 20 ms each at 4 h). */
export function adversarial(n: number): Array<[string, Float64Array, string]> {
  const rand = prng(7);
  const target = 'adversarial, target ≤ 20 ms';
  const noisy = 'adversarial (noisy periodic), target ≤ 20 ms';
  const saw = (p: number) => Float64Array.from({ length: n }, (_, i) => 150 + (i % p));
  return [
    ['constant 200 W', new Float64Array(n).fill(200), target],
    ['all zero', new Float64Array(n), target],
    ['constant 0.1 (float: ties up to rounding)', new Float64Array(n).fill(0.1), target],
    ['ride with four 21,733 W glitches', glitchedRide(n), target],
    ['uniform noise 0..1000 W (integers)', Float64Array.from({ length: n }, () => Math.floor(rand() * 1001)), target],
    ['uniform noise 0..1000 (floats)', Float64Array.from({ length: n }, () => rand() * 1000), target],
    ['sawtooth 150 + i mod 100', saw(100), target],
    ['sawtooth 150 + i mod 97', saw(97), target],
    ['sawtooth 150 + i mod 7', saw(7), target],
    ['square wave 30 s 0 W / 30 s 300 W', Float64Array.from({ length: n }, (_, i) => (i % 60 < 30 ? 0 : 300)), target],
    [
      'integer sine, period 61.7 s',
      Float64Array.from({ length: n }, (_, i) => Math.round(200 + 100 * Math.sin((2 * Math.PI * i) / 61.7))),
      target,
    ],
    ['float sine, period 100 s', floatSine(n, 100), `${target}; ties up to rounding`],
    ['float sine, period 37 s', floatSine(n, 37), `${target}; ties up to rounding`],
    ['float sine, period 7 s', floatSine(n, 7), `${target}; ties up to rounding, the hardest found`],
    ['step 100 W → 300 W at n/3', Float64Array.from({ length: n }, (_, i) => (i < n / 3 ? 100 : 300)), target],
    ['ramp 0, 1, 2, …', Float64Array.from({ length: n }, (_, i) => i), target],
    ['ramp down n, n−1, …', Float64Array.from({ length: n }, (_, i) => n - i), target],
    ['ERG intervals 5 min 300 W / 3 min 150 W ± 3 W', ergIntervals(n), noisy],
    [
      'sawtooth 150 + i mod 100, + 0..4 W noise',
      Float64Array.from({ length: n }, (_, i) => 150 + (i % 100) + Math.floor(rand() * 5)),
      noisy,
    ],
    [
      'square wave 30 s 100 W / 30 s 300 W ± 5 W',
      Float64Array.from({ length: n }, (_, i) => (i % 60 < 30 ? 100 : 300) + Math.floor(rand() * 11) - 5),
      noisy,
    ],
  ];
}

/**
 * A float sine of a whole-number period (the growth rows use 100 samples). At every multiple of the
 * period all windows sum alike up to rounding, and near those nearly so (engine/curves/mean-max.ts,
 * Cost). The shorter periods are dearer, up to the plain scan's cost, which the kernel then falls back to.
 */
export function floatSine(n: number, period: number): Float64Array {
  return Float64Array.from({ length: n }, (_, i) => 200 + 100 * Math.sin((2 * Math.PI * i) / period));
}

/** Power of every FIT fixture that has it, on the 1 Hz grid with gaps as 0 W. */
export async function fixturePower(): Promise<Array<[string, Float64Array]>> {
  const dir = path.join(fixturesDir(), 'fit');
  const out: Array<[string, Float64Array]> = [];
  for (const file of readdirSync(dir).sort()) {
    let recordings: Awaited<ReturnType<typeof parseFit>>;
    try {
      recordings = await parseFit(readFileSync(path.join(dir, file)));
    } catch {
      continue; // not an activity with records
    }
    for (const rec of recordings) {
      const power = resample(rec).channels.power;
      if (power) out.push([file, power.map((v) => (Number.isNaN(v) ? 0 : v))]);
    }
  }
  return out;
}

const sameCurve = (a: { best: Float64Array; start: Int32Array }, b: { best: Float64Array; start: Int32Array }) =>
  a.best.length === b.best.length && a.best.every((v, i) => Object.is(v, b.best[i])) && a.start.every((v, i) => v === b.start[i]);

function times(fn: () => unknown, iterations: number, warmup = WARMUP): number[] {
  for (let i = 0; i < warmup; i++) fn();
  const out: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const t0 = performance.now();
    fn();
    out.push(performance.now() - t0);
  }
  return out.sort((a, b) => a - b);
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

function row(
  workload: string,
  fast: () => unknown,
  baseline: (() => unknown) | null,
  identical: boolean,
  note?: string,
  iterations = ITERATIONS,
): MeanMaxRow {
  const f = times(fast, iterations, iterations < ITERATIONS ? 1 : WARMUP);
  const p50 = quantile(f, 0.5);
  let base50 = Number.NaN;
  if (baseline) {
    const t0 = performance.now();
    baseline(); // (a warm-up, and how long it takes)
    const slow = performance.now() - t0 > SLOW_BASELINE;
    base50 = quantile(times(baseline, slow ? Math.min(BASELINE_FEW, iterations) : iterations, slow ? 0 : WARMUP - 1), 0.5);
  }
  return {
    workload,
    p50_ms: round3(p50),
    p90_ms: round3(quantile(f, 0.9)),
    baseline_p50_ms: round2(base50),
    speedup: round2(base50 / p50),
    identical,
    ...(note ? { note } : {}),
  };
}

export function allDurations(n: number): Int32Array {
  return Int32Array.from({ length: n }, (_, i) => i + 1);
}

function plainCurve(x: Float64Array, durations: Int32Array) {
  const best = new Float64Array(durations.length);
  const start = new Int32Array(durations.length);
  meanMaxPlain(x, durations, best, start);
  return { best, start };
}

function fastCurve(x: Float64Array, durations: Int32Array) {
  const best = new Float64Array(durations.length);
  const start = new Int32Array(durations.length);
  meanMax(x, durations, best, start);
  return { best, start };
}

/** Every duration of `x`, the kernel beside the plain scan. */
function allDurationsRow(workload: string, x: Float64Array, note?: string, iterations = ITERATIONS): MeanMaxRow {
  const durations = allDurations(x.length);
  const identical = sameCurve(meanMaxAll(x), plainCurve(x, durations));
  return row(
    workload,
    () => meanMaxAll(x),
    () => plainCurve(x, durations),
    identical,
    note,
    iterations,
  );
}

export async function benchMeanMax(): Promise<{ rows: MeanMaxRow[] }> {
  const n = 4 * 3600;
  const ride = syntheticRidePower(n, 2024);
  const rows: MeanMaxRow[] = [];
  rows.push(allDurationsRow('all durations, synthetic 4 h ride (14,400 s)', ride, 'target p50 ≤ 5 ms'));

  const identical19 = sameCurve(fastCurve(ride, DEFAULT_DURATIONS), plainCurve(ride, DEFAULT_DURATIONS));
  rows.push(
    row(
      '19 default durations, synthetic 4 h ride',
      () => fastCurve(ride, DEFAULT_DURATIONS),
      () => plainCurve(ride, DEFAULT_DURATIONS),
      identical19,
      'target p50 ≤ 1 ms',
    ),
  );

  for (const [file, power] of await fixturePower()) {
    rows.push(allDurationsRow(`all durations, fixture ${file} (${power.length} s)`, power, 'target p50 ≤ 5 ms'));
  }
  for (const [name, x, note] of adversarial(n)) rows.push(allDurationsRow(`all durations, ${name}, 14,400 s`, x, note));

  // "After" curves: five cuts in one pass beside five searches from each cut (the kernel both times).
  const cuts = Int32Array.of(0, 1800, 3600, 7200, 10800);
  const durations = allDurations(n);
  const separate = () =>
    Array.from(cuts, (from) => {
      const best = new Float64Array(n);
      const start = new Int32Array(n);
      meanMax(ride, durations, best, start, { from });
      return { best, start };
    });
  const together = meanMaxAfter(ride, durations, cuts);
  const apart = separate();
  const identicalAfter = apart.every((c, j) => sameCurve(c, { best: together.best[j]!, start: together.start[j]! }));
  rows.push(
    row(
      '5 after-cuts × all durations, synthetic 4 h ride (one pass)',
      () => meanMaxAfter(ride, durations, cuts),
      separate,
      identicalAfter,
      'baseline: 5 separate meanMax({ from }) calls, not the plain scan',
    ),
  );

  const day = syntheticRidePower(24 * 3600, 2025);
  rows.push(allDurationsRow('all durations, synthetic 24 h ride (86,400 s)', day, 'target p50 ≤ 60 ms', 5));

  for (const hours of [1, 4, 12, 24, 48]) {
    const x = floatSine(hours * 3600, 100);
    rows.push(
      hours <= 12
        ? allDurationsRow(`growth: float sine (period 100 s), ${hours} h`, x, 'ties up to rounding', 5)
        : sampledRow(
            `growth: float sine (period 100 s), ${hours} h`,
            x,
            'ties up to rounding; plain scan not run, identity at 400 durations',
          ),
    );
  }

  rows.push(...floorRows());
  return { rows };
}

/** Every duration of a long series, the kernel alone: identity checked against the plain scan at a sample of durations. */
function sampledRow(workload: string, x: Float64Array, note: string): MeanMaxRow {
  const all = meanMaxAll(x);
  const n = x.length;
  const sample = Int32Array.from(
    new Set(
      [...Array.from({ length: 300 }, (_, k) => 1 + Math.floor((k * (n - 1)) / 299)), ...Array.from({ length: 100 }, (_, k) => n - k)]
        .filter((d) => d >= 1 && d <= n)
        .sort((a, b) => a - b),
    ),
  );
  const plain = plainCurve(x, sample);
  const identical = Array.from(sample).every((d, k) => Object.is(all.best[d - 1], plain.best[k]) && all.start[d - 1] === plain.start[k]);
  return row(workload, () => meanMaxAll(x), null, identical, note, 3);
}

/**
 * The longitudinal floor: the running best of earlier activities (rides of 2, 3 and 3 h) over the
 * durations of the query (to the longest activity, 5 h: NaN past 3 h), as afterByDuration passes
 * it to a 4 h ride with work cuts at 0, 500, 1000 and 1500 kJ; the same floor restricted to the
 * ride's own durations; and no floor. The floor's rows give the no-floor time as the baseline.
 */
function floorRows(): MeanMaxRow[] {
  const earlier = [syntheticRidePower(2 * 3600, 31), syntheticRidePower(3 * 3600, 32), syntheticRidePower(3 * 3600, 33)];
  const longest = 5 * 3600;
  const queryDurations = allDurations(longest);
  const floor = new Float64Array(longest).fill(Number.NaN);
  for (const x of earlier) {
    const curve = plainCurve(x, allDurations(x.length));
    for (let k = 0; k < x.length; k++) if (!(floor[k]! >= curve.best[k]!)) floor[k] = curve.best[k]!;
  }
  const ride = syntheticRidePower(4 * 3600, 2024);
  const cuts = workCuts(ride, Float64Array.of(0, 500_000, 1_000_000, 1_500_000));
  const own = allDurations(ride.length);
  const ownFloor = floor.slice(0, ride.length);
  const passed = () => meanMaxAfter(ride, queryDurations, cuts, { floor });
  const restricted = () => meanMaxAfter(ride, own, cuts, { floor: ownFloor });
  const none = () => meanMaxAfter(ride, own, cuts);
  // Identical: with the floor, each cut's curve is the no-floor one where it beats the floor, NaN / −1 elsewhere.
  const want = none();
  const got = passed();
  const gotOwn = restricted();
  const identical = want.best.every(
    (b, j) =>
      Array.from(b).every((v, k) => {
        const shown = v > floor[k]! || Number.isNaN(floor[k]!);
        const wv = shown ? v : Number.NaN;
        const ws = shown ? want.start[j]![k]! : -1;
        return Object.is(got.best[j]![k], wv) && got.start[j]![k] === ws && Object.is(gotOwn.best[j]![k], wv) && gotOwn.start[j]![k] === ws;
      }) && got.best[j]!.subarray(ride.length).every((v) => Number.isNaN(v)),
  );
  return [
    row(
      'floor as longitudinal passes it: 4 h ride, 4 cuts, durations to 5 h, floor NaN past 3 h',
      passed,
      none,
      identical,
      'baseline: no floor (must not be slower)',
    ),
    row("floor restricted to the ride's own durations (to 4 h)", restricted, none, identical, 'baseline: no floor'),
  ];
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const { rows } = await benchMeanMax();
  console.log(
    formatTable(
      ['workload', 'p50 ms', 'p90 ms', 'plain p50 ms', 'speedup', 'identical', 'note'],
      rows.map((r) => [
        r.workload,
        r.p50_ms.toFixed(3),
        r.p90_ms.toFixed(3),
        Number.isNaN(r.baseline_p50_ms) ? '—' : r.baseline_p50_ms.toFixed(1),
        Number.isNaN(r.speedup) ? '—' : `${r.speedup.toFixed(1)}×`,
        String(r.identical),
        r.note ?? '',
      ]),
    ),
  );
}
