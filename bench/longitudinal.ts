import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestService, type TestService } from '../test/helpers/service.ts';
import { createTestUser, tokenFor } from '../test/helpers/users.ts';
import { DEFAULT_DURATIONS } from '../engine/curves/durations.ts';
import { columnsDir } from '../lib/storage.ts';
import { sampleKey } from '../lib/object-store.ts';
import { objectFile } from '../lib/object-store-local.ts';
import { rm } from 'node:fs/promises';
import { simulateRide } from '../test/helpers/synthetic.ts';
import { storeSynthetic } from './curves.ts';
import { printAndWriteReport, quantile, recordTarget, ROOT } from './report.ts';

/**
 * `npm run bench -- longitudinal`: longitudinal mean-max from raw streams (issue 15, item 1), over
 * HTTP, for histories of BENCH_LONGITUDINAL_SIZES (default 100, 1000, 5000) rides of 30 min to 3 h
 * within one year (the `after` range limit), beside what a client would do instead: a Python script
 * (bench/longitudinal_baseline.py) reading the same sample files with DuckDB and computing with numpy,
 * whose answers must equal the service's value for value.
 *
 * Rows per size: 5 `after` values by duration at the default durations (target at 1,000: p50 ≤ 50 ms
 * and ≥ 20× the script), the first request (the channel columns appended as ingestion does), the
 * first without channel columns (every activity read from its sample file), the first after a new
 * activity, and 5 `after` values by intensity at every duration (target at 1,000: ≤ 1 s; sizes up to
 * BENCH_LONGITUDINAL_INTENSITY_MAX, default 1,000). The service: 2 engine threads, response cache off.
 */
const SIZES = (process.env.BENCH_LONGITUDINAL_SIZES ?? '100,1000,5000').split(',').map(Number);
const RUNS = Number(process.env.BENCH_LONGITUDINAL_RUNS ?? 7);
const INTENSITY_MAX = Number(process.env.BENCH_LONGITUDINAL_INTENSITY_MAX ?? 1000);
const AFTER = [0, 250, 500, 1000, 1500];
const DAY = 86_400_000;
const NEWEST = Date.UTC(2026, 9, 31, 7);

interface Row {
  activities: number;
  samples: number;
  workload: string;
  p50_ms: number;
  runs: number;
  baseline?: { name: string; p50_ms: number } | undefined;
  target?: string;
  met?: boolean;
}

async function seed(service: TestService, userId: string, count: number, index: number): Promise<void> {
  const span = 364 * DAY;
  const start = NEWEST - span + Math.floor((index * span) / Math.max(1, count)) + (index % 7) * 3_600_000;
  const seconds = 1800 + ((index * 7919) % 9000);
  const ride = simulateRide({ start: new Date(start), seconds, seed: 5000 + index });
  const channels = { power: Float64Array.from(ride, (s) => s.power), heart_rate: Float64Array.from(ride, (s) => s.heartRate) };
  await storeSynthetic(service, userId, { start, channels, name: `ride-${index}.fit` });
}

async function seedHistory(service: TestService, userId: string, count: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let i = next++; i < count; i = next++) await seed(service, userId, count, i);
    }),
  );
}

function p50(values: number[]): number {
  return (
    Math.round(
      quantile(
        [...values].sort((a, b) => a - b),
        0.5,
      ) * 10,
    ) / 10
  );
}

/** The Python script's answer and wall time (read + compute), or why it could not run. */
function script(paths: string[], durations: number[]): { seconds: number; best: (number | null)[][] } | { error: string } {
  return python({ paths, thresholds: AFTER.map((a) => a * 1000), durations });
}

/** The script's data mode: every file's timestamp and power read into numpy, in time order (wall time, rows). */
function scriptData(paths: string[]): { seconds: number; rows: number } | { error: string } {
  return python({ paths, data: true });
}

function python<T>(spec: object): T | { error: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-longitudinal-'));
  try {
    const input = path.join(dir, 'input.json');
    writeFileSync(input, JSON.stringify(spec));
    const run = spawnSync('python3', [path.join(ROOT, 'bench', 'longitudinal_baseline.py'), input], {
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    });
    if (run.status !== 0) return { error: (run.stderr || run.error?.message || 'failed').trim().split('\n').at(-1)! };
    return JSON.parse(run.stdout) as T;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function benchLongitudinal() {
  const rows: Row[] = [];
  const notes: string[] = [];
  process.stdout.write('\n== longitudinal (raw streams)\n');
  for (const size of SIZES) await sizeRows(size, rows, notes);
  printLongitudinal(rows, notes);
}

/** One history size, its service and seeded user, and how its rows ask for the fatigue curves. */
interface SizeRun {
  service: TestService;
  userId: string;
  token: string;
  size: number;
  listed: { id: string; samples: number }[];
  base: { activities: number; samples: number };
  range: string;
  get: (query: string) => Promise<{ ms: number; body: Record<string, unknown[]> }>;
}

/** The rows of one history size, in a service of its own: by duration, longitudinal-data, by intensity. */
async function sizeRows(size: number, rows: Row[], notes: string[]): Promise<void> {
  const service = await startTestService({
    env: { CURVE_CACHE_SECONDS: '0', ENGINE_THREADS: '2', LOG_LEVEL: 'warn', COMPUTE_TIMEOUT_MS: '600000' },
  });
  try {
    const user = await createTestUser(service);
    const token = await tokenFor(service, user, ['data:read']);
    process.stdout.write(`\nseeding ${size} rides within a year…\n`);
    await seedHistory(service, user.id, size);
    const listed = await service.deps.db
      .selectFrom('activities')
      .select(['id', 'samples'])
      .where('user_id', '=', user.id)
      .orderBy('start_time')
      .orderBy('id')
      .execute();
    const samples = listed.reduce((n, a) => n + a.samples, 0);
    const range = `start=${new Date(NEWEST - 364 * DAY).toISOString().slice(0, 10)}&end=${new Date(NEWEST).toISOString().slice(0, 10)}`;
    const after = AFTER.map((a) => `after=${a}`).join('&');
    const get = async (query: string) => {
      const t0 = performance.now();
      const res = await fetch(`${service.url}/api/v1/activities/longitudinal-mean-max?metric=power&${range}&${after}&${query}`, {
        headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
      });
      const body = await res.text();
      if (res.status !== 200) throw new Error(`${res.status} ${body}`);
      return { ms: performance.now() - t0, body: JSON.parse(body) as Record<string, unknown[]> };
    };
    const run: SizeRun = { service, userId: user.id, token, size, listed, base: { activities: size, samples }, range, get };
    await durationRows(run, rows, notes);
    rows.push(await dataRow(run));
    if (size <= INTENSITY_MAX) {
      const runs: number[] = [];
      for (let i = 0; i < 2; i++) runs.push((await get('by=intensity&durations=all')).ms);
      rows.push({
        ...run.base,
        workload: `by intensity, ${AFTER.length} after values, every duration`,
        p50_ms: p50(runs),
        runs: runs.length,
        ...(size === 1000 ? { target: 'p50 ≤ 1,000 ms', met: p50(runs) <= 1000 } : {}),
      });
    }
  } finally {
    await service.close();
  }
}

/** By duration: the first request, with and without the channel columns, warm beside the script, after one new activity. */
async function durationRows(run: SizeRun, rows: Row[], notes: string[]): Promise<void> {
  const { service, userId, size, base, get } = run;
  const cold = await get('by=duration');
  rows.push({
    ...base,
    workload: 'by duration, first request (channel columns appended at ingestion)',
    p50_ms: Math.round(cold.ms),
    runs: 1,
  });
  // Without the derived files: every activity of the range read from its sample file and appended.
  await rm(columnsDir(service.config.DATA_DIR, userId), { recursive: true, force: true });
  const rebuilt = await get('by=duration');
  rows.push({
    ...base,
    workload: 'by duration, first request without channel columns (rebuilt from the sample files)',
    p50_ms: Math.round(rebuilt.ms),
    runs: 1,
  });
  const warm: number[] = [];
  let last = cold.body;
  for (let i = 0; i < RUNS; i++) {
    const r = await get('by=duration');
    warm.push(r.ms);
    last = r.body;
  }
  const durations = Array.from(DEFAULT_DURATIONS);
  const baselineRuns = scriptBeside(run, durations, last, notes);
  const warmP50 = p50(warm);
  const scriptP50 = baselineRuns.length ? p50(baselineRuns) : undefined;
  rows.push({
    ...base,
    workload: `by duration, ${AFTER.length} after values, ${durations.length} default durations`,
    p50_ms: warmP50,
    runs: RUNS,
    baseline: scriptP50 === undefined ? undefined : { name: 'DuckDB + numpy script', p50_ms: scriptP50 },
    ...(size === 1000
      ? { target: 'p50 ≤ 50 ms and ≥ 20× the script', met: warmP50 <= 50 && scriptP50 !== undefined && scriptP50 >= 20 * warmP50 }
      : {}),
  });

  // One more activity, appended to the columns as ingestion does.
  await seed(service, userId, size, size);
  const extended = await get('by=duration');
  rows.push({ ...base, workload: 'by duration, first request after one new activity', p50_ms: Math.round(extended.ms), runs: 1 });
}

/**
 * The script over the same sample files, 3 runs (ms), its first answer checked value for value
 * against the service's last (`last`); none when it cannot run (a note says why).
 */
function scriptBeside(run: SizeRun, durations: number[], last: Record<string, unknown[]>, notes: string[]): number[] {
  const { service, userId, size, listed } = run;
  const baseline = script(
    listed.map((a) => objectFile(service.config.DATA_DIR, sampleKey(userId, a.id))),
    durations,
  );
  const baselineRuns = 'error' in baseline ? [] : [baseline.seconds * 1000];
  if (!('error' in baseline)) {
    for (let i = 1; i < 3; i++) {
      const again = script(
        listed.map((a) => objectFile(service.config.DATA_DIR, sampleKey(userId, a.id))),
        durations,
      );
      if (!('error' in again)) baselineRuns.push(again.seconds * 1000);
    }
    // The script's answers, value for value, against the service's rows (duration, power, after).
    const want = new Map<string, number>();
    baseline.best.forEach((row, j) => row.forEach((v, k) => v !== null && want.set(`${AFTER[j]}/${durations[k]}`, v)));
    const got = new Map<string, number>();
    (last.duration as number[]).forEach((d, r) => got.set(`${(last.after as number[])[r]}/${d}`, (last.power as number[])[r]!));
    const same = want.size === got.size && [...want].every(([key, v]) => got.get(key) === v);
    if (!same) throw new Error(`the service and the script disagree at ${size} activities (${got.size} vs ${want.size} values)`);
  } else {
    notes.push(`baseline script unavailable (${baseline.error}); pip install duckdb numpy`);
  }
  return baselineRuns;
}

/** The samples themselves: longitudinal-data (Parquet, streamed), beside the script reading them into numpy. */
async function dataRow(run: SizeRun): Promise<Row> {
  const { service, userId, token, size, base, range } = run;
  const data: number[] = [];
  let served = 0;
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    const res = await fetch(`${service.url}/api/v1/activities/longitudinal-data?metrics=power&${range}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const bytes = new Uint8Array(await res.arrayBuffer());
    if (res.status !== 200) throw new Error(`longitudinal-data: ${res.status}`);
    data.push(performance.now() - t0);
    served = bytes.length;
  }
  const dataPaths = (await service.deps.db.selectFrom('activities').select('id').where('user_id', '=', userId).execute()).map((a) =>
    objectFile(service.config.DATA_DIR, sampleKey(userId, a.id)),
  );
  const scriptRuns: number[] = [];
  for (let i = 0; i < 3; i++) {
    const r = scriptData(dataPaths);
    if (!('error' in r)) scriptRuns.push(r.seconds * 1000);
  }
  return {
    ...base,
    workload: `longitudinal-data, power, Parquet (${(served / 2 ** 20).toFixed(0)} MiB streamed)`,
    p50_ms: p50(data),
    runs: data.length,
    baseline: scriptRuns.length ? { name: 'DuckDB → numpy script', p50_ms: p50(scriptRuns) } : undefined,
    ...(size === 1000 ? { target: '≥ 2× the script', met: scriptRuns.length > 0 && p50(scriptRuns) >= 2 * p50(data) } : {}),
  };
}

/** The targets recorded; the table and the notes printed; the report written. */
function printLongitudinal(rows: Row[], notes: string[]): void {
  for (const r of rows) {
    if (r.target !== undefined) {
      const speedup = r.baseline ? `, ${(r.baseline.p50_ms / r.p50_ms).toFixed(1)}× the script` : '';
      recordTarget({
        benchmark: 'longitudinal',
        target: `${r.activities} rides, ${r.workload}: ${r.target}`,
        figure: `p50 ${r.p50_ms.toFixed(0)} ms${speedup}`,
        met: r.met === true,
      });
    }
  }
  const header = [
    'activities',
    'samples',
    'workload',
    'p50 ms',
    'µs per 1k samples',
    'baseline',
    'baseline p50 ms',
    'speed-up',
    'target',
    'met',
  ];
  const table = rows.map((r) => [
    String(r.activities),
    String(r.samples),
    r.workload,
    r.p50_ms.toFixed(1),
    ((r.p50_ms * 1000) / (r.samples / 1000)).toFixed(1),
    r.baseline?.name ?? '',
    r.baseline ? r.baseline.p50_ms.toFixed(1) : '',
    r.baseline ? `${(r.baseline.p50_ms / r.p50_ms).toFixed(1)}×` : '',
    r.target ?? '',
    r.met === undefined ? '' : r.met ? 'met' : 'MISSED',
  ]);
  printAndWriteReport('longitudinal', { header, table, notes, fields: { rows } });
}
