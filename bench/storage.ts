import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startTestService, type TestService } from '../test/helpers/service.ts';
import { createTestUser, testAthlete, tokenFor } from '../test/helpers/users.ts';
import { ingestIdle, upload, waitForSource } from '../test/helpers/activities.ts';
import { buildActivityFit } from '../test/helpers/fit-builder.ts';
import { fitCopy } from '../test/helpers/fixtures.ts';
import { yazlZip } from '../test/helpers/zip.ts';
import { testBucket } from '../test/helpers/rgw.ts';
import { type Child, startChild } from './compare/families/http-api.ts';
import { get } from './many-users/requests.ts';
import { rssMb } from './many-users/api-process.ts';
import { cloneAthlete } from './storage-seed.ts';
import { printAndWriteReport, quantile, recordTarget, ROOT } from './report.ts';
import { sampleKey } from '../lib/object-store.ts';
import { columnsDir } from '../lib/storage.ts';
import { DEFAULT_DURATIONS } from '../engine/curves/durations.ts';

/**
 * `npm run bench -- storage`: the service on the local directory (the default) and on an S3 store
 * (Ceph RGW, scripts/ceph-rgw.sh), in the same run, measured the same way:
 *
 * 1. upload → processed: BENCH_STORAGE_UPLOADS (20) rides of 1 h, one at a time, p50;
 * 2. a history import of BENCH_STORAGE_RIDES (300) rides of 1.5 h through the API: files/s;
 * 3. that athlete's fatigue curve (`after` 0 to 1,000 kJ, on the grid) and one off the grid (100 kJ),
 *    first (cold) and then p50 (warm) from a fresh API process whose host has none of the derived
 *    files (with S3: an empty DATA_DIR; locally: its columns removed);
 * 4. a fresh API process under load: BENCH_STORAGE_ATHLETES (100) athletes of that history (copies by
 *    SQL), 12 connections asking a random athlete's fatigue curve for BENCH_STORAGE_SECONDS (60):
 *    p50 and p99 over that first minute and in its last 10 s, the process's RSS every second.
 *    Targets (the issue's): p50 ≤ 150 ms, p99 ≤ 600 ms within the minute, RSS ≤ 1 GB throughout.
 *
 * Beside them: the plain baseline (the athlete's sample files read whole from the store: readFile,
 * or S3 GETs 16 at a time) and what a user would do instead (fetch the sample files from the bucket
 * with pyarrow, compute the same fatigue curves with DuckDB and numpy: bench/storage_baseline.py).
 */
const UPLOADS = Number(process.env.BENCH_STORAGE_UPLOADS ?? 20);
const RIDES = Number(process.env.BENCH_STORAGE_RIDES ?? 300);
const ATHLETES = Number(process.env.BENCH_STORAGE_ATHLETES ?? 100);
const SECONDS = Number(process.env.BENCH_STORAGE_SECONDS ?? 60);
const CONNECTIONS = 12;
const WARM_RUNS = 30;
const TARGET = { p50: 150, p99: 600, rssMb: 1024, coldMs: 1000 };
const GRID_AFTER = '0,250,500,750,1000';
const RANGE = 'start=2023-01-01&end=2023-12-31';
const CURVE = `/api/v1/activities/longitudinal-mean-max?metric=power&after=${GRID_AFTER}&${RANGE}&format=json`;
const OFF_GRID = `/api/v1/activities/longitudinal-mean-max?metric=power&after=0,100&${RANGE}&format=json`;

type Backend = 'local' | 's3';

interface Figures {
  upload_p50_ms: number;
  backfill_files_per_s: number;
  cold_grid_ms: number;
  cold_off_grid_ms: number;
  warm_grid_p50_ms: number;
  warm_off_grid_p50_ms: number;
  fresh_host: {
    requests: number;
    errors: number;
    p50_ms: number;
    p99_ms: number;
    last10s_p50_ms: number;
    last10s_p99_ms: number;
    rss_peak_mb: number;
  };
  plain_read_ms: number;
}

const p = (ms: number[], q: number) =>
  Math.round(
    quantile(
      [...ms].sort((a, b) => a - b),
      q,
    ) * 10,
  ) / 10;

function ride(day: number, seconds: number, seed: number): Uint8Array {
  return buildActivityFit({
    utcOffsetSeconds: 3600,
    sessions: [
      {
        sport: 'cycling',
        start: new Date(Date.UTC(2023, 0, 2, 7) + day * 86_400_000),
        seconds,
        record: (i) => ({
          power: 150 + ((i * seed) % 180) + (i % 1200 < 300 ? 120 : 0),
          heartRate: 120 + (i % 60),
          cadence: 88,
          speed: 7 + ((i * seed) % 50) / 10,
          distance: i * 8,
        }),
      },
    ],
  });
}

/** A fresh API process on the service's database (and, locally, its DATA_DIR with no columns; with S3 an empty one). */
async function freshApi(service: TestService, backend: Backend, env: Record<string, string>, dataDir: string): Promise<Child> {
  const c = service.config;
  return startChild('bin/api.ts', ROOT, {
    ...env,
    DATABASE_URL: c.DATABASE_URL,
    REDIS_URL: c.REDIS_URL,
    QUEUE_PREFIX: c.QUEUE_PREFIX,
    BASE_URL: c.BASE_URL,
    DATA_DIR: dataDir,
    STORAGE: backend,
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'warn',
    CURVE_CACHE_SECONDS: '0',
    READ_CACHE_SECONDS: '0',
    API_RATE_LIMIT: '1000000',
  });
}

async function timed(url: string, token: string): Promise<number> {
  const a = await get(undefined, url, token);
  if (a.status !== 200) throw new Error(`${url}: ${a.status} ${a.body.toString().slice(0, 300)}`);
  return a.ms;
}

async function measureBackend(
  backend: Backend,
  s3env: Record<string, string>,
): Promise<{ figures: Figures; keys: string[]; dataDir: string; service: TestService }> {
  const env = { CURVE_CACHE_SECONDS: '0', READ_CACHE_SECONDS: '0', API_RATE_LIMIT: '1000000', ...(backend === 's3' ? s3env : {}) };
  const service = await startTestService({ workers: true, env });
  const { token } = await testAthlete(service);
  // 1. upload → processed, one at a time.
  const uploads: number[] = [];
  for (let i = 0; i < UPLOADS; i++) {
    const bytes = ride(400 + i, 3600, 31 + i);
    const t0 = performance.now();
    const res = await upload(service, token, [{ name: `u${i}.fit`, bytes }]);
    await waitForSource(service, token, res.body.sources[0].id);
    uploads.push(performance.now() - t0);
  }
  // 2. a history import of RIDES rides (30 distinct rides, copies of them: other bytes, same content).
  const athlete = await createTestUser(service);
  const athleteToken = await tokenFor(service, athlete, ['data:read', 'data:write']);
  const bases = Array.from({ length: 30 }, (_, d) => ride(d * 11, 5400, 7 + d));
  const zip = await yazlZip(
    Array.from({ length: RIDES }, (_, k) => ({ name: `h/${k}.fit`, data: fitCopy(bases[k % 30]!, Math.floor(k / 30)), compress: false })),
  );
  const form = new FormData();
  form.append('archive', new Blob([zip]), 'history.zip');
  const b0 = performance.now();
  const started = await fetch(`${service.url}/api/v1/activities/backfill`, {
    method: 'POST',
    headers: { authorization: `Bearer ${athleteToken}` },
    body: form,
  });
  const backfillId = ((await started.json()) as { id: string }).id;
  for (;;) {
    const row = await service.deps.db.selectFrom('backfills').select('status').where('id', '=', backfillId).executeTakeFirstOrThrow();
    if (row.status === 'completed') break;
    if (row.status === 'failed') throw new Error('the backfill failed');
    await new Promise((r) => setTimeout(r, 100));
  }
  const backfillSeconds = (performance.now() - b0) / 1000;
  await ingestIdle(service);
  const activities = await service.deps.db
    .selectFrom('activities')
    .select(['id'])
    .where('user_id', '=', athlete.id)
    .orderBy('start_time')
    .execute();
  const keys = activities.map((a) => sampleKey(athlete.id, a.id));

  // 3. cold and warm, from a fresh API process with none of the derived files.
  const dataDir = backend === 's3' ? mkdtempSync(path.join(os.tmpdir(), 'tds-bench-fresh-')) : service.config.DATA_DIR;
  rmSync(columnsDir(service.config.DATA_DIR, athlete.id), { recursive: true, force: true });
  let api = await freshApi(service, backend, env, dataDir);
  const coldGrid = await timed(`http://127.0.0.1:${api.port}${CURVE}`, athleteToken);
  const coldOff = await timed(`http://127.0.0.1:${api.port}${OFF_GRID}`, athleteToken);
  const warmGrid: number[] = [];
  const warmOff: number[] = [];
  for (let i = 0; i < WARM_RUNS; i++) {
    warmGrid.push(await timed(`http://127.0.0.1:${api.port}${CURVE}`, athleteToken));
    warmOff.push(await timed(`http://127.0.0.1:${api.port}${OFF_GRID}`, athleteToken));
  }
  await api.stop();

  // The plain baseline: the athlete's sample files read whole from the store.
  const r0 = performance.now();
  const store = service.deps.engine.files.store;
  for (let i = 0; i < keys.length; i += 16) await Promise.all(keys.slice(i, i + 16).map((k) => store.get(k)));
  const plainRead = performance.now() - r0;

  // 4. a fresh host under load: ATHLETES copies of the athlete, 12 connections, random athlete.
  const athletes = [athlete.id];
  const tokens = [athleteToken];
  for (let i = 1; i < ATHLETES; i++) {
    const u = await createTestUser(service);
    await cloneAthlete(service.deps.db, athlete.id, u.id);
    athletes.push(u.id);
    tokens.push(await tokenFor(service, u, ['data:read']));
  }
  for (const id of athletes) rmSync(columnsDir(service.config.DATA_DIR, id), { recursive: true, force: true });
  const freshDir = backend === 's3' ? mkdtempSync(path.join(os.tmpdir(), 'tds-bench-fresh-')) : service.config.DATA_DIR;
  api = await freshApi(service, backend, env, freshDir);
  const fresh = await underLoad(api, tokens);
  await api.stop();
  if (backend === 's3') for (const d of [dataDir, freshDir]) rmSync(d, { recursive: true, force: true });

  const figures: Figures = {
    upload_p50_ms: p(uploads, 0.5),
    backfill_files_per_s: Math.round((RIDES / backfillSeconds) * 10) / 10,
    cold_grid_ms: Math.round(coldGrid),
    cold_off_grid_ms: Math.round(coldOff),
    warm_grid_p50_ms: p(warmGrid, 0.5),
    warm_off_grid_p50_ms: p(warmOff, 0.5),
    fresh_host: fresh,
    plain_read_ms: Math.round(plainRead),
  };
  return { figures, keys, dataDir: service.config.DATA_DIR, service };
}

/** SECONDS of 12 connections asking random athletes' fatigue curves of a fresh process; its RSS every second. */
async function underLoad(api: Child, tokens: string[]): Promise<Figures['fresh_host']> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const samples: { at: number; ms: number }[] = [];
  let errors = 0;
  let rssPeak = rssMb(api.pid) ?? 0;
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssMb(api.pid) ?? 0)), 1000);
  const t0 = performance.now();
  let seed = 12345;
  const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() - t0 < SECONDS * 1000) {
        const token = tokens[Math.floor(random() * tokens.length)]!;
        const a = await get(agent, `http://127.0.0.1:${api.port}${CURVE}`, token).catch(() => undefined);
        if (a?.status === 200) samples.push({ at: performance.now() - t0, ms: a.ms });
        else errors++;
      }
    }),
  );
  clearInterval(sampler);
  agent.destroy();
  const all = samples.map((s) => s.ms);
  const last = samples.filter((s) => s.at >= (SECONDS - 10) * 1000).map((s) => s.ms);
  return {
    requests: samples.length,
    errors,
    p50_ms: p(all, 0.5),
    p99_ms: p(all, 0.99),
    last10s_p50_ms: p(last, 0.5),
    last10s_p99_ms: p(last, 0.99),
    rss_peak_mb: rssPeak,
  };
}

/** bench/storage_baseline.py over the athlete's objects in the bucket. */
async function userScript(s3env: Record<string, string>, keys: string[]): Promise<{ seconds: number; fetch_seconds: number }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tds-bench-script-'));
  const spec = path.join(dir, 'spec.json');
  writeFileSync(
    spec,
    JSON.stringify({
      endpoint: s3env.S3_ENDPOINT,
      bucket: s3env.S3_BUCKET,
      access_key: s3env.S3_ACCESS_KEY_ID,
      secret_key: s3env.S3_SECRET_ACCESS_KEY,
      region: s3env.S3_REGION,
      keys,
      thresholds: GRID_AFTER.split(',').map((k) => Number(k) * 1000),
      durations: DEFAULT_DURATIONS,
    }),
  );
  try {
    const { stdout } = await promisify(execFile)('python3', [path.join(ROOT, 'bench/storage_baseline.py'), spec], {
      maxBuffer: 64 * 1024 * 1024,
    });
    return JSON.parse(stdout);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function benchStorage(): Promise<void> {
  const bucket = await testBucket();
  const results = {} as Record<Backend, Figures>;
  let script: { seconds: number; fetch_seconds: number } | undefined;
  try {
    for (const backend of ['local', 's3'] as const) {
      process.stdout.write(`storage: ${backend}…\n`);
      const { figures, keys, service } = await measureBackend(backend, bucket.env);
      results[backend] = figures;
      if (backend === 's3') script = await userScript(bucket.env, keys);
      await service.close();
    }
  } finally {
    await bucket.remove();
  }
  const row = (name: string, f: (x: Figures) => string | number, user = '') => [
    name,
    String(f(results.local)),
    String(f(results.s3)),
    user,
  ];
  const fresh = results.s3.fresh_host;
  printAndWriteReport('storage', {
    context: `storage: local directory vs S3 (Ceph RGW on loopback); ${RIDES} rides of 1.5 h per athlete, ${ATHLETES} athletes, ${CONNECTIONS} connections`,
    header: ['measure', 'local', 's3', 'instead'],
    table: [
      row('upload → processed, p50 (ms)', (x) => x.upload_p50_ms),
      row(`history import of ${RIDES} rides (files/s)`, (x) => x.backfill_files_per_s),
      row("plain: the athlete's sample files read whole (ms)", (x) => x.plain_read_ms),
      row(
        'fresh host, first fatigue curve on the grid (ms)',
        (x) => x.cold_grid_ms,
        script
          ? `${Math.round(script.seconds * 1000)} ms: pyarrow fetch (${Math.round(script.fetch_seconds * 1000)} ms) + DuckDB/numpy`
          : '',
      ),
      row('fresh host, first curve off the grid (ms)', (x) => x.cold_off_grid_ms),
      row('warm, on the grid, p50 (ms)', (x) => x.warm_grid_p50_ms),
      row('warm, off the grid, p50 (ms)', (x) => x.warm_off_grid_p50_ms),
      row(`fresh host under load, first ${SECONDS} s: p50 / p99 (ms)`, (x) => `${x.fresh_host.p50_ms} / ${x.fresh_host.p99_ms}`),
      row('  its last 10 s: p50 / p99 (ms)', (x) => `${x.fresh_host.last10s_p50_ms} / ${x.fresh_host.last10s_p99_ms}`),
      row('  requests (errors)', (x) => `${x.fresh_host.requests} (${x.fresh_host.errors})`),
      row('  API RSS peak (MB)', (x) => x.fresh_host.rss_peak_mb),
    ],
    notes: [
      'fresh host: a new API process whose DATA_DIR holds no derived file (S3: an empty directory; local: the columns removed); the curve cache is off, so every request computes',
      'instead: what a user would do without the service: fetch the same sample files from the bucket and compute the same fatigue curves (bench/storage_baseline.py)',
    ],
    fields: {
      rides: RIDES,
      athletes: ATHLETES,
      seconds: SECONDS,
      connections: CONNECTIONS,
      local: results.local,
      s3: results.s3,
      user_script: script,
    },
  });
  recordTarget({
    benchmark: 'storage',
    target: `S3, a fresh host under ${CONNECTIONS} connections over ${ATHLETES} athletes × ${RIDES} rides: p50 ≤ ${TARGET.p50} ms and p99 ≤ ${TARGET.p99} ms within a minute, RSS ≤ ${TARGET.rssMb} MB throughout`,
    figure: `first ${SECONDS} s p50 ${fresh.p50_ms} ms, p99 ${fresh.p99_ms} ms; RSS peak ${fresh.rss_peak_mb} MB; ${fresh.errors} errors`,
    met: fresh.p50_ms <= TARGET.p50 && fresh.p99_ms <= TARGET.p99 && fresh.rss_peak_mb <= TARGET.rssMb && fresh.errors === 0,
  });
}
