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
 */
export const GATE_ACTIVITIES = Number(process.env.BENCH_GATE_ACTIVITIES ?? 300);
const ROUNDS = Number(process.env.BENCH_GATE_ROUNDS ?? 15);
const WARMUP_ROUNDS = 2;

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
    const timed = async (r: typeof service) => {
      const t0 = performance.now();
      await r.run();
      return performance.now() - t0;
    };
    const samples = await interleaved(
      ROUNDS,
      WARMUP_ROUNDS,
      () => timed(service),
      () => timed(script),
    );
    return {
      speedup: compareSamples(samples.ours, samples.baseline),
      label: `longitudinal-mean-max, 5 after values, ${GATE_ACTIVITIES} rides (HTTP) vs the DuckDB + numpy script`,
    };
  } finally {
    await family.close();
  }
}
