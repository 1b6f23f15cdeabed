import { appendToColumns } from '../workers/ingest.ts';
import os from 'node:os';
import { randomBytes } from 'node:crypto';
import { startTestService, type TestService } from '../test/helpers/service.ts';
import { createTestUser, tokenFor } from '../test/helpers/users.ts';
import { insertSource } from '../db/sources.ts';
import { activityId, storeActivities, type NewActivity } from '../db/activities.ts';
import { curvesOf, packStored } from '../db/curves.ts';
import { accumulatedWorkDuration } from '../engine/curves/awd.ts';
import { zeroFilled } from '../engine/curves/activity-curves.ts';
import { levelOf } from '../engine/curves/levels.ts';
import { workCuts } from '../engine/curves/longitudinal.ts';
import { mergeStoredLevels } from '../engine/curves/stored-curves.ts';
import { meanMaxAll } from '../engine/curves/mean-max.ts';
import { meanMaxPlain } from '../engine/curves/mean-max-plain.ts';
import { valueIndexed } from '../engine/curves/value-indexed.ts';
import { DEFAULT_DURATIONS } from '../engine/curves/durations.ts';
import { sampleKey } from '../lib/object-store.ts';
import { objectFile } from '../lib/object-store-local.ts';
import { statSync } from 'node:fs';
import { sql } from 'kysely';
import type { Channel } from '../engine/channels.ts';
import { curveInputs, rideChannels, simulateRide } from '../test/helpers/synthetic.ts';
import { formatTable, quantile, recordTarget, round2, writeReport } from './report.ts';

interface Distribution {
  n: number;
  p50: number;
  p90: number;
  max: number;
}

function distribution(ms: number[]): Distribution {
  const sorted = [...ms].sort((a, b) => a - b);
  const r = (x: number) => Math.round(x * 1000) / 1000;
  return { n: sorted.length, p50: r(quantile(sorted, 0.5)), p90: r(quantile(sorted, 0.9)), max: r(sorted.at(-1)!) };
}

/**
 * The curve engine's rows of the targets (docs/architecture.md, "Benchmarks" (Targets)) that need a history: a synthetic history of
 * BENCH_CURVES_ACTIVITIES (default 1,000) rides of 30 min to 3 h on distinct days (~2.7 years),
 * stored the way ingestion stores them (sample files through DuckDB, rows and curves in one
 * transaction), then:
 *
 * - AWD and value-indexed view of one 4 h ride, beside their plain definitions (per level, count
 *   the samples; per level, scan the durations from the longest);
 * - longitudinal mean-max over every activity from the stored curves: the engine merge alone
 *   (target ≤ 20 ms), beside the plain way (elementwise maximum of every activity's all-durations
 *   curve, then the value-indexed view), and the HTTP request → Parquet body (target p50 ≤ 100 ms,
 *   the response cache off so that every request computes);
 * - longitudinal mean-max with 5 `after` values over the last year (~365 activities), HTTP end to
 *   end with a 2-thread engine pool (target ≤ 1.5 s), beside the plain way in this process: every
 *   activity's suffixes scanned by the plain prefix-sum kernel, one thread.
 */
const ACTIVITIES = Number(process.env.BENCH_CURVES_ACTIVITIES ?? 1000);
const RUNS = Number(process.env.BENCH_CURVES_RUNS ?? 20);
const AFTER_RUNS = Number(process.env.BENCH_CURVES_AFTER_RUNS ?? 5);
const DAY = 86_400_000;

function time<T>(fn: () => T): [T, number] {
  const t0 = performance.now();
  const out = fn();
  return [out, performance.now() - t0];
}

function measure(runs: number, fn: () => unknown): Distribution {
  fn();
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) ms.push(time(fn)[1]);
  return distribution(ms);
}

async function measureAsync(runs: number, fn: () => Promise<unknown>): Promise<Distribution> {
  await fn();
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    ms.push(performance.now() - t0);
  }
  return distribution(ms);
}

/** Plain AWD: for each level, count the samples at or above it. */
function awdPlain(x: Float64Array, step: number): Int32Array {
  let top = 0;
  for (const v of x) if (v === v) top = Math.max(top, levelOf(v, step));
  const out = new Int32Array(Math.max(0, top));
  for (let k = 1; k <= top; k++) {
    let n = 0;
    for (const v of x) if (levelOf(v, step) >= k) n++;
    out[k - 1] = n;
  }
  return out;
}

/** Plain value-indexed view: for each level, the longest duration whose best reaches it. */
function valueIndexedPlain(best: Float64Array, step: number): Int32Array {
  let top = 0;
  for (const v of best) if (v === v) top = Math.max(top, levelOf(v, step));
  const out = new Int32Array(Math.max(0, top));
  for (let k = 1; k <= top; k++) {
    for (let d = best.length; d >= 1; d--) {
      if (levelOf(best[d - 1]!, step) >= k) {
        out[k - 1] = d;
        break;
      }
    }
  }
  return out;
}

interface Row {
  workload: string;
  result: Distribution;
  baseline?: { name: string; result: Distribution };
  target: string;
  met: boolean;
}

/**
 * A synthetic activity stored the way ingestion stores it (source, sample file, row), without
 * parsing a file: `channels` at 1 Hz from `start`, with the given stored curves (none by default).
 */
export async function storeSynthetic(
  service: TestService,
  userId: string,
  a: {
    start: number;
    channels: Partial<Record<Channel, Float64Array>>;
    name: string;
    sport?: string;
    utcOffsetSeconds?: number;
    curves?: NewActivity['curves'];
  },
): Promise<string> {
  const { db, engine, config } = service.deps;
  const seconds = Object.values(a.channels)[0]!.length;
  const { source } = await insertSource(db, {
    user_id: userId,
    type: 'fit',
    origin: 'backfill',
    filename: a.name,
    content_sha256: randomBytes(32).toString('hex'),
    size_bytes: 1,
    sport: null,
  });
  const id = activityId(source.id, 0);
  await engine.samples.writeSampleFile(objectFile(config.DATA_DIR, sampleKey(userId, id)), {
    start: a.start,
    length: seconds,
    channels: a.channels,
  });
  const row: NewActivity = {
    id,
    session_index: 0,
    sport: a.sport ?? 'cycling',
    start_time: new Date(a.start),
    end_time: new Date(a.start + seconds * 1000),
    utc_offset_seconds: a.utcOffsetSeconds ?? 0,
    metrics: Object.keys(a.channels),
    summary: null,
    laps: null,
    distance: null,
    devices: [],
    samples: seconds,
    implausible_samples: {},
    curves: a.curves ?? [],
  };
  await storeActivities(db, source, [row], new Date());
  // As the ingest job does after its commit: the ride's power and speed appended to the user's channel columns.
  await appendToColumns({ db, columns: engine.columns, log: service.deps.log }, userId, [{ id, channels: a.channels }]);
  return id;
}

/**
 * One synthetic ride stored the way ingestion stores it (storeSynthetic), with its stored curves:
 * power, speed, heart rate and cadence at 1 Hz.
 */
export async function seedRide(
  service: TestService,
  userId: string,
  ride: { start: number; seconds: number; seed: number; sport?: string; name?: string },
): Promise<string> {
  const samples = simulateRide({ start: new Date(ride.start), seconds: ride.seconds, seed: ride.seed });
  const channels = rideChannels(samples);
  const curves = await service.deps.engine.pool.runCurves(curveInputs(channels));
  return storeSynthetic(service, userId, {
    start: ride.start,
    channels,
    name: ride.name ?? `ride-${ride.seed}.fit`,
    sport: ride.sport,
    utcOffsetSeconds: 3600,
    curves,
  });
}

export async function seedHistory(service: TestService, userId: string, count: number): Promise<{ seconds: number; newest: number }> {
  const t0 = performance.now();
  const newest = Date.UTC(2026, 9, 31, 7);
  let next = 0;
  const one = (i: number) =>
    seedRide(service, userId, {
      start: newest - (count - 1 - i) * DAY,
      seconds: 1800 + ((i * 7919) % 9000),
      seed: 1000 + i,
      sport: i % 5 === 0 ? 'cycling.road' : 'cycling',
    });
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let i = next++; i < count; i = next++) await one(i);
    }),
  );
  return { seconds: (performance.now() - t0) / 1000, newest };
}

export async function benchCurves() {
  // The service under test computes every request: its response cache is off.
  const service = await startTestService({
    env: { CURVE_CACHE_SECONDS: '0', ENGINE_THREADS: '2', LOG_LEVEL: 'warn', COMPUTE_TIMEOUT_MS: '120000' },
  });
  const rows: Row[] = [];
  let size: StoredSize | undefined;
  try {
    const user = await createTestUser(service);
    const token = await tokenFor(service, user, ['data:read']);
    process.stdout.write(`\n== curves\n\nseeding ${ACTIVITIES} synthetic rides (sample files, rows, curves)…\n`);
    const seeded = await seedHistory(service, user.id, ACTIVITIES);
    process.stdout.write(`seeded in ${seeded.seconds.toFixed(1)} s\n`);
    rows.push(...activityRows());
    const stored = await storedCurveRows(service, user.id, token, rows);
    rows.push(await afterRow(service, user.id, token, seeded.newest, stored));
    size = await storedSize(
      service,
      user.id,
      stored.map((r) => r.id),
    );
  } finally {
    await service.close();
  }
  printCurves(rows, size);
}

/** One activity: AWD and value-indexed view of a 4 h ride, each beside its plain per-level way. */
function activityRows(): Row[] {
  const rows: Row[] = [];
  const ride = simulateRide({ start: new Date(0), seconds: 4 * 3600, seed: 7 });
  const power = Float64Array.from(ride, (s) => s.power);
  const curve = meanMaxAll(zeroFilled(power));
  const awdFast = measure(RUNS * 5, () => accumulatedWorkDuration(power, 1));
  const awdSlow = measure(3, () => awdPlain(power, 1));
  rows.push({
    workload: 'AWD of a 4 h ride (power, 1 W levels)',
    result: awdFast,
    baseline: { name: 'per-level count', result: awdSlow },
    target: 'p50 ≤ 0.5 ms',
    met: awdFast.p50 <= 0.5,
  });
  const viFast = measure(RUNS * 5, () => valueIndexed(curve.best, curve.start, 1));
  const viSlow = measure(3, () => valueIndexedPlain(curve.best, 1));
  rows.push({
    workload: 'value-indexed view of a 4 h ride',
    result: viFast,
    baseline: { name: 'per-level scan', result: viSlow },
    target: 'p50 ≤ 0.5 ms',
    met: viFast.p50 <= 0.5,
  });
  return rows;
}

/** A GET of the service's, its body's bytes (any status but 200 throws). */
function getter(service: TestService, token: string) {
  return async (path: string) => {
    const res = await fetch(service.url + path, { headers: { authorization: `Bearer ${token}` } });
    const body = await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${Buffer.from(body).toString()}`);
    return body.byteLength;
  };
}

/** Longitudinal from stored curves: the engine's merge beside the plain way, and the HTTP request beside /healthz. Returns the stored curves. */
async function storedCurveRows(service: TestService, userId: string, token: string, rows: Row[]) {
  const stored = await curvesOf(service.deps.db, userId, {}, 'power', 'levels');
  // The one query that reads them, apart (a warm cache: the rides were just stored).
  const read = await measureAsync(RUNS, () => curvesOf(service.deps.db, userId, {}, 'power', 'levels'));
  const duration = packStored(stored, 'buffer');
  const starts = packStored(stored, 'second');
  const merge = measure(RUNS, () => mergeStoredLevels(duration, starts));
  // The plain way needs every activity's all-durations curve: computed here from the sample files (not timed).
  const bests = await Promise.all(
    stored.map(
      async (r) =>
        meanMaxAll(
          zeroFilled(
            (await service.deps.engine.samples.readSampleFile(objectFile(service.deps.config.DATA_DIR, sampleKey(userId, r.id)), ['power']))
              .channels.power!,
          ),
        ).best,
    ),
  );
  const plainMerge = measure(5, () => {
    const longest = bests.reduce((n, b) => Math.max(n, b.length), 0);
    const env = new Float64Array(longest).fill(Number.NaN);
    for (const b of bests) for (let i = 0; i < b.length; i++) if (!(env[i]! >= b[i]!)) env[i] = b[i]!;
    return valueIndexedPlain(env, 1);
  });
  rows.push({
    workload: `longitudinal mean-max engine, ${stored.length} stored curves, from their stored bytes (the DB read apart: p50 ${round2(read.p50)} ms)`,
    result: merge,
    baseline: { name: 'max of all-durations curves + plain value index', result: plainMerge },
    target: 'p50 ≤ 20 ms',
    met: merge.p50 <= 20,
  });
  const get = getter(service, token);
  const http = await measureAsync(RUNS, () => get('/api/v1/activities/longitudinal-mean-max?metric=power'));
  const healthz = await measureAsync(RUNS, async () => (await fetch(service.url + '/healthz')).arrayBuffer());
  rows.push({
    workload: `GET longitudinal-mean-max → Parquet, ${stored.length} activities (no cache)`,
    result: http,
    baseline: { name: 'GET /healthz', result: healthz },
    target: 'p50 ≤ 100 ms',
    met: http.p50 <= 100,
  });
  return stored;
}

/** After: 5 values over the last year, over HTTP, beside the plain kernel per suffix on the samples in memory. */
async function afterRow(
  service: TestService,
  userId: string,
  token: string,
  newest: number,
  stored: { id: string; start: number }[],
): Promise<Row> {
  const get = getter(service, token);
  const end = new Date(newest).toISOString().slice(0, 10);
  const startDay = new Date(newest - 364 * DAY).toISOString().slice(0, 10);
  const afterValues = [0, 250, 500, 1000, 1500];
  const query = `/api/v1/activities/longitudinal-mean-max?metric=power&start=${startDay}&end=${end}&${afterValues.map((a) => `after=${a}`).join('&')}`;
  const after = await measureAsync(AFTER_RUNS, () => get(query));
  const yearRows = stored.filter((r) => r.start >= newest - 364 * DAY);
  const samples = await Promise.all(
    yearRows.map((r) =>
      service.deps.engine.samples.readSampleFile(objectFile(service.deps.config.DATA_DIR, sampleKey(userId, r.id)), ['power']),
    ),
  );
  const durations = Int32Array.from(DEFAULT_DURATIONS);
  const thresholds = Float64Array.from(afterValues, (a) => a * 1000);
  const plainAfter = measure(1, () => {
    const best = new Float64Array(durations.length);
    const start = new Int32Array(durations.length);
    for (const f of samples) {
      const x = zeroFilled(f.channels.power!);
      const cuts = workCuts(x, thresholds);
      for (const c of cuts) meanMaxPlain(x.subarray(c), durations, best, start);
    }
  });
  return {
    workload: `GET longitudinal-mean-max, 5 after values, 1 year (${yearRows.length} activities), 2 engine threads`,
    result: after,
    baseline: { name: 'plain kernel per suffix, 1 thread, samples in memory', result: plainAfter },
    target: 'p50 ≤ 1.5 s',
    met: after.p50 <= 1500,
  };
}

/** The targets recorded; the table and the stored size printed; the report written. */
function printCurves(rows: Row[], size: StoredSize | undefined): void {
  for (const r of rows)
    recordTarget({ benchmark: 'curves', target: `${r.workload}: ${r.target}`, figure: `p50 ${r.result.p50.toFixed(2)} ms`, met: r.met });
  const header = ['workload', 'p50 ms', 'p90 ms', 'baseline', 'baseline p50 ms', 'speed-up', 'target', 'met'];
  const table = rows.map((r) => [
    r.workload,
    r.result.p50.toFixed(3),
    r.result.p90.toFixed(3),
    r.baseline?.name ?? '',
    r.baseline ? r.baseline.result.p50.toFixed(2) : '',
    r.baseline ? `${(r.baseline.result.p50 / r.result.p50).toFixed(1)}×` : '',
    r.target,
    r.met ? 'yes' : 'NO',
  ]);
  process.stdout.write(`\n${ACTIVITIES} synthetic rides, ${os.cpus().length} cores, Node ${process.version}\n\n`);
  process.stdout.write(formatTable(header, table));
  if (size) {
    const ratio = size.curvesBytes / size.sampleBytes;
    const met = ratio <= 0.2;
    recordTarget({
      benchmark: 'curves',
      target: 'stored per-activity curves on disk: ≤ 20 % of the sample files',
      figure: `${(ratio * 100).toFixed(1)} %`,
      met,
    });
    process.stdout.write(
      '\n' +
        formatTable(
          ['on disk', 'per ride (bytes)', 'sample file (bytes)', 'of the sample file', 'target', 'met'],
          [
            [
              `stored curves, ${size.rides} rides (pg_total_relation_size('activity_curves'): heap, TOAST, index)`,
              String(Math.round(size.curvesBytes / size.rides)),
              String(Math.round(size.sampleBytes / size.rides)),
              `${(ratio * 100).toFixed(1)} %`,
              '≤ 20 %',
              met ? 'yes' : 'NO',
            ],
            [
              `  of which the rows' arrays (pg_column_size: level_duration, level_start, awd)`,
              String(Math.round(size.columnBytes / size.rides)),
              '',
              `${((size.columnBytes / size.sampleBytes) * 100).toFixed(1)} %`,
              '',
              '',
            ],
          ],
        ),
    );
  }
  const report = {
    benchmark: 'curves',
    at: new Date().toISOString(),
    node: process.version,
    cores: os.cpus().length,
    activities: ACTIVITIES,
    rows,
    size,
  };
  process.stdout.write(`\nwrote ${writeReport('curves', report)} and bench/results/latest.json\n`);
}

interface StoredSize {
  rides: number;
  /** pg_total_relation_size('activity_curves') after VACUUM: heap, TOAST and index of every stored curve (this database holds only the seeded history). */
  curvesBytes: number;
  /** The arrays alone, as stored (pg_column_size, compressed or not). */
  columnBytes: number;
  /** The rides' Parquet sample files on disk. */
  sampleBytes: number;
}

/** What the seeded history's stored curves take on disk beside its sample files (target ≤ 20 %: docs/architecture.md, "Benchmarks"). */
async function storedSize(service: TestService, userId: string, ids: string[]): Promise<StoredSize> {
  const { db, config } = service.deps;
  await sql`VACUUM activity_curves`.execute(db);
  const total = await sql<{ bytes: string }>`SELECT pg_total_relation_size('activity_curves') AS bytes`.execute(db);
  const columns = await sql<{ bytes: string }>`
    SELECT sum(coalesce(pg_column_size(level_duration), 0) + coalesce(pg_column_size(level_start), 0) + pg_column_size(awd)) AS bytes FROM activity_curves`.execute(
    db,
  );
  let sampleBytes = 0;
  for (const id of ids) sampleBytes += statSync(objectFile(config.DATA_DIR, sampleKey(userId, id))).size;
  return { rides: ids.length, curvesBytes: Number(total.rows[0]!.bytes), columnBytes: Number(columns.rows[0]!.bytes), sampleBytes };
}
