import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { meanMaxAll } from '../engine/curves/mean-max.ts';
import { meanMaxPlain } from '../engine/curves/mean-max-plain.ts';
import { type Comparison, compareSamples, formatChange } from './compare/stats.ts';
import { allDurations, fixturePower } from './engine-mean-max.ts';
import { longitudinalGate } from './gate-longitudinal.ts';
import { formatTable, ROOT } from './report.ts';

/**
 * `npm run bench -- gate [--record]`: the regression gate CI runs (.ci/run). Each check times this
 * checkout's code beside a baseline in the same process, interleaved round by round (the order
 * alternating), and takes their ratio, the speed-up, as bench/compare/stats.ts does (the median of
 * the rounds' ratios, a 95 % bootstrap interval). A ratio of two things timed side by side moves
 * little when the whole machine is slower (on this machine a plain scan took 129 ms one day and
 * 268 ms another): the gate compares it with the speed-up recorded on this kind of machine
 * (bench/gate.json) and fails below a floor set between that and a 30 % slowdown.
 *
 * - kernel: the exact mean-max kernel against the plain prefix-sum scan, every duration of every
 *   real FIT fixture with power (the rounds' sums);
 * - longitudinal: GET longitudinal-mean-max with 5 `after` values against the DuckDB + numpy
 *   script over the same sample files (bench/gate-longitudinal.ts).
 *
 * The floor: reference ÷ √1.3, halfway (in ratio) between the reference and a 30 % slowdown
 * (reference ÷ 1.3). A check fails when its estimate is below the floor. `--record` runs the checks
 * RECORD_RUNS times and writes bench/gate.json: each reference (the median of the runs' estimates)
 * and the noise seen (the farthest run's estimate, and the farthest end of a run's interval, from
 * the reference). The floor cannot flake while the runs' spread stays well inside √1.3 − 1 ≈ 14 %;
 * bench/README.md ("gate") gives the runs the reference came from.
 */
export const GATE_FILE = path.join(ROOT, 'bench', 'gate.json');
export const SLOWDOWN = 1.3;
export const RECORD_RUNS = 5;
const KERNEL_ROUNDS = Number(process.env.BENCH_GATE_ROUNDS ?? 15);
const WARMUP_ROUNDS = 2;

export interface GateCheck {
  id: 'kernel' | 'longitudinal';
  label: string;
  /** The speed-up (baseline time ÷ ours): its median over rounds, interval and rounds. */
  speedup: Comparison;
  /** From bench/gate.json (undefined before one is recorded). */
  reference?: number;
  floor?: number;
  passed: boolean;
}

export interface GateFile {
  machine: string;
  recorded: string;
  /**
   * Per check: the reference (the median of the runs' speed-ups), `spread` (the farthest run's
   * distance from it: 0.03 is 3 %), `interval` (the farthest end of a run's 95 % interval), the runs.
   */
  checks: Record<GateCheck['id'], { reference: number; spread: number; interval: number; runs: number[] }>;
}

export function floorOf(reference: number): number {
  return reference / Math.sqrt(SLOWDOWN);
}

/** Samples of ours and of the baseline, interleaved: `ours()` and `baseline()` each time one run (ms). */
export async function interleaved(
  rounds: number,
  warmup: number,
  ours: () => Promise<number> | number,
  baseline: () => Promise<number> | number,
): Promise<{ ours: number[]; baseline: number[] }> {
  const out = { ours: [] as number[], baseline: [] as number[] };
  for (let r = 0; r < warmup + rounds; r++) {
    let o: number;
    let b: number;
    if (r % 2 === 0) {
      o = await ours();
      b = await baseline();
    } else {
      b = await baseline();
      o = await ours();
    }
    if (r >= warmup) {
      out.ours.push(o);
      out.baseline.push(b);
    }
  }
  return out;
}

const timed = (fn: () => unknown) => {
  const t0 = performance.now();
  fn();
  return performance.now() - t0;
};

/** The kernel against the plain scan: each round, every fixture through both, in alternating order; the rounds' sums. */
export async function kernelGate(rounds = KERNEL_ROUNDS): Promise<{ speedup: Comparison; label: string }> {
  const series = (await fixturePower()).map(([, x]) => ({ x, durations: allDurations(x.length) }));
  const plain = ({ x, durations }: (typeof series)[number]) =>
    meanMaxPlain(x, durations, new Float64Array(x.length), new Int32Array(x.length));
  const samples = await interleaved(
    rounds,
    WARMUP_ROUNDS,
    () => series.reduce((ms, s) => ms + timed(() => meanMaxAll(s.x)), 0),
    () => series.reduce((ms, s) => ms + timed(() => plain(s)), 0),
  );
  const seconds = series.reduce((n, s) => n + s.x.length, 0);
  return {
    speedup: compareSamples(samples.ours, samples.baseline),
    label: `mean-max kernel vs plain scan, every duration of ${series.length} fixture series (${seconds} s)`,
  };
}

export function readGateFile(): GateFile | undefined {
  try {
    return JSON.parse(readFileSync(GATE_FILE, 'utf8')) as GateFile;
  } catch {
    return undefined;
  }
}

export async function runGate(): Promise<GateCheck[]> {
  const recorded = readGateFile();
  const checks: GateCheck[] = [];
  for (const [id, measure] of [
    ['kernel', kernelGate],
    ['longitudinal', longitudinalGate],
  ] as const) {
    const { speedup, label } = await measure();
    const reference = recorded?.checks[id]?.reference;
    const floor = reference === undefined ? undefined : floorOf(reference);
    checks.push({ id, label, speedup, reference, floor, passed: floor !== undefined && speedup.ratio >= floor });
  }
  return checks;
}

/** `--record`: RECORD_RUNS runs of every check; bench/gate.json from their estimates. */
export async function recordGate(log: (line: string) => void): Promise<GateFile> {
  const runs: Record<GateCheck['id'], Comparison[]> = { kernel: [], longitudinal: [] };
  for (let i = 0; i < RECORD_RUNS; i++) {
    runs.kernel.push((await kernelGate()).speedup);
    runs.longitudinal.push((await longitudinalGate()).speedup);
    log(`run ${i + 1}: kernel ${runs.kernel.at(-1)!.ratio.toFixed(2)}×, longitudinal ${runs.longitudinal.at(-1)!.ratio.toFixed(2)}×`);
  }
  const summary = (cs: Comparison[]) => {
    const estimates = cs.map((c) => c.ratio).sort((a, b) => a - b);
    const reference = estimates[estimates.length >> 1]!;
    const farthest = (values: number[]) => Math.expm1(Math.max(...values.map((v) => Math.abs(Math.log(v / reference)))));
    const r3 = (x: number) => Math.round(x * 1000) / 1000;
    return {
      reference: r3(reference),
      spread: r3(farthest(estimates)),
      interval: r3(farthest(cs.flatMap((c) => [c.low, c.high]))),
      runs: estimates.map(r3),
    };
  };
  const file: GateFile = {
    machine: `${process.env.BENCH_MACHINE ?? 'node-svc'}: 2 cores (the kind CI runs on)`,
    recorded: new Date().toISOString(),
    checks: { kernel: summary(runs.kernel), longitudinal: summary(runs.longitudinal) },
  };
  writeFileSync(GATE_FILE, `${JSON.stringify(file, null, 2)}\n`);
  return file;
}

export function formatGate(checks: GateCheck[]): string {
  const table = checks.map((c) => [
    c.label,
    `${c.speedup.ratio.toFixed(2)}×`,
    `${c.speedup.low.toFixed(2)}× … ${c.speedup.high.toFixed(2)}×`,
    c.reference === undefined ? '—' : `${c.reference.toFixed(2)}×`,
    c.reference === undefined ? '' : formatChange(c.speedup.ratio / c.reference),
    c.floor === undefined ? '—' : `${c.floor.toFixed(2)}×`,
    c.floor === undefined ? 'no reference (npm run bench -- gate --record)' : c.passed ? 'passed' : 'FAILED',
  ]);
  return formatTable(['check', 'speed-up', '95 % interval', 'reference', 'vs reference', 'floor', ''], table);
}
