import { freePort } from '../../test/helpers/service.ts';
import { RssSampler } from './api-process.ts';
import { type FirstRequest, firstRequests } from './first-request.ts';
import { manyAthletes, type Soak } from './many-athletes.ts';
import { oneAthlete } from './one-athlete.ts';
import { type Run, writeManyUsersReport } from './report.ts';
import type { Tick } from './requests.ts';
import { openBench } from './seed.ts';
import { CONNECTIONS, COUNTS, RIDES } from './settings.ts';
import { measureStorage, type Storage, storageRows } from './storage.ts';

/**
 * `npm run bench -- many-users` (issue 25; the many-users rows of docs/architecture.md, "Benchmarks" (Targets)): fatigue curves
 * (`longitudinal-mean-max`, power, 5 `after` values, one year, default durations, the curve cache off)
 * for a uniformly random athlete of U on every request, 12 keep-alive connections, the API in its own
 * process at its default settings, its RSS read from /proc every second.
 *
 * Data: a persistent database (`<DATABASE_URL db>_bench_many`) and data directory
 * (BENCH_MANY_USERS_DIR, default /tmp/tds-bench-many), seeded once through the bench helpers
 * (storeSynthetic: the sample file through DuckDB with fsync, the rows and the stored curves in one
 * transaction) and reused while its marker (bench-many-users.json) matches; an interrupted seeding
 * resumes athlete by athlete. Rides are drawn from a pool of 500 distinct synthetic rides of 30 min
 * to 3 h (power, heart rate, speed, cadence; their curves computed once in the engine pool), each
 * athlete's on its own dates.
 *
 * - `many` group: max(BENCH_MANY_USERS) athletes × BENCH_MANY_USERS_RIDES (300) rides over one year;
 *   a row per U of BENCH_MANY_USERS (default 1,20,100,300) of BENCH_MANY_USERS_ROW_SECONDS (20, after
 *   2 s not counted), then BENCH_MANY_USERS_SECONDS (600; 0: none) at the largest U, printed every
 *   10 s, its RSS first third against last third.
 * - `first` group: BENCH_MANY_USERS_FIRST_ATHLETES (5) × BENCH_MANY_USERS_FIRST_RIDES (1,000) rides
 *   over three years: each athlete's first request (the last year) in a fresh API process, one at a
 *   time, with the derived files as seeding left them, then again in another fresh process with the
 *   athlete's `columns/` removed.
 * - `dense` group: one athlete with BENCH_MANY_USERS_FIRST_RIDES rides within the year: the raw-stream
 *   row (20 requests, p50) beside bench/longitudinal_baseline.py (DuckDB + numpy) over the same files,
 *   answers compared value for value.
 * - stored curves: pg_total_relation_size('activity_curves') per activity beside the mean sample file.
 *
 * The folder: settings.ts (the environment, the requests' dates and `after` values, the targets),
 * seed.ts (the bench data, seeded once), api-process.ts (the API in its own process, its RSS and
 * CPU), requests.ts (tokens, one request, the closed loop), many-athletes.ts, first-request.ts,
 * one-athlete.ts and storage.ts (the rows, in the order they run), report.ts (the table and the file).
 */
export async function benchManyUsers() {
  const t0 = performance.now();
  process.stdout.write(
    `\n== many-users: U of ${COUNTS.join(', ')} athletes × ${RIDES} rides, ${CONNECTIONS} connections, random athlete per request\n\n`,
  );
  const bench = await openBench();
  const run: Run = { bench, rows: [], notes: [], rss: new RssSampler(t0), port: await freePort() };
  let ticks: Tick[] = [];
  let soak: Soak | undefined;
  let first: FirstRequest[] = [];
  let storage: Storage | undefined;
  try {
    // Stored curves beside the sample files (before any request writes derived files).
    storage = await measureStorage(bench);
    ({ ticks, soak } = await manyAthletes(run));
    const firsts = await firstRequests(run);
    first = firsts.firstRequests;
    await oneAthlete(run, firsts.api, firsts.denseToken, firsts.denseId);
    storageRows(run, storage);
  } finally {
    run.rss.stop();
    await run.api?.stop();
    await bench.lifecycle.close();
  }
  writeManyUsersReport(run, { firstRequests: first, storage, soak, ticks });
}
