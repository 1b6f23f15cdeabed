import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { startTestService, type TestService } from '../test/helpers/service.ts';
import { createTestUser, tokenFor } from '../test/helpers/users.ts';
import { prng } from '../test/helpers/prng.ts';
import { activityId, storeActivities } from '../db/activities.ts';
import { bumpDataAndReadVersion } from '../db/read-version.ts';
import { insertSource } from '../db/sources.ts';
import { dailyStress, insertActivityLoads, replaceThresholds } from '../db/training-load.ts';
import { trainingLoadColumns } from '../api/services/training-load/chart.ts';
import { performanceManagement } from '../engine/load/pmc.ts';
import { defaultZoneModel, zoneBounds } from '../engine/load/zones.ts';
import { formatLocal } from '../lib/time.ts';
import { loadsOfNewActivities } from '../workers/training-load.ts';
import { printAndWriteReport, quantile, recordTarget, ROOT } from './report.ts';

/**
 * `npm run bench -- training-load`: the performance management chart (GET
 * /api/v1/activities/longitudinal-training-load) of BENCH_TRAINING_LOAD_YEARS (10) years ×
 * BENCH_TRAINING_LOAD_PER_YEAR (500) activities, each with its load row (`activity_load`, as the ingest's
 * load step stores it), the response cache off (CURVE_CACHE_SECONDS=0: every request computes). Target
 * (the issue's): the whole range in ≤ 50 ms p50 over HTTP, beside a pandas script computing the same from
 * the activity list (bench/training_load_baseline.py: the list read with requests, the chart with pandas;
 * its values must equal the service's within 1e-9); adding one activity updates the chart without
 * recomputing the history (no other load row written).
 *
 * Rows: the recurrence alone (engine), the per-day sum alone (the SQL of db/training-load.ts dailyStress),
 * both in this process (the chart's columns), GET /healthz (the HTTP floor), the chart as JSON and as
 * Parquet (BENCH_TRAINING_LOAD_RUNS, 100, after 5 warm-up requests), JSON with gzip, one sport; then
 * one more activity stored as the ingest stores it (its load computed, then written with it by storeActivities) and the next chart.
 * The list's read cache is off too (READ_CACHE_SECONDS=0), so the script's pages are built for it.
 */
const YEARS = Number(process.env.BENCH_TRAINING_LOAD_YEARS ?? 10);
const PER_YEAR = Number(process.env.BENCH_TRAINING_LOAD_PER_YEAR ?? 500);
const RUNS = Number(process.env.BENCH_TRAINING_LOAD_RUNS ?? 100);
const WARMUP = 5;
const TARGET_MS = 50;
const DAY = 86_400_000;
const END_DAY = '2026-10-31';
const DAYS = Math.round(YEARS * 365.25);
const START_DAY = new Date(Date.parse(END_DAY) - (DAYS - 1) * DAY).toISOString().slice(0, 10);
const ACTIVITIES = YEARS * PER_YEAR;
const CRITICAL_POWER = 250;
const THRESHOLD_HR = 165;
const UTC_OFFSET = 3600;

type Timing = { runs: number; p50_ms: number; p99_ms: number };

interface Row {
  workload: string;
  result: Timing;
  baseline?: { name: string; p50_ms: number };
  target?: string;
  met?: boolean;
}

function timing(ms: number[]): Timing {
  const sorted = [...ms].sort((a, b) => a - b);
  const r = (x: number) => Math.round(x * 1000) / 1000;
  return { runs: sorted.length, p50_ms: r(quantile(sorted, 0.5)), p99_ms: r(quantile(sorted, 0.99)) };
}

async function measure(runs: number, fn: () => unknown, warmup = WARMUP): Promise<Timing> {
  for (let i = 0; i < warmup; i++) await fn();
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    ms.push(performance.now() - t0);
  }
  return timing(ms);
}

/** The time in zones a load row holds for a sport: each zone of its default models with some seconds. */
function zonesOf(root: string, seconds: number, rnd: () => number) {
  const share = (bounds: ReturnType<typeof zoneBounds>) =>
    bounds.map((b) => ({ ...b, seconds: Math.round((seconds / bounds.length) * rnd() * 2) }));
  const hr = defaultZoneModel(root, 'heart_rate');
  const out: Record<string, unknown> = { heart_rate: { model: hr.model, zones: share(zoneBounds(hr.zones, THRESHOLD_HR)) } };
  if (root === 'cycling') out.power = { model: 'coggan', zones: share(zoneBounds(defaultZoneModel(root, 'power').zones, CRITICAL_POWER)) };
  return out;
}

const DECLARED = { valid_from: '2000-01-01', origin: 'declared' };
const RESOLVED: Record<string, Record<string, unknown>> = {
  cycling: {
    critical_power: { value: CRITICAL_POWER, ...DECLARED },
    w_prime: { value: 20_000, ...DECLARED },
    threshold_heart_rate: { value: THRESHOLD_HR, ...DECLARED },
  },
  running: { critical_speed: { value: 4, ...DECLARED }, threshold_heart_rate: { value: THRESHOLD_HR, ...DECLARED } },
};

/** An activity of the history; `f` its intensity factor. */
type Planned = { id: string; sourceId: string; sport: string; root: string; start: number; seconds: number; f: number; scored: boolean };

/**
 * The history: ACTIVITIES activities on random days of the DAYS up to END_DAY (some days two or more,
 * many none), 80 % cycling, 10 % road cycling, 10 % running; stress 20–250 (hours × IF² × 100), 2 % with
 * no score (the reason the stress model gives).
 */
function plan(rnd: () => number): Planned[] {
  const first = Date.parse(START_DAY);
  return Array.from({ length: ACTIVITIES }, () => {
    const sport = rnd() < 0.8 ? 'cycling' : rnd() < 0.5 ? 'cycling.road' : 'running';
    const start = first + Math.floor(rnd() * DAYS) * DAY + (5 + Math.floor(rnd() * 12)) * 3_600_000;
    const f = 0.6 + 0.35 * rnd();
    const seconds = Math.round(((20 + 230 * rnd() ** 1.5) / (f * f * 100)) * 3600);
    const sourceId = randomUUID();
    return { id: activityId(sourceId, 0), sourceId, sport, root: sport.split('.')[0]!, start, seconds, f, scored: rnd() >= 0.02 };
  });
}

/** One batch's rows: sources, activities and load rows (under the thresholds' `version`). */
async function insertBatch(service: TestService, userId: string, batch: Planned[], version: number, rnd: () => number): Promise<void> {
  const { db } = service.deps;
  const now = new Date();
  await db
    .insertInto('sources')
    .values(
      batch.map((a) => ({
        id: a.sourceId,
        user_id: userId,
        type: 'fit' as const,
        origin: 'backfill' as const,
        status: 'processed' as const,
        filename: `${a.sourceId}.fit`,
        content_sha256: randomBytes(32).toString('hex'),
        size_bytes: 100_000 + a.seconds * 30,
        sport: null,
        processed_at: now,
      })),
    )
    .execute();
  await db
    .insertInto('activities')
    .values(
      batch.map((a) => ({
        id: a.id,
        user_id: userId,
        source_id: a.sourceId,
        session_index: 0,
        sport: a.sport,
        start_time: new Date(a.start),
        end_time: new Date(a.start + a.seconds * 1000),
        utc_offset_seconds: UTC_OFFSET,
        metrics: a.root === 'cycling' ? ['power', 'heart_rate', 'cadence'] : ['speed', 'heart_rate', 'cadence'],
        summary: JSON.stringify(
          a.root === 'cycling'
            ? { power: { mean: a.f * CRITICAL_POWER * 0.93, normalized: a.f * CRITICAL_POWER }, heart_rate: { mean: 140 } }
            : { speed: { mean: a.f * 4 }, heart_rate: { mean: 150 } },
        ),
        laps: null,
        distance: a.seconds * (a.root === 'cycling' ? 8 : 3),
        samples: a.seconds,
        timer_seconds: a.seconds,
        moving_seconds: a.seconds,
      })),
    )
    .execute();
  await db
    .insertInto('activity_load')
    .values(
      batch.map((a) => ({
        activity_id: a.id,
        user_id: userId,
        sport: a.sport,
        day: formatLocal(a.start, UTC_OFFSET).slice(0, 10),
        version,
        stress: a.scored ? (a.seconds / 3600) * a.f * a.f * 100 : null,
        method: a.scored ? (a.root === 'cycling' ? 'power' : 'pace') : null,
        intensity_factor: a.scored ? a.f : null,
        reason: a.scored ? null : 'The activity has no power, pace or heart rate to score',
        time_in_zones: JSON.stringify(zonesOf(a.root, a.seconds, rnd)),
        w_prime_balance_min: a.root === 'cycling' ? 20_000 * (1 - a.f * rnd()) : null,
        thresholds: JSON.stringify(RESOLVED[a.root]),
        computed_at: now,
      })),
    )
    .execute();
}

/**
 * The user's thresholds declared (so that a new activity gets a score), then the planned history
 * inserted in batches of 500 with its load rows under the thresholds' version; the user's versions
 * bumped once, as storing does; VACUUM ANALYZE (fresh statistics and visibility map, as after autovacuum).
 */
async function seed(service: TestService, userId: string): Promise<number> {
  const { db } = service.deps;
  const t0 = performance.now();
  const cycling = { critical_power: CRITICAL_POWER, w_prime: 20_000, threshold_heart_rate: THRESHOLD_HR };
  const { version } = await replaceThresholds(db, userId, [
    { sport: 'cycling', valid_from: DECLARED.valid_from, ...cycling },
    { sport: 'running', valid_from: DECLARED.valid_from, critical_speed: 4, threshold_heart_rate: THRESHOLD_HR },
  ]);
  const rnd = prng(42);
  const planned = plan(rnd);
  for (let i = 0; i < planned.length; i += 500) await insertBatch(service, userId, planned.slice(i, i + 500), version, rnd);
  await bumpDataAndReadVersion(db, userId);
  await sql`VACUUM ANALYZE`.execute(db);
  return (performance.now() - t0) / 1000;
}

/** What the rows ask the service for. */
interface Run {
  service: TestService;
  userId: string;
  token: string;
  get: (query: string, headers?: Record<string, string>) => Promise<{ bytes: number; text: string }>;
}

const RANGE = `start=${START_DAY}&end=${END_DAY}`;
const CHART = `/api/v1/activities/longitudinal-training-load?${RANGE}`;
const IDENTITY = { 'accept-encoding': 'identity' };

type Chart = Record<'date' | 'stress' | 'ctl' | 'atl' | 'tsb' | 'ramp_rate', (string | number)[]>;

/** The rows before the new activity; returns the service's last JSON chart. */
async function chartRows(run: Run, rows: Row[]): Promise<Chart> {
  const { service, userId, get } = run;
  const { db } = service.deps;
  const daily = await dailyStress(db, userId, undefined, END_DAY);
  const stress = new Float64Array(DAYS);
  for (const d of daily) stress[Math.round((Date.parse(d.day) - Date.parse(START_DAY)) / DAY)]! += d.stress;
  rows.push({
    workload: `recurrence alone (engine/load/pmc.ts), ${DAYS} days`,
    result: await measure(RUNS * 10, () => performanceManagement(stress)),
  });
  rows.push({
    workload: `per-day stress sum alone (dailyStress: SELECT day, sum(stress) … GROUP BY day), ${daily.length} days`,
    result: await measure(RUNS, () => dailyStress(db, userId, undefined, END_DAY)),
  });
  rows.push({
    workload: 'chart columns in-process (trainingLoadColumns: the sum + the recurrence)',
    result: await measure(RUNS, () => trainingLoadColumns(db, userId, undefined, START_DAY, END_DAY)),
  });
  rows.push({ workload: 'GET /healthz (the HTTP floor)', result: await measure(RUNS, () => get('/healthz', IDENTITY)) });
  let last = '';
  const json = await measure(RUNS, async () => (last = (await get(`${CHART}&format=json`, IDENTITY)).text));
  const targeted = (workload: string, result: Timing) => ({
    workload,
    result,
    target: `p50 ≤ ${TARGET_MS} ms`,
    met: result.p50_ms <= TARGET_MS,
  });
  rows.push(targeted(`GET longitudinal-training-load, ${DAYS} days, JSON`, json));
  let parquetBytes = 0;
  const parquet = await measure(RUNS, async () => (parquetBytes = (await get(CHART, IDENTITY)).bytes));
  const sizes = `${(parquetBytes / 1024).toFixed(0)} KiB; JSON ${(last.length / 1024).toFixed(0)} KiB`;
  rows.push(targeted(`GET longitudinal-training-load, ${DAYS} days, Parquet (${sizes})`, parquet));
  rows.push({
    workload: 'the same JSON with Accept-Encoding: gzip (the coded bytes of an unchanged answer reused by its ETag)',
    result: await measure(RUNS, () => get(`${CHART}&format=json`, { 'accept-encoding': 'gzip' })),
  });
  rows.push({
    workload: 'the same JSON, sport=cycling (with its sub-sports)',
    result: await measure(RUNS, () => get(`${CHART}&format=json&sport=cycling`, IDENTITY)),
  });
  return JSON.parse(last) as Chart;
}

interface Script {
  activities: number;
  fetch_seconds: number[];
  compute_seconds: number[];
  chart: Chart;
}

/** The pandas script against the running service (asynchronously: this process answers its requests). */
async function script(run: Run): Promise<Script | { error: string }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-training-load-'));
  try {
    const input = path.join(dir, 'input.json');
    const spec = { url: run.service.url, token: run.token, start: START_DAY, end: END_DAY, fetch_runs: 3, compute_runs: 20 };
    writeFileSync(input, JSON.stringify(spec));
    const { stdout } = await promisify(execFile)('python3', [path.join(ROOT, 'bench', 'training_load_baseline.py'), input], {
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    });
    return JSON.parse(stdout) as Script;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    return { error: (e.stderr || e.message).trim().split('\n').at(-1)! };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The largest absolute difference between two charts' numeric columns; Infinity when their days differ. */
function difference(a: Chart, b: Chart): number {
  if (a.date.length !== b.date.length || a.date.some((d, i) => String(d).slice(0, 10) !== String(b.date[i]).slice(0, 10)))
    return Number.POSITIVE_INFINITY;
  let max = 0;
  for (const c of ['stress', 'ctl', 'atl', 'tsb', 'ramp_rate'] as const)
    a[c].forEach((v, i) => (max = Math.max(max, Math.abs(Number(v) - Number(b[c][i])))));
  return max;
}

/** The script's rows: its compute and its reads beside the JSON chart; its values checked against the service's. */
async function baselineRows(run: Run, rows: Row[], served: Chart, notes: string[]): Promise<void> {
  const out = await script(run);
  if ('error' in out) {
    notes.push(`pandas script unavailable (${out.error}); pip install pandas requests`);
    return;
  }
  const diff = difference(served, out.chart);
  notes.push(
    `pandas and the service agree on ${out.chart.date.length} days × 5 columns: max |difference| ${diff.toExponential(2)} (${diff < 1e-9 ? 'within' : 'NOT within'} 1e-9)`,
  );
  if (!(diff < 1e-9)) throw new Error(`the service and the pandas script disagree: max |difference| ${diff}`);
  const compute = timing(out.compute_seconds.map((s) => s * 1000));
  const fetch = timing(out.fetch_seconds.map((s) => s * 1000));
  rows.push({ workload: `pandas: the chart from the ${out.activities} activities in memory (groupby, reindex, ewm)`, result: compute });
  rows.push({
    workload: `pandas' input: GET /api/v1/activities/ (${Math.ceil(out.activities / 1000)} pages of 1,000) with requests`,
    result: fetch,
  });
  const json = rows.find((r) => r.workload.endsWith('JSON'))!;
  json.baseline = { name: 'pandas script: list read + chart', p50_ms: Math.round((fetch.p50_ms + compute.p50_ms) * 10) / 10 };
  rows.find((r) => r.workload.includes('Parquet'))!.baseline = json.baseline;
}

/** One more activity, on END_DAY, stored as the ingest stores it: its source, its load computed, storeActivities writing both. Returns its id. */
async function storeOneMore(service: TestService, userId: string): Promise<string> {
  const { db, engine, log, now } = service.deps;
  const start = Date.parse(END_DAY) + 16 * 3_600_000;
  const upload = { type: 'fit', origin: 'manual_upload', filename: 'new.fit', size_bytes: 200_000, sport: null } as const;
  const { source } = await insertSource(db, { ...upload, user_id: userId, content_sha256: randomBytes(32).toString('hex') });
  const id = activityId(source.id, 0);
  const times = { start_time: new Date(start), end_time: new Date(start + 3600_000), utc_offset_seconds: UTC_OFFSET, timer_seconds: 3600 };
  const ride = { id, session_index: 0, sport: 'cycling', metrics: ['power'], laps: null, curves: [] };
  const rest = {
    summary: { power: { mean: 200, normalized: 220 } },
    distance: 30_000,
    devices: [],
    samples: 3600,
    implausible_samples: {},
  };
  const activity = { ...ride, ...times, ...rest };
  const deps = { db, pool: engine.pool, samples: engine.samples, files: engine.files, log, now };
  // As the ingest does: the load computed before the commit, written in the activity's transaction.
  const loads = await loadsOfNewActivities(deps, userId, [{ row: { ...activity, user_id: userId }, channels: {} }]);
  if (!loads) throw new Error('the load of the new activity could not be computed');
  await storeActivities(db, source, [activity], new Date(), {
    inTransaction: (trx) => insertActivityLoads(trx, loads.rows, loads.version, now()),
  });
  return id;
}

/**
 * One activity more, on END_DAY, stored as the ingest stores it (its source; its load row computed,
 * then written with it by storeActivities), then the next chart. No other load row may be
 * written (each row's xmin, version and computed_at are compared), and every day before END_DAY must
 * hold the same values as before.
 */
async function incrementalRows(run: Run, rows: Row[], before: Chart, notes: string[]): Promise<void> {
  const { service, userId, get } = run;
  const { db } = service.deps;
  const snapshot = async () => {
    const q = sql<{ activity_id: string; state: string }>`
      SELECT activity_id, xmin::text || '/' || version || '/' || computed_at::text AS state FROM activity_load WHERE user_id = ${userId}`;
    const r = await q.execute(db);
    return new Map(r.rows.map((x) => [x.activity_id, x.state]));
  };
  const old = await snapshot();
  const t0 = performance.now();
  const id = await storeOneMore(service, userId);
  const storeMs = performance.now() - t0;
  const t1 = performance.now();
  const after = JSON.parse((await get(`${CHART}&format=json`, IDENTITY)).text) as Chart;
  const chartMs = performance.now() - t1;
  const now2 = await snapshot();
  const changed = [...old].filter(([k, v]) => now2.get(k) !== v).length;
  const added = [...now2.keys()].filter((k) => !old.has(k));
  const load = await db.selectFrom('activity_load').select(['stress', 'method']).where('activity_id', '=', id).executeTakeFirst();
  const n = before.date.length;
  const same = (['stress', 'ctl', 'atl', 'tsb', 'ramp_rate'] as const).every((c) =>
    before[c].slice(0, n - 1).every((v, i) => v === after[c][i]),
  );
  const newStress = Number(after.stress[n - 1]) - Number(before.stress[n - 1]);
  rows.push({ workload: 'store one more activity as the ingest does (source, activity, its load row)', result: timing([storeMs]) });
  rows.push({ workload: 'the next chart request (JSON), after it', result: timing([chartMs]) });
  notes.push(
    `one more activity: ${added.length} load row added (stress ${load?.stress?.toFixed(1)} by ${load?.method}), ${changed} of ${old.size} other load rows written; ` +
      `the chart's ${n - 1} earlier days ${same ? 'identical' : 'DIFFERENT'}, ${END_DAY}'s stress +${newStress.toFixed(1)}`,
  );
  notes.push(
    `the chart itself is not stored: each request sums the load rows per day and runs the recurrence over the ${DAYS} days again (the rows above), ` +
      'so a new activity needs no other work',
  );
  const met = added.length === 1 && changed === 0 && same && Math.abs(newStress - (load?.stress ?? Number.NaN)) < 1e-9;
  recordTarget({
    benchmark: 'training-load',
    target: 'adding one activity updates the chart without recomputing the history',
    figure: `${added.length} row added, ${changed} of ${old.size} rows rewritten, earlier days ${same ? 'identical' : 'changed'}; store ${storeMs.toFixed(1)} ms, next chart ${chartMs.toFixed(1)} ms`,
    met,
  });
}

export async function benchTrainingLoad() {
  const service = await startTestService({
    env: { CURVE_CACHE_SECONDS: '0', READ_CACHE_SECONDS: '0', API_RATE_LIMIT: '1000000', LOG_LEVEL: 'warn' },
  });
  const rows: Row[] = [];
  const notes: string[] = [];
  try {
    const user = await createTestUser(service);
    const token = await tokenFor(service, user, ['data:read']);
    process.stdout.write(
      `\n== training-load\n\nseeding ${ACTIVITIES} activities with load rows over ${YEARS} years (${START_DAY} to ${END_DAY})…\n`,
    );
    const seconds = await seed(service, user.id);
    process.stdout.write(`seeded in ${seconds.toFixed(1)} s\n`);
    const get = async (query: string, headers: Record<string, string> = {}) => {
      const res = await fetch(service.url + query, { headers: { authorization: `Bearer ${token}`, ...headers } });
      const body = Buffer.from(await res.arrayBuffer());
      if (res.status !== 200) throw new Error(`${query}: ${res.status} ${body.toString()}`);
      return { bytes: body.length, text: res.headers.get('content-type')?.startsWith('application/json') ? body.toString('utf8') : '' };
    };
    const run: Run = { service, userId: user.id, token, get };
    const served = await chartRows(run, rows);
    await baselineRows(run, rows, served, notes);
    await incrementalRows(run, rows, served, notes);
  } finally {
    await service.close();
  }
  printTrainingLoad(rows, notes);
}

/** The targets recorded; the table and the notes printed; the report written. */
function printTrainingLoad(rows: Row[], notes: string[]): void {
  for (const r of rows)
    if (r.target)
      recordTarget({
        benchmark: 'training-load',
        target: `${ACTIVITIES} activities over ${YEARS} years, ${r.workload}, no response cache: ${r.target}`,
        figure: `p50 ${r.result.p50_ms.toFixed(1)} ms, p99 ${r.result.p99_ms.toFixed(1)} ms`,
        met: r.met === true,
      });
  const header = ['workload', 'runs', 'p50 ms', 'p99 ms', 'baseline', 'baseline p50 ms', 'speed-up', 'target', 'met'];
  const table = rows.map((r) => [
    r.workload,
    String(r.result.runs),
    r.result.p50_ms.toFixed(3),
    r.result.p99_ms.toFixed(3),
    r.baseline?.name ?? '',
    r.baseline ? r.baseline.p50_ms.toFixed(1) : '',
    r.baseline ? `${(r.baseline.p50_ms / r.result.p50_ms).toFixed(1)}×` : '',
    r.target ?? '',
    r.met === undefined ? '' : r.met ? 'met' : 'MISSED',
  ]);
  printAndWriteReport('training-load', {
    context: `${ACTIVITIES} activities, ${DAYS} days, response cache off`,
    header,
    table,
    notes,
    fields: { activities: ACTIVITIES, days: DAYS, rows, notes },
  });
}
