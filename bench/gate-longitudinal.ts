import type { Comparison } from './compare/stats.ts';
import { compareSamples } from './compare/stats.ts';
import { longitudinalFamily } from './compare/families/longitudinal.ts';
import { treeAt } from './compare/row.ts';
import { interleaved } from './gate.ts';
import { ROOT } from './report.ts';

/**
 * The gate's longitudinal check (bench/gate.ts): this checkout's service answering
 * longitudinal-mean-max with 5 `after` values by duration (the compare family's
 * `longitudinal/by-duration-after-5` row) against the DuckDB + numpy script over the same sample
 * files (its `longitudinal/duckdb-numpy-script` row, the script kept running: Python's start-up is
 * not counted), GATE_ACTIVITIES rides within a year, interleaved in ROUNDS rounds in this process.
 * A first version (one request a sample, 2 warm-up rounds) gave speed-ups of 51, 77, 79, 83 and 85
 * in five runs: the first run of a fresh process 35 % low, past the floor.
 */
export const GATE_ACTIVITIES = Number(process.env.BENCH_GATE_ACTIVITIES ?? 300);
const ROUNDS = Number(process.env.BENCH_GATE_ROUNDS ?? 15);
const WARMUP_ROUNDS = 2;
const SERVICE_WARMUP = 40;
const SERVICE_RUNS = 5;

export async function longitudinalGate(): Promise<{ speedup: Comparison; label: string }> {
  const family = await longitudinalFamily.open(treeAt(ROOT), { activities: GATE_ACTIVITIES });
  try {
    const row = (id: string) => {
      const found = family.rows.find((r) => r.id === id);
      if (!found) throw new Error(`the longitudinal family has no row ${id}`);
      return found;
    };
    const service = row('longitudinal/by-duration-after-5');
    const script = row('longitudinal/duckdb-numpy-script');
    const timed = async (r: typeof service, runs: number) => {
      const t0 = performance.now();
      for (let i = 0; i < runs; i++) await r.run();
      return (performance.now() - t0) / runs;
    };
    // The service warmed well past its JIT's first tiers (its engine threads too), then each of its
    // samples the mean of SERVICE_RUNS requests: one request (about 15 ms) is at the mercy of one GC
    // or one thread hand-off, the script's run (about 1 s) is not.
    await timed(service, SERVICE_WARMUP);
    const samples = await interleaved(
      ROUNDS,
      WARMUP_ROUNDS,
      () => timed(service, SERVICE_RUNS),
      () => timed(script, 1),
    );
    return {
      speedup: compareSamples(samples.ours, samples.baseline),
      label: `longitudinal-mean-max, 5 after values, ${GATE_ACTIVITIES} rides (HTTP) vs the DuckDB + numpy script`,
    };
  } finally {
    await family.close();
  }
}
