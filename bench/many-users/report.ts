import { spawnSync } from 'node:child_process';
import os from 'node:os';
import { formatTable, ROOT, writeReport } from '../report.ts';
import type { ApiProcess, RssSampler } from './api-process.ts';
import type { FirstRequest } from './first-request.ts';
import type { Soak } from './many-athletes.ts';
import type { Tick } from './requests.ts';
import type { Bench } from './seed.ts';
import { CONNECTIONS, COUNTS, CURVE_PATH, DIR, FIRST_ATHLETES, FIRST_RIDES, RIDES, ROW_SECONDS, SOAK_SECONDS } from './settings.ts';
import type { Storage } from './storage.ts';

/**
 * The rows of `npm run bench -- many-users`, what its parts share while they run, and its report:
 * the table printed and bench/results/many-users-<time>.json written.
 */
export interface Row {
  workload: string;
  athletes: number;
  rides: number;
  requests: number;
  errors: number;
  rps?: number;
  p50_ms: number;
  p99_ms?: number;
  max_ms?: number;
  rss_peak_mb?: number;
  cpu_ms?: number;
  baseline?: { name: string; p50_ms: number };
  target?: string;
  met?: boolean;
  note?: string;
}

/** The commit measured: git's HEAD, or BENCH_COMMIT when the tree is an export of one (`git archive`). */
export function commit(): string {
  if (process.env.BENCH_COMMIT) return process.env.BENCH_COMMIT;
  const r = spawnSync('git', ['log', '-1', '--format=%h %s'], { cwd: ROOT, encoding: 'utf8' });
  const dirty = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: ROOT, encoding: 'utf8' });
  return r.status === 0 ? `${r.stdout.trim().slice(0, 120)}${dirty.stdout.trim() ? ' (with uncommitted changes)' : ''}` : 'unknown';
}
/**
 * What the parts of one run share: the bench data, the rows and notes so far, the RSS sampler, the
 * API's port, and the API process running now (stopped at the end whatever happens).
 */
export interface Run {
  bench: Bench;
  rows: Row[];
  notes: string[];
  rss: RssSampler;
  port: number;
  api?: ApiProcess;
}

/** The table and the notes printed; the report written (bench/results/many-users-<time>.json and latest.json). */
export function writeManyUsersReport(
  run: Run,
  {
    firstRequests,
    storage,
    soak,
    ticks,
  }: { firstRequests: FirstRequest[]; storage: Storage | undefined; soak: Soak | undefined; ticks: Tick[] },
): void {
  const { bench } = run;
  const at = new Date().toISOString();
  const fmt = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? '' : String(x));
  const header = [
    'workload',
    'athletes',
    'rides',
    'requests',
    'errors',
    'req/s',
    'p50 ms',
    'p99 ms',
    'max ms',
    'API CPU ms/req',
    'RSS peak MB',
    'baseline p50 ms',
    'target',
    'met',
    'note',
  ];
  const table = run.rows.map((r) => [
    r.workload,
    fmt(r.athletes || undefined),
    fmt(r.rides),
    fmt(r.requests || undefined),
    r.requests ? String(r.errors) : '',
    fmt(r.rps),
    fmt(r.p50_ms),
    fmt(r.p99_ms),
    fmt(r.max_ms),
    fmt(r.cpu_ms),
    fmt(r.rss_peak_mb),
    r.baseline ? `${r.baseline.p50_ms} (${(r.baseline.p50_ms / r.p50_ms).toFixed(1)}×)` : '',
    r.target ?? '',
    r.met === undefined ? '' : r.met ? 'met' : 'MISSED',
    r.note ?? '',
  ]);
  const head = commit();
  const seeding = bench.marker.seedings.at(-1);
  process.stdout.write(
    `\n${os.cpus().length} cores, Node ${process.version}, commit ${head}, load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}\n`,
  );
  process.stdout.write(
    `data: ${DIR}; seeding ${bench.seededNow ? `this run: ${bench.seededNow.rides.toLocaleString('en')} rides in ${bench.seededNow.seconds.toFixed(0)} s, ${((bench.seededNow.seconds / bench.seededNow.rides) * 1000).toFixed(1)} s per 1,000` : seeding ? `reused (last: ${seeding.rides.toLocaleString('en')} rides, ${seeding.per_1000_s} s per 1,000)` : 'reused'}\n\n`,
  );
  process.stdout.write(formatTable(header, table));
  for (const note of run.notes) process.stdout.write(`note: ${note}\n`);
  const report = {
    benchmark: 'many-users',
    at,
    node: process.version,
    cores: os.cpus().length,
    load: os.loadavg(),
    commit: head,
    settings: {
      counts: COUNTS,
      rides: RIDES,
      row_seconds: ROW_SECONDS,
      soak_seconds: SOAK_SECONDS,
      first_rides: FIRST_RIDES,
      first_athletes: FIRST_ATHLETES,
      connections: CONNECTIONS,
      query: CURVE_PATH,
      dir: DIR,
    },
    seeding: { this_run: bench.seededNow ?? null, history: bench.marker.seedings },
    rows: run.rows,
    first_requests: firstRequests,
    storage,
    soak: soak ? { ...soak.stats, rss_first_third_max_mb: soak.firstThirdMb, rss_last_third_max_mb: soak.lastThirdMb, ticks } : null,
    rss: run.rss.series,
  };
  process.stdout.write(`\nwrote ${writeReport('many-users', report)} and bench/results/latest.json\n`);
}
