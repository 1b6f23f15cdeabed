import path from 'node:path';
import { quantile } from '../report.ts';

/**
 * The settings of `npm run bench -- many-users` (bench/many-users/many-users.ts): its environment
 * (BENCH_MANY_USERS…), the dates and `after` values of its requests, and its targets.
 */
export const DAY = 86_400_000;
export const NEWEST = Date.UTC(2026, 9, 31, 7);
export const YEAR_SPAN = 364 * DAY;
export const FIRST_SPAN = 3 * 365 * DAY;
export const AFTER = [0, 250, 500, 1000, 1500];
/** The same fatigue states moved off the 250 kJ grid (engine/curves/after-grid.ts): computed from the samples. */
export const OFF_GRID_AFTER = [0, 300, 700, 1100, 1600];
/** Bump when what a seeded athlete is changes (rides, dates, channels, curves, derived files): the data is seeded again. */
export const SEED_FORMAT = 2;
export const POOL_SIZE = 500;
export const RAW_RUNS = 20;
export const SCRIPT_RUNS = 3;
export const TICK_SECONDS = 10;
export const MB = 2 ** 20;

export function intEnv(name: string, fallback: number, min = 0): number {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer ≥ ${min} (got ${JSON.stringify(raw)})`);
  return value;
}

export const COUNTS = [...new Set((process.env.BENCH_MANY_USERS ?? '1,20,100,300').split(',').map((s) => Number(s.trim())))].sort(
  (a, b) => a - b,
);
if (!COUNTS.length || COUNTS.some((n) => !Number.isInteger(n) || n < 1))
  throw new Error(`BENCH_MANY_USERS must list athlete counts ≥ 1, e.g. 1,20,100,300`);
export const RIDES = intEnv('BENCH_MANY_USERS_RIDES', 300, 1);
export const ROW_SECONDS = intEnv('BENCH_MANY_USERS_ROW_SECONDS', 20, 1);
export const SOAK_SECONDS = intEnv('BENCH_MANY_USERS_SECONDS', 600);
export const FIRST_RIDES = intEnv('BENCH_MANY_USERS_FIRST_RIDES', 1000, 1);
export const FIRST_ATHLETES = intEnv('BENCH_MANY_USERS_FIRST_ATHLETES', 5, 1);
export const SEEDERS = intEnv('BENCH_MANY_USERS_SEEDERS', 8, 1);
export const CONNECTIONS = intEnv('BENCH_MANY_USERS_CONNECTIONS', 12, 1);
export const DEFAULT_DIR = '/tmp/tds-bench-many';
export const DIR = path.resolve(process.env.BENCH_MANY_USERS_DIR || DEFAULT_DIR);
export const MARKER = path.join(DIR, 'bench-many-users.json');
export const QUEUE_PREFIX = 'tds_bench_many';

export const RANGE = `start=${new Date(NEWEST - YEAR_SPAN).toISOString().slice(0, 10)}&end=${new Date(NEWEST).toISOString().slice(0, 10)}`;
export const curvePath = (after: number[]) => `/api/v1/activities/longitudinal-mean-max?metric=power&after=${after.join(',')}&${RANGE}`;
export const CURVE_PATH = curvePath(AFTER);
export const OFF_GRID_PATH = curvePath(OFF_GRID_AFTER);
/** The `after` values of CURVE_PATH in the k-th of their 120 orders: the same computation, but no two requests in flight are one (rows come in the order asked). */
export const permutedPath = (k: number) => curvePath(permutation(AFTER, k % 120));

export function permutation<T>(items: readonly T[], k: number): T[] {
  const rest = [...items];
  const out: T[] = [];
  for (let n = rest.length; n > 0; n--) {
    const f = factorial(n - 1);
    out.push(rest.splice(Math.floor(k / f) % n, 1)[0]!);
    k %= f;
  }
  return out;
}
export const factorial = (n: number): number => (n <= 1 ? 1 : n * factorial(n - 1));

/** Targets: docs/architecture.md, "Benchmarks" (Targets). */
export const TARGET = {
  p50_ms: 150,
  p99_ms: 600,
  rpsShare: 1 / 3,
  rssMb: 1024,
  flat: 1.5,
  firstMs: 300,
  curvesShare: 0.2,
  rawMs: 50,
  rawSpeedup: 20,
};

export const r1 = (x: number) => Math.round(x * 10) / 10;

/** The median of `xs`, to 0.1. */
export const p50 = (xs: number[]) =>
  r1(
    quantile(
      [...xs].sort((a, b) => a - b),
      0.5,
    ),
  );
