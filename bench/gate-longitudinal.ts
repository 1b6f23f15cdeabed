import { fixturesDir } from '../test/helpers/fixtures.ts';
import { Side } from './compare/side.ts';
import { interleaved, type Measured, measured } from './gate-rounds.ts';
import { ROOT } from './report.ts';

/**
 * The gate's longitudinal check (bench/gate.ts): GET longitudinal-mean-max with 5 `after` values by
 * duration (the compare family's `longitudinal/by-duration-after-5` row) on GATE_ACTIVITIES rides
 * within a year, this checkout's service and the reference commit's, each opened by the compare
 * family in a sampler process of its own tree (bench/compare/side.ts: its own service, database and
 * engine threads); the baseline the DuckDB + numpy script over this checkout's sample files (its
 * `longitudinal/duckdb-numpy-script` row, the script kept running: Python's start-up is not
 * counted). The three are interleaved in ROUNDS rounds; each sampler times its own samples.
 *
 * A first version (one request a sample, 2 warm-up rounds) read the first run of a fresh process
 * 35 % low: each service is warmed with SERVICE_WARMUP requests, and each of its samples is the mean
 * of SERVICE_RUNS requests (one request, about 7 ms, is at the mercy of one GC or one thread
 * hand-off; the script's run, about 1 s, is not). With 5 requests a sample, 11 runs of the
 * reference against itself read changes from −4.5 to +8.8 %; with 20, five read −4.4 to +3.7 %.
 */
export const GATE_ACTIVITIES = Number(process.env.BENCH_GATE_ACTIVITIES ?? 300);
const ROUNDS = Number(process.env.BENCH_GATE_ROUNDS ?? 15);
const WARMUP_ROUNDS = 2;
const SERVICE_WARMUP = 40;
const SERVICE_RUNS = Number(process.env.BENCH_GATE_SERVICE_RUNS ?? 20);
const SERVICE_ROW = 'longitudinal/by-duration-after-5';
const SCRIPT_ROW = 'longitudinal/duckdb-numpy-script';

export async function longitudinalGate(referenceRoot: string, options: { oursFirst?: boolean } = {}): Promise<Measured> {
  const env = { FIXTURES_DIR: fixturesDir(), BENCH_COMPARE_LONGITUDINAL_ACTIVITIES: String(GATE_ACTIVITIES) };
  const sides = { reference: new Side('reference', referenceRoot, env), ours: new Side('ours', ROOT, env) };
  try {
    // The reference's service is set up first, unless `oursFirst` (the gate's second measurement).
    const order = Object.entries(sides);
    if (options.oursFirst) order.reverse();
    for (const [name, side] of order) {
      const opened = await side.request<{ op: string; rows: { id: string }[]; failed: { message: string }[] }>({
        op: 'open',
        side: name,
        root: side.root,
        families: ['longitudinal'],
      });
      if (opened.failed.length) throw new Error(`longitudinal on ${name} (${side.root}): ${opened.failed[0]!.message}`);
      if (!opened.rows.some((r) => r.id === SERVICE_ROW)) throw new Error(`the longitudinal family on ${name} has no row ${SERVICE_ROW}`);
    }
    const sample = (side: Side, name: string, row: string, reps: number) => async () =>
      (await side.request<{ op: string; ms: number }>({ op: 'sample', key: `${name}:${row}`, reps })).ms;
    const reference = sample(sides.reference, 'reference', SERVICE_ROW, SERVICE_RUNS);
    const ours = sample(sides.ours, 'ours', SERVICE_ROW, SERVICE_RUNS);
    await sample(sides.reference, 'reference', SERVICE_ROW, SERVICE_WARMUP)();
    await sample(sides.ours, 'ours', SERVICE_ROW, SERVICE_WARMUP)();
    const [o, r, script] = await interleaved(ROUNDS, WARMUP_ROUNDS, [ours, reference, sample(sides.ours, 'ours', SCRIPT_ROW, 1)]);
    return measured(
      `longitudinal-mean-max, 5 after values, ${GATE_ACTIVITIES} rides (HTTP); baseline the DuckDB + numpy script`,
      o!,
      r!,
      script!,
    );
  } finally {
    await Promise.all(Object.values(sides).map((s) => s.close()));
  }
}
