/**
 * The exact mean-max kernel (engine/curves/mean-max.ts) beside the plain prefix-sum scan
 * (engine/curves/mean-max-plain.ts), measured in the same run on the same inputs (DESIGN.md §7):
 *
 * - every duration 1..n of a synthetic 4 h ride at 1 Hz (target p50 ≤ 10 ms, ≥ 10× the plain scan);
 * - the 19 default durations of the same ride (target ≤ 1 ms);
 * - every duration of each real FIT fixture with power (decoded, resampled to 1 Hz, gaps as 0 W);
 * - adversarial series of 4 h (constant, all zero, a ramp, noise; no target: not pathological);
 * - five "after" cuts in one pass beside five separate `from` searches (the kernel both times).
 *
 * Each workload: both outputs compared (values with Object.is, starts), a warm-up, then ITERATIONS
 * timed runs of each (p50, p90). `npx tsx bench/engine-mean-max.ts` prints the table.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseFit } from '../engine/ingest/fit.ts';
import { meanMax, meanMaxAfter, meanMaxAll } from '../engine/curves/mean-max.ts';
import { meanMaxPlain } from '../engine/curves/mean-max-plain.ts';
import { DEFAULT_DURATIONS as DEFAULTS } from '../engine/curves/durations.ts';
import { prng } from './synthetic.ts';
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

/** The adversarial series: no target, but none should be far slower than the plain scan. */
function adversarial(n: number): Array<[string, Float64Array]> {
  const rand = prng(7);
  return [
    ['constant 200 W', new Float64Array(n).fill(200)],
    ['all zero', new Float64Array(n)],
    ['ramp 0, 1, 2, …', Float64Array.from({ length: n }, (_, i) => i)],
    ['uniform noise 0..1000 W (integers)', Float64Array.from({ length: n }, () => Math.floor(rand() * 1001))],
    ['uniform noise 0..1000 (floats)', Float64Array.from({ length: n }, () => rand() * 1000)],
    ['constant 0.1 (float: ties up to rounding)', new Float64Array(n).fill(0.1)],
  ];
}

/** Power of every FIT fixture that has it, on the 1 Hz grid with gaps as 0 W. */
async function fixturePower(): Promise<Array<[string, Float64Array]>> {
  const dir = path.join(fixturesDir(), 'fit');
  const out: Array<[string, Float64Array]> = [];
  for (const file of readdirSync(dir).sort()) {
    let recordings;
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

function times(fn: () => unknown, iterations: number): number[] {
  for (let i = 0; i < WARMUP; i++) fn();
  const out: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const t0 = performance.now();
    fn();
    out.push(performance.now() - t0);
  }
  return out.sort((a, b) => a - b);
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

function row(workload: string, fast: () => unknown, baseline: () => unknown, identical: boolean, note?: string): MeanMaxRow {
  const f = times(fast, ITERATIONS);
  const b = times(baseline, ITERATIONS);
  const p50 = quantile(f, 0.5);
  const base50 = quantile(b, 0.5);
  return { workload, p50_ms: round3(p50), p90_ms: round3(quantile(f, 0.9)), baseline_p50_ms: round2(base50), speedup: round2(base50 / p50), identical, ...(note ? { note } : {}) };
}

function allDurations(n: number): Int32Array {
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
function allDurationsRow(workload: string, x: Float64Array, note?: string): MeanMaxRow {
  const durations = allDurations(x.length);
  const identical = sameCurve(meanMaxAll(x), plainCurve(x, durations));
  return row(workload, () => meanMaxAll(x), () => plainCurve(x, durations), identical, note);
}

export async function benchMeanMax(): Promise<{ rows: MeanMaxRow[] }> {
  const n = 4 * 3600;
  const ride = syntheticRidePower(n, 2024);
  const rows: MeanMaxRow[] = [];
  rows.push(allDurationsRow('all durations, synthetic 4 h ride (14,400 s)', ride, 'target p50 ≤ 10 ms, ≥ 10× plain'));

  const identical19 = sameCurve(fastCurve(ride, DEFAULT_DURATIONS), plainCurve(ride, DEFAULT_DURATIONS));
  rows.push(row('19 default durations, synthetic 4 h ride', () => fastCurve(ride, DEFAULT_DURATIONS), () => plainCurve(ride, DEFAULT_DURATIONS), identical19, 'target p50 ≤ 1 ms'));

  for (const [file, power] of await fixturePower()) {
    rows.push(allDurationsRow(`all durations, fixture ${file} (${power.length} s)`, power));
  }
  for (const [name, x] of adversarial(n)) rows.push(allDurationsRow(`all durations, ${name}, 14,400 s`, x, 'adversarial'));

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
  rows.push(row('5 after-cuts × all durations, synthetic 4 h ride (one pass)', () => meanMaxAfter(ride, durations, cuts), separate, identicalAfter, 'baseline: 5 separate meanMax({ from }) calls, not the plain scan'));
  return { rows };
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const { rows } = await benchMeanMax();
  console.log(
    formatTable(
      ['workload', 'p50 ms', 'p90 ms', 'plain p50 ms', 'speedup', 'identical', 'note'],
      rows.map((r) => [r.workload, r.p50_ms.toFixed(3), r.p90_ms.toFixed(3), r.baseline_p50_ms.toFixed(1), `${r.speedup.toFixed(1)}×`, String(r.identical), r.note ?? '']),
    ),
  );
}
