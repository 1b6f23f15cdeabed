import http from 'node:http';
import { createHash } from 'node:crypto';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { ConfigSchema, loadConfig, type Config } from '../../lib/config.ts';
import { createLogger } from '../../lib/log.ts';
import { Lifecycle } from '../../lib/lifecycle.ts';
import { columnsDir, samplePath } from '../../lib/storage.ts';
import { createDb } from '../../db/database.ts';
import { ensureDatabase, migrateToLatest, MIGRATIONS_DIR } from '../../db/migrate.ts';
import { createUser } from '../../db/users.ts';
import type { NewActivity } from '../../db/activities.ts';
import { appendToColumns } from '../../workers/ingest.ts';
import { createApiDeps } from '../../api/server.ts';
import type { Deps } from '../../api/context.ts';
import { hashPassword } from '../../api/auth/passwords.ts';
import { createPersonalToken } from '../../api/oauth/issue.ts';
import { DEFAULT_DURATIONS } from '../../engine/curves/durations.ts';
import { AFTER_GRID_CHANNEL } from '../../engine/curves/after-grid.ts';
import { freePort, TestClock, type TestService } from '../../test/helpers/service.ts';
import { prng } from '../../test/helpers/prng.ts';
import { procTicks } from '../cpu.ts';
import { curveInputs, rideChannels, simulateRide } from '../../test/helpers/synthetic.ts';
import { storeSynthetic } from '../curves.ts';
import { formatTable, quantile, recordTarget, ROOT, writeReport } from '../report.ts';

/**
 * `npm run bench -- many-users` (issue 25; DESIGN.md §7's rows for many athletes): fatigue curves
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
 */
const DAY = 86_400_000;
const NEWEST = Date.UTC(2026, 9, 31, 7);
const YEAR_SPAN = 364 * DAY;
const FIRST_SPAN = 3 * 365 * DAY;
const AFTER = [0, 250, 500, 1000, 1500];
/** The same fatigue states moved off the 250 kJ grid (engine/curves/after-grid.ts): computed from the samples. */
const OFF_GRID_AFTER = [0, 300, 700, 1100, 1600];
/** Bump when what a seeded athlete is changes (rides, dates, channels, curves, derived files): the data is seeded again. */
const SEED_FORMAT = 2;
const POOL_SIZE = 500;
const RAW_RUNS = 20;
const SCRIPT_RUNS = 3;
const TICK_SECONDS = 10;
const MB = 2 ** 20;

function intEnv(name: string, fallback: number, min = 0): number {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer ≥ ${min} (got ${JSON.stringify(raw)})`);
  return value;
}

const COUNTS = [...new Set((process.env.BENCH_MANY_USERS ?? '1,20,100,300').split(',').map((s) => Number(s.trim())))].sort((a, b) => a - b);
if (!COUNTS.length || COUNTS.some((n) => !Number.isInteger(n) || n < 1))
  throw new Error(`BENCH_MANY_USERS must list athlete counts ≥ 1, e.g. 1,20,100,300`);
const RIDES = intEnv('BENCH_MANY_USERS_RIDES', 300, 1);
const ROW_SECONDS = intEnv('BENCH_MANY_USERS_ROW_SECONDS', 20, 1);
const SOAK_SECONDS = intEnv('BENCH_MANY_USERS_SECONDS', 600);
const FIRST_RIDES = intEnv('BENCH_MANY_USERS_FIRST_RIDES', 1000, 1);
const FIRST_ATHLETES = intEnv('BENCH_MANY_USERS_FIRST_ATHLETES', 5, 1);
const SEEDERS = intEnv('BENCH_MANY_USERS_SEEDERS', 8, 1);
const CONNECTIONS = intEnv('BENCH_MANY_USERS_CONNECTIONS', 12, 1);
const DEFAULT_DIR = '/tmp/tds-bench-many';
const DIR = path.resolve(process.env.BENCH_MANY_USERS_DIR || DEFAULT_DIR);
const MARKER = path.join(DIR, 'bench-many-users.json');
const QUEUE_PREFIX = 'tds_bench_many';

const RANGE = `start=${new Date(NEWEST - YEAR_SPAN).toISOString().slice(0, 10)}&end=${new Date(NEWEST).toISOString().slice(0, 10)}`;
const curvePath = (after: number[]) => `/api/v1/activities/longitudinal-mean-max?metric=power&after=${after.join(',')}&${RANGE}`;
const CURVE_PATH = curvePath(AFTER);
const OFF_GRID_PATH = curvePath(OFF_GRID_AFTER);
/** The `after` values of CURVE_PATH in the k-th of their 120 orders: the same computation, but no two requests in flight are one (rows come in the order asked). */
const permutedPath = (k: number) => curvePath(permutation(AFTER, k % 120));

function permutation<T>(items: readonly T[], k: number): T[] {
  const rest = [...items];
  const out: T[] = [];
  for (let n = rest.length; n > 0; n--) {
    const f = factorial(n - 1);
    out.push(rest.splice(Math.floor(k / f) % n, 1)[0]!);
    k %= f;
  }
  return out;
}
const factorial = (n: number): number => (n <= 1 ? 1 : n * factorial(n - 1));

/** Targets: DESIGN.md §7. */
const TARGET = {
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

// ---------------------------------------------------------------------------------------------
// Seeding

interface GroupSpec {
  key: string;
  athletes: number;
  rides: number;
  spanMs: number;
  /** Athlete i's ride j is pool ride (i × stride + j) mod POOL_SIZE. */
  stride: number;
}

interface Marker {
  format: number;
  /** Per group key: athlete index → user id, for each athlete whose rides are all stored. */
  groups: Record<string, { rides: number; span_days: number; athletes: Record<string, string> }>;
  /** The latest migration when each seeding ended (stored curves seeded before a later migration are as it left them). */
  migration: string;
  seedings: { at: string; rides: number; seconds: number; per_1000_s: number; seeders: number }[];
}

function groupSpecs(): GroupSpec[] {
  const most = COUNTS.at(-1)!;
  return [
    { key: `first-${FIRST_RIDES}-3y`, athletes: FIRST_ATHLETES, rides: FIRST_RIDES, spanMs: FIRST_SPAN, stride: 37 },
    { key: `dense-${FIRST_RIDES}-1y`, athletes: 1, rides: FIRST_RIDES, spanMs: YEAR_SPAN, stride: 53 },
    { key: `many-${RIDES}-1y`, athletes: most, rides: RIDES, spanMs: YEAR_SPAN, stride: 131 },
  ];
}

interface PoolRide {
  channels: { power: Float64Array; heart_rate: Float64Array; speed: Float64Array; cadence: Float64Array };
  curves: NewActivity['curves'];
}

/** POOL_SIZE distinct rides of 30 min to 3 h, their curves computed once in the engine pool. */
async function ridePool(deps: Deps): Promise<PoolRide[]> {
  const t0 = performance.now();
  const pool: PoolRide[] = new Array(POOL_SIZE);
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let k = next++; k < POOL_SIZE; k = next++) {
        const samples = simulateRide({ start: new Date(NEWEST), seconds: 1800 + ((k * 7919) % 9001), seed: 25_000 + k });
        const channels = rideChannels(samples);
        const curves = await deps.engine.pool.runCurves(curveInputs(channels));
        pool[k] = { channels, curves };
      }
    }),
  );
  process.stdout.write(`ride pool: ${POOL_SIZE} distinct rides and their curves in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
  return pool;
}

async function ridePoolOf(bench: Bench): Promise<PoolRide[]> {
  bench.pool ??= await ridePool(bench.deps);
  return bench.pool;
}

function ingestDeps(deps: Deps) {
  return { db: deps.db, columns: deps.engine.columns, log: deps.log };
}

/**
 * The athlete's derived files (columns/) as ingestion leaves them: removed, then each ride's power
 * and speed appended after its row, one ride at a time in time order, as the ingest job appends.
 */
async function derivedAsIngested(bench: Bench, g: GroupSpec, i: number, userId: string): Promise<void> {
  const pool = await ridePoolOf(bench);
  rmSync(columnsDir(DIR, userId), { recursive: true, force: true });
  const activities = await bench.deps.db
    .selectFrom('activities')
    .select(['id', 'samples'])
    .where('user_id', '=', userId)
    .orderBy('start_time')
    .orderBy('id')
    .execute();
  for (let j = 0; j < activities.length; j++) {
    const ride = pool[(i * g.stride + j) % POOL_SIZE]!;
    if (ride.channels.power.length !== activities[j]!.samples)
      throw new Error(`athlete ${g.key} #${i}: ride ${j} is not the pool's (${activities[j]!.samples} samples)`);
    await appendToColumns(ingestDeps(bench.deps), userId, [{ id: activities[j]!.id, channels: ride.channels }]);
  }
}

/**
 * The files out of the page cache (fsync, then POSIX_FADV_DONTNEED, by python): an athlete nobody
 * asked for in a while has its files on disk, not in memory. Returns why not when it could not.
 */
function evict(dirs: string[]): string | undefined {
  const code = [
    'import os, sys',
    'for d in sys.argv[1:]:',
    '    for root, _, files in os.walk(d):',
    '        for f in files:',
    '            fd = os.open(os.path.join(root, f), os.O_RDONLY)',
    '            try:',
    '                os.fsync(fd)',
    '                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)',
    '            finally:',
    '                os.close(fd)',
  ].join('\n');
  const run = spawnSync('python3', ['-c', code, ...dirs.filter((d) => existsSync(d))], { encoding: 'utf8' });
  return run.status === 0 ? undefined : (run.stderr || run.error?.message || 'failed').trim().split('\n').at(-1);
}

function rideStart(g: GroupSpec, i: number, j: number): number {
  return NEWEST - g.spanMs + Math.floor(((j + 0.5) * g.spanMs) / g.rides) - ((i * 7 + j * 3) % 5) * 1_800_000;
}

function emailOf(g: GroupSpec, i: number): string {
  return `bench-many-${g.key}-${i}@example.com`;
}

function readMarker(): Marker | undefined {
  if (!existsSync(MARKER)) return undefined;
  try {
    return JSON.parse(readFileSync(MARKER, 'utf8')) as Marker;
  } catch {
    return undefined;
  }
}

function writeMarker(m: Marker): void {
  const tmp = `${MARKER}.tmp`;
  writeFileSync(tmp, JSON.stringify(m, null, 1) + '\n');
  renameSync(tmp, MARKER);
}

function latestMigration(): string {
  return (
    readdirSync(MIGRATIONS_DIR)
      .filter((f) => /\.[jt]s$/.test(f))
      .sort()
      .at(-1) ?? ''
  );
}

/** `<DATABASE_URL db>_bench_many`, and a name of its own for each other BENCH_MANY_USERS_DIR (a database goes with one directory). */
function benchDatabaseUrl(base: Config): string {
  const url = new URL(base.DATABASE_URL);
  const own = DIR === DEFAULT_DIR ? '' : `_${createHash('sha256').update(DIR).digest('hex').slice(0, 8)}`;
  url.pathname = `${url.pathname}_bench_many${own}`;
  return url.toString();
}

async function dropDatabase(url: string): Promise<void> {
  const admin = new URL(url);
  const name = decodeURIComponent(admin.pathname.replace(/^\//, ''));
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

interface Bench {
  pool?: PoolRide[];
  config: Config;
  deps: Deps;
  databaseUrl: string;
  lifecycle: Lifecycle;
  /** Per group key, the athletes' user ids in index order. */
  athletes: Map<string, string[]>;
  marker: Marker;
  seededNow?: { rides: number; seconds: number };
}

/**
 * The bench database and data directory, seeded as the marker says or seeded now (what is missing
 * only). A directory without our marker is never deleted: it must be empty or absent.
 */
async function openBench(): Promise<Bench> {
  const base = loadConfig();
  const databaseUrl = benchDatabaseUrl(base);
  let marker = readMarker();
  if (marker && marker.format !== SEED_FORMAT) {
    process.stdout.write(`seed format ${marker.format} → ${SEED_FORMAT}: dropping the bench data and seeding again\n`);
    rmSync(DIR, { recursive: true, force: true });
    marker = undefined;
  } else if (marker && marker.migration !== latestMigration()) {
    // Rows written before a schema change are not what the service writes now (the stored curves' size is one of the rows).
    process.stdout.write(
      `the data was seeded at migration ${marker.migration}, the schema is now at ${latestMigration()}: dropping the bench data and seeding again\n`,
    );
    rmSync(DIR, { recursive: true, force: true });
    marker = undefined;
  }
  if (!marker) {
    if (existsSync(DIR) && readdirSync(DIR).length)
      throw new Error(`${DIR} is not empty and holds no ${path.basename(MARKER)}: set BENCH_MANY_USERS_DIR to an empty or new directory`);
    // Whatever the database holds belongs to no marker: start it again.
    await dropDatabase(databaseUrl);
    mkdirSync(DIR, { recursive: true });
    marker = { format: SEED_FORMAT, groups: {}, migration: latestMigration(), seedings: [] };
    writeMarker(marker);
  }
  await ensureDatabase(databaseUrl);
  const migrationDb = createDb(databaseUrl, 1);
  try {
    await migrateToLatest(migrationDb);
  } finally {
    await migrationDb.destroy();
  }
  const config = loadConfig({
    ...process.env,
    DATABASE_URL: databaseUrl,
    DATA_DIR: DIR,
    QUEUE_PREFIX,
    LOG_LEVEL: 'warn',
    PORT: '0',
    DATABASE_POOL_SIZE: String(Math.max(10, SEEDERS + 2)),
    ENGINE_THREADS: '0',
  });
  const log = createLogger('warn');
  const lifecycle = new Lifecycle(log);
  const deps = await createApiDeps(config, log, lifecycle);
  const bench: Bench = { config, deps, databaseUrl, lifecycle, athletes: new Map(), marker };
  try {
    await seed(bench);
  } catch (error) {
    await lifecycle.close();
    throw error;
  }
  return bench;
}

async function seed(bench: Bench): Promise<void> {
  const { deps, marker } = bench;
  const { db } = deps;
  const groups = groupSpecs();
  // Check what the marker claims: every listed athlete has all its rides.
  const listed = groups.flatMap((g) => Object.values(marker.groups[g.key]?.athletes ?? {}));
  const counts = new Map<string, number>();
  if (listed.length) {
    const rows = await db
      .selectFrom('activities')
      .select(['user_id', sql<string>`count(*)`.as('n')])
      .where('user_id', 'in', listed)
      .groupBy('user_id')
      .execute();
    for (const r of rows) counts.set(r.user_id, Number(r.n));
  }
  const missing: { g: GroupSpec; i: number }[] = [];
  for (const g of groups) {
    const entry = (marker.groups[g.key] ??= { rides: g.rides, span_days: Math.round(g.spanMs / DAY), athletes: {} });
    for (let i = 0; i < g.athletes; i++) {
      const id = entry.athletes[String(i)];
      if (id !== undefined && counts.get(id) === g.rides && existsSync(path.join(DIR, 'users', id, 'activities'))) continue;
      delete entry.athletes[String(i)];
      if (id !== undefined) rmSync(path.join(DIR, 'users', id), { recursive: true, force: true });
      missing.push({ g, i });
    }
  }
  const total = missing.reduce((n, m) => n + m.g.rides, 0);
  if (missing.length) {
    process.stdout.write(
      `seeding ${missing.length} athletes, ${total.toLocaleString('en')} rides into ${DIR} and ${new URL(bench.databaseUrl).pathname.slice(1)} (${SEEDERS} seeders)…\n`,
    );
    const pool = await ridePoolOf(bench);
    const service: TestService = { url: '', config: bench.config, deps, clock: new TestClock(), close: async () => undefined };
    const passwordHash = await hashPassword('bench many-users password');
    // The largest athletes first, so that they run beside the others rather than last and alone.
    missing.sort((a, b) => b.g.rides - a.g.rides);
    let stored = 0;
    const t0 = performance.now();
    const progress = setInterval(() => {
      const s = (performance.now() - t0) / 1000;
      const rate = stored / s;
      process.stdout.write(
        `  ${stored.toLocaleString('en')} / ${total.toLocaleString('en')} rides, ${rate.toFixed(0)} rides/s (${(1000 / Math.max(rate, 1e-9)).toFixed(1)} s per 1,000), ${((total - stored) / Math.max(rate, 1e-9) / 60).toFixed(1)} min left\n`,
      );
    }, 10_000);
    try {
      let next = 0;
      await Promise.all(
        Array.from({ length: Math.min(SEEDERS, missing.length) }, async () => {
          for (let k = next++; k < missing.length; k = next++) {
            const { g, i } = missing[k]!;
            const email = emailOf(g, i);
            // An athlete left half-seeded by an interrupted run: its rows go (cascade) and its files too.
            const old = await db.deleteFrom('users').where('email', '=', email).returning('id').executeTakeFirst();
            if (old) rmSync(path.join(DIR, 'users', old.id), { recursive: true, force: true });
            const user = await createUser(db, { email, first_name: 'Bench', last_name: `${g.key} ${i}`, password_hash: passwordHash });
            for (let j = 0; j < g.rides; j++) {
              const ride = pool[(i * g.stride + j) % POOL_SIZE]!;
              // storeSynthetic appends the ride to the athlete's channel columns after its commit, as the ingest job does.
              await storeSynthetic(service, user.id, {
                start: rideStart(g, i, j),
                channels: ride.channels,
                name: `ride-${j}.fit`,
                sport: j % 5 === 0 ? 'cycling.road' : 'cycling',
                utcOffsetSeconds: 3600,
                curves: ride.curves,
              });
              stored++;
            }
            marker.groups[g.key]!.athletes[String(i)] = user.id;
            writeMarker(marker);
          }
        }),
      );
    } finally {
      clearInterval(progress);
    }
    const seconds = (performance.now() - t0) / 1000;
    marker.seedings.push({
      at: new Date().toISOString(),
      rides: total,
      seconds: Math.round(seconds),
      per_1000_s: Math.round((seconds / total) * 1000 * 10) / 10,
      seeders: SEEDERS,
    });
    writeMarker(marker);
    bench.seededNow = { rides: total, seconds };
    process.stdout.write(
      `seeded ${total.toLocaleString('en')} rides in ${seconds.toFixed(0)} s: ${((seconds / total) * 1000).toFixed(1)} s per 1,000 rides\n`,
    );
  } else {
    const last = marker.seedings.at(-1);
    process.stdout.write(
      `bench data in ${DIR} matches (seed format ${SEED_FORMAT}); ${last ? `last seeded ${last.at}: ${last.rides.toLocaleString('en')} rides, ${last.per_1000_s} s per 1,000` : ''}\n`,
    );
  }
  for (const g of groups) {
    const athletes = marker.groups[g.key]!.athletes;
    bench.athletes.set(
      g.key,
      Array.from({ length: g.athletes }, (_, i) => athletes[String(i)]!),
    );
  }
}

// ---------------------------------------------------------------------------------------------
// The API in its own process, its memory

interface ApiProcess {
  child: ChildProcess;
  pid: number;
  url: string;
  stop(): Promise<void>;
}

/** The config keys of the service: the spawned API takes none of them from this environment but those set here (its defaults otherwise). */
const CONFIG_KEYS = new Set(Object.keys(ConfigSchema.in.shape));

async function startApi(bench: Bench, port: number): Promise<ApiProcess> {
  const url = `http://127.0.0.1:${port}`;
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !CONFIG_KEYS.has(k) || k === 'SECRETS_KEY'));
  const env = {
    ...inherited,
    DATABASE_URL: bench.databaseUrl,
    REDIS_URL: bench.config.REDIS_URL,
    QUEUE_PREFIX,
    DATA_DIR: DIR,
    PORT: String(port),
    HOST: '127.0.0.1',
    BASE_URL: url,
    CURVE_CACHE_SECONDS: '0',
    LOG_LEVEL: 'warn',
    // Counted on every request (its Redis round trip is in every figure) but above the load: one
    // athlete's token at U = 1 makes thousands of requests a minute.
    API_RATE_LIMIT: '1000000',
  };
  // BENCH_MANY_USERS_API_NODE_ARGS, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`, profiles the API processes (their engine threads write their own profiles).
  const nodeArgs = (process.env.BENCH_MANY_USERS_API_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', 'bin/api.ts'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.stderr!.on('data', (d: Buffer) => process.stderr.write(`api: ${d}`));
  await new Promise<void>((resolve, reject) => {
    let out = '';
    let listening = false;
    child.stdout!.on('data', (d: Buffer) => {
      if (listening) return void process.stderr.write(`api: ${d}`);
      out += d;
      if (/listening on/.test(out)) {
        listening = true;
        resolve();
      }
    });
    child.once(
      'exit',
      (code, signal) => !listening && reject(new Error(`bin/api.ts exited (${code ?? signal}) before listening: ${out.slice(-2000)}`)),
    );
  });
  return {
    child,
    pid: child.pid!,
    url,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

function rssMb(pid: number): number | undefined {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : undefined;
  } catch {
    return undefined;
  }
}

/** The API process's VmRSS every second (s since the bench started, MB). */
class RssSampler {
  readonly series: { t: number; mb: number; phase: string }[] = [];
  #timer: NodeJS.Timeout | undefined;
  #pid = 0;
  phase = '';
  constructor(private readonly t0: number) {}
  watch(pid: number): void {
    this.#pid = pid;
    this.#timer ??= setInterval(() => this.sample(), 1000);
  }
  sample(): number | undefined {
    const mb = rssMb(this.#pid);
    if (mb !== undefined) this.series.push({ t: Math.round((performance.now() - this.t0) / 100) / 10, mb, phase: this.phase });
    return mb;
  }
  peak(phase?: string): number {
    return this.series.filter((s) => phase === undefined || s.phase === phase).reduce((n, s) => Math.max(n, s.mb), 0);
  }
  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}

const CLOCK_TICKS = 100;

function apiCpuSeconds(pid: number): number {
  return (procTicks(String(pid))?.ticks ?? Number.NaN) / CLOCK_TICKS;
}

// ---------------------------------------------------------------------------------------------
// Requests

async function mintTokens(bench: Bench, api: ApiProcess, userIds: string[]): Promise<string[]> {
  const issuer = { issuer: api.url, keys: bench.deps.keys, now: () => new Date() };
  const tokens: string[] = new Array(userIds.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let k = next++; k < userIds.length; k = next++)
        tokens[k] = (
          await createPersonalToken(bench.deps.db, issuer, userIds[k]!, ['data:read'], 'bench many-users')
        ).response.access_token;
    }),
  );
  return tokens;
}

/**
 * A fresh API process's first requests pay for its start (the engine threads' modules, JIT, the
 * connection pools): a few requests for another athlete first, so that the figures after are the
 * athletes' own.
 */
async function warmProcess(bench: Bench, api: ApiProcess, userId: string): Promise<void> {
  const [token] = await mintTokens(bench, api, [userId]);
  for (let k = 0; k < 5; k++) {
    const a = await get(undefined, api.url + CURVE_PATH, token!);
    if (a.status !== 200) throw new Error(`warm-up: ${a.status} ${a.body.toString().slice(0, 300)}`);
  }
}

interface Answer {
  status: number;
  ms: number;
  body: Buffer;
}

function get(agent: http.Agent | undefined, url: string, token: string, accept?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const req = http.request(url, { agent, headers: { authorization: `Bearer ${token}`, ...(accept ? { accept } : {}) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, ms: Number(process.hrtime.bigint() - t0) / 1e6, body: Buffer.concat(chunks) }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

interface Tick {
  at_s: number;
  rps: number;
  p50_ms: number;
  p99_ms: number;
  errors: number;
  rss_mb: number;
}

const r1 = (x: number) => Math.round(x * 10) / 10;

function summarize(latencies: number[]) {
  const sorted = [...latencies].sort((a, b) => a - b);
  return { p50_ms: r1(quantile(sorted, 0.5)), p99_ms: r1(quantile(sorted, 0.99)), max_ms: r1(sorted.at(-1) ?? Number.NaN) };
}

/**
 * A closed loop on CONNECTIONS keep-alive connections: each sends the next request, for a random
 * athlete's token, when its previous answer is in; `warmupSeconds` first, not counted. A non-200
 * answer or a failed request is an error.
 */
async function drive(
  api: ApiProcess,
  tokens: string[],
  opts: { seconds: number; warmupSeconds: number; seed: number; path?: string | ((k: number) => string); onTick?: (t: Tick) => void },
): Promise<LoadStats> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const random = prng(opts.seed); // (the same athlete sequence in every run)
  const pathOf = typeof opts.path === 'function' ? opts.path : () => (opts.path as string | undefined) ?? CURVE_PATH;
  let sent = 0;
  let record = false;
  let latencies: number[] = [];
  let window: number[] = [];
  let errors = 0;
  const statuses: Record<string, number> = {};
  const run = async (until: number) => {
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (performance.now() < until) {
          const token = tokens[Math.floor(random() * tokens.length)]!;
          try {
            const a = await get(agent, api.url + pathOf(sent++), token);
            if (!record) continue;
            statuses[a.status] = (statuses[a.status] ?? 0) + 1;
            if (a.status === 200) {
              latencies.push(a.ms);
              window.push(a.ms);
            } else errors++;
          } catch (error) {
            if (!record) continue;
            errors++;
            const key = (error as { code?: string }).code ?? 'error';
            statuses[key] = (statuses[key] ?? 0) + 1;
          }
        }
      }),
    );
  };
  try {
    await run(performance.now() + opts.warmupSeconds * 1000);
    record = true;
    const cpu0 = apiCpuSeconds(api.pid);
    const t0 = performance.now();
    const until = t0 + opts.seconds * 1000;
    let ticker: NodeJS.Timeout | undefined;
    if (opts.onTick) {
      let last = t0;
      ticker = setInterval(() => {
        const now = performance.now();
        const w = window;
        window = [];
        opts.onTick!({
          at_s: Math.round((now - t0) / 1000),
          rps: Math.round(w.length / ((now - last) / 1000)),
          ...summarize(w),
          errors,
          rss_mb: rssMb(api.pid) ?? 0,
        });
        last = now;
      }, TICK_SECONDS * 1000);
    }
    await run(until);
    clearInterval(ticker);
    const seconds = (performance.now() - t0) / 1000;
    const cpu = apiCpuSeconds(api.pid) - cpu0;
    const requests = latencies.length;
    const out = {
      athletes: tokens.length,
      requests,
      errors,
      statuses,
      seconds: r1(seconds),
      rps: r1(requests / seconds),
      ...summarize(latencies),
      api_cpu_ms_per_request: r1((cpu * 1000) / Math.max(1, requests + errors)),
    };
    latencies = [];
    return out;
  } finally {
    agent.destroy();
  }
}

// ---------------------------------------------------------------------------------------------
// The script a user would run instead (bench/longitudinal.ts calls it the same way)

function script(paths: string[], durations: number[], after: number[]): { seconds: number; best: (number | null)[][] } | { error: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-many-users-'));
  try {
    const input = path.join(dir, 'input.json');
    writeFileSync(input, JSON.stringify({ paths, thresholds: after.map((a) => a * 1000), durations }));
    const run = spawnSync('python3', [path.join(ROOT, 'bench', 'longitudinal_baseline.py'), input], {
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    });
    if (run.status !== 0) return { error: (run.stderr || run.error?.message || 'failed').trim().split('\n').at(-1)! };
    return JSON.parse(run.stdout) as { seconds: number; best: (number | null)[][] };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The fatigue grid's files (values and logs) of every athlete. */
function gridBytes(): number {
  let bytes = 0;
  const users = path.join(DIR, 'users');
  for (const user of existsSync(users) ? readdirSync(users) : []) {
    const dir = columnsDir(DIR, user);
    if (!existsSync(dir)) continue;
    for (const f of readdirSync(dir)) if (f.startsWith(`${AFTER_GRID_CHANNEL}.`)) bytes += statSync(path.join(dir, f)).size;
  }
  return bytes;
}

/** Sum and count of the sample files under DATA_DIR/users/<id>/activities. */
function sampleFiles(): { bytes: number; files: number } {
  let bytes = 0;
  let files = 0;
  const users = path.join(DIR, 'users');
  for (const user of existsSync(users) ? readdirSync(users) : []) {
    const dir = path.join(users, user, 'activities');
    if (!existsSync(dir)) continue;
    for (const f of readdirSync(dir)) {
      if (!f.endsWith('.parquet')) continue;
      bytes += statSync(path.join(dir, f)).size;
      files++;
    }
  }
  return { bytes, files };
}

function dirBytes(dir: string): number {
  if (!existsSync(dir)) return 0;
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true }))
    n += e.isDirectory() ? dirBytes(path.join(dir, e.name)) : statSync(path.join(dir, e.name)).size;
  return n;
}

// ---------------------------------------------------------------------------------------------

interface LoadStats {
  athletes: number;
  requests: number;
  errors: number;
  statuses: Record<string, number>;
  seconds: number;
  rps: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
  api_cpu_ms_per_request: number;
}

/** The fields of a row measured under load: counts, rate, latencies, the API's peak RSS and CPU per request. */
function loadFields(stats: LoadStats, rssPeakMb: number) {
  return {
    requests: stats.requests,
    errors: stats.errors,
    rps: stats.rps,
    p50_ms: stats.p50_ms,
    p99_ms: stats.p99_ms,
    max_ms: stats.max_ms,
    rss_peak_mb: rssPeakMb,
    cpu_ms: stats.api_cpu_ms_per_request,
  };
}

interface Row {
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
function commit(): string {
  if (process.env.BENCH_COMMIT) return process.env.BENCH_COMMIT;
  const r = spawnSync('git', ['log', '-1', '--format=%h %s'], { cwd: ROOT, encoding: 'utf8' });
  const dirty = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: ROOT, encoding: 'utf8' });
  return r.status === 0 ? `${r.stdout.trim().slice(0, 120)}${dirty.stdout.trim() ? ' (with uncommitted changes)' : ''}` : 'unknown';
}

export async function benchManyUsers() {
  const t0 = performance.now();
  process.stdout.write(
    `\n== many-users: U of ${COUNTS.join(', ')} athletes × ${RIDES} rides, ${CONNECTIONS} connections, random athlete per request\n\n`,
  );
  const bench = await openBench();
  const rows: Row[] = [];
  const notes: string[] = [];
  const rss = new RssSampler(t0);
  const port = await freePort();
  let api: ApiProcess | undefined;
  let ticks: Tick[] = [];
  let soak: { stats: LoadStats; firstThirdMb: number; lastThirdMb: number; series: { t: number; mb: number }[] } | undefined;
  let firstRequests: { group: string; athlete: number; rides: number; cold_ms: number; no_derived_ms: number; derived_mb: number }[] = [];
  let storage:
    | { curves_bytes: number; grid_bytes: number; activities: number; curve_rows: number; sample_bytes: number; sample_files: number }
    | undefined;
  try {
    const many = bench.athletes.get(groupSpecs()[2]!.key)!;
    const most = COUNTS.at(-1)!;

    // Stored curves beside the sample files (before any request writes derived files).
    const size = await sql<{
      curves: string;
      activities: string;
      rows: string;
    }>`SELECT pg_total_relation_size('activity_curves') AS curves, (SELECT count(*) FROM activities) AS activities, (SELECT count(*) FROM activity_curves) AS rows`.execute(
      bench.deps.db,
    );
    const files = sampleFiles();
    const s = size.rows[0]!;
    storage = {
      curves_bytes: Number(s.curves),
      grid_bytes: gridBytes(),
      activities: Number(s.activities),
      curve_rows: Number(s.rows),
      sample_bytes: files.bytes,
      sample_files: files.files,
    };

    // 1. Many athletes.
    api = await startApi(bench, port);
    rss.watch(api.pid);
    rss.phase = 'first pass';
    process.stdout.write(
      `API (pid ${api.pid}) on ${api.url}: default settings, CURVE_CACHE_SECONDS=0, API_RATE_LIMIT=1000000; RSS ${rssMb(api.pid)} MB at start\n`,
    );
    await warmProcess(bench, api, many[0]!);
    {
      // Every athlete's first request in this process, 12 at a time (columns loaded, or built from the sample files on the first run).
      const tokens = await mintTokens(bench, api, many.slice(0, most));
      const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
      const ms: number[] = [];
      let errors = 0;
      let next = 0;
      const cpu0 = apiCpuSeconds(api.pid);
      const w0 = performance.now();
      await Promise.all(
        Array.from({ length: CONNECTIONS }, async () => {
          for (let k = next++; k < tokens.length; k = next++) {
            const a = await get(agent, api!.url + CURVE_PATH, tokens[k]!).catch(() => undefined);
            if (a?.status === 200) ms.push(a.ms);
            else errors++;
          }
        }),
      );
      agent.destroy();
      const wall = (performance.now() - w0) / 1000;
      const d = summarize(ms);
      rows.push({
        workload: `first pass: each athlete's first request in this API process (warmed on athlete 0), ${CONNECTIONS} at a time`,
        athletes: most,
        rides: RIDES,
        requests: ms.length,
        errors,
        rps: r1(ms.length / wall),
        ...d,
        rss_peak_mb: rss.peak('first pass'),
        cpu_ms: r1(((apiCpuSeconds(api.pid) - cpu0) * 1000) / Math.max(1, tokens.length)),
      });
      process.stdout.write(
        `first pass over ${most} athletes: ${wall.toFixed(1)} s, p50 ${d.p50_ms} ms, p99 ${d.p99_ms} ms, ${errors} errors, RSS ${rss.sample()} MB\n`,
      );
    }
    let oneRps: number | undefined;
    let oneDistinctRps: number | undefined;
    for (const u of COUNTS) {
      rss.phase = `U=${u}`;
      const tokens = await mintTokens(bench, api, many.slice(0, u));
      const stats = await drive(api, tokens, { seconds: ROW_SECONDS, warmupSeconds: 2, seed: u });
      if (u === 1) {
        oneRps = stats.rps;
        // One athlete again, every request computed: at U = 1 the 12 connections mostly ask what
        // another one is computing, and identical requests in flight are computed once.
        const distinct = await drive(api, tokens, { seconds: ROW_SECONDS, warmupSeconds: 2, seed: 1, path: permutedPath });
        oneDistinctRps = distinct.rps;
        rows.push({
          workload: `fatigue curves, 1 athlete, every request computed (the after values in another order each time)`,
          athletes: 1,
          rides: RIDES,
          ...loadFields(distinct, rss.peak(rss.phase)),
          note: `statuses ${JSON.stringify(distinct.statuses)}`,
        });
        process.stdout.write(
          `U = 1, every request computed: ${distinct.rps} req/s, p50 ${distinct.p50_ms} ms, p99 ${distinct.p99_ms} ms, ${distinct.errors} errors, API ${distinct.api_cpu_ms_per_request} ms CPU per request\n`,
        );
      }
      const share = oneRps === undefined ? undefined : stats.rps / oneRps;
      const checks = [
        stats.errors === 0,
        stats.p50_ms <= TARGET.p50_ms,
        stats.p99_ms <= TARGET.p99_ms,
        u === 1 || (share !== undefined && share >= TARGET.rpsShare),
      ];
      const row: Row = {
        workload: `fatigue curves, random athlete of ${u}`,
        athletes: u,
        rides: RIDES,
        ...loadFields(stats, rss.peak(rss.phase)),
        target: `p50 ≤ ${TARGET.p50_ms} ms, p99 ≤ ${TARGET.p99_ms} ms${u === 1 ? '' : ', ≥ 1/3 of U = 1 req/s'}, no errors`,
        met: checks.every(Boolean),
        note: `${u === 1 ? '' : share === undefined ? 'no U = 1 row; ' : `${(share * 100).toFixed(0)} % of U = 1's req/s${oneDistinctRps ? ` (${((stats.rps / oneDistinctRps) * 100).toFixed(0)} % of U = 1's with every request computed)` : ''}; `}statuses ${JSON.stringify(stats.statuses)}`,
      };
      rows.push(row);
      process.stdout.write(
        `U = ${u}: ${stats.rps} req/s, p50 ${stats.p50_ms} ms, p99 ${stats.p99_ms} ms, max ${stats.max_ms} ms, ${stats.errors} errors, API ${stats.api_cpu_ms_per_request} ms CPU per request, RSS peak ${row.rss_peak_mb} MB\n`,
      );
      if (u === most) {
        recordTarget({
          benchmark: 'many-users',
          target: `fatigue curves for ${u} athletes × ${RIDES} rides, random athlete, ${CONNECTIONS} connections, cache off: p50 ≤ ${TARGET.p50_ms} ms, p99 ≤ ${TARGET.p99_ms} ms, ≥ 1/3 of one athlete's req/s, no errors`,
          figure: `p50 ${stats.p50_ms} ms, p99 ${stats.p99_ms} ms, ${stats.rps} req/s${share === undefined ? '' : ` (${(share * 100).toFixed(0)} % of U = 1's ${oneRps}${oneDistinctRps ? `; ${((stats.rps / oneDistinctRps) * 100).toFixed(0)} % of its ${oneDistinctRps} with every request computed` : ''})`}, ${stats.errors} errors`,
          met: row.met === true,
        });
      }
    }
    {
      // The same load off the grid: every request computed from the rides' samples.
      rss.phase = `U=${most} off the grid`;
      const tokens = await mintTokens(bench, api, many.slice(0, most));
      const stats = await drive(api, tokens, { seconds: ROW_SECONDS, warmupSeconds: 2, seed: most, path: OFF_GRID_PATH });
      const share = oneRps === undefined ? undefined : stats.rps / oneRps;
      rows.push({
        workload: `fatigue curves off the 250 kJ grid (after ${OFF_GRID_AFTER.join(', ')} kJ: from the samples), random athlete of ${most}`,
        athletes: most,
        rides: RIDES,
        ...loadFields(stats, rss.peak(rss.phase)),
        note: `${share === undefined ? '' : `${(share * 100).toFixed(0)} % of U = 1's req/s (on the grid); `}statuses ${JSON.stringify(stats.statuses)}`,
      });
      process.stdout.write(
        `U = ${most} off the grid: ${stats.rps} req/s, p50 ${stats.p50_ms} ms, p99 ${stats.p99_ms} ms, max ${stats.max_ms} ms, ${stats.errors} errors, API ${stats.api_cpu_ms_per_request} ms CPU per request\n`,
      );
    }
    if (SOAK_SECONDS > 0) {
      rss.phase = 'soak';
      const tokens = await mintTokens(bench, api, many.slice(0, most));
      process.stdout.write(`\nsoak: ${SOAK_SECONDS} s at U = ${most}, every ${TICK_SECONDS} s:\n`);
      ticks = [];
      const stats = await drive(api, tokens, {
        seconds: SOAK_SECONDS,
        warmupSeconds: 0,
        seed: 7,
        onTick: (t) => {
          ticks.push(t);
          process.stdout.write(
            `  ${t.at_s} s: ${t.rps} req/s, p50 ${t.p50_ms} ms, p99 ${t.p99_ms} ms, errors ${t.errors}, RSS ${t.rss_mb} MB\n`,
          );
        },
      });
      const series = rss.series.filter((x) => x.phase === 'soak').map(({ t, mb }) => ({ t, mb }));
      const third = Math.max(1, Math.floor(series.length / 3));
      const firstThirdMb = Math.max(...series.slice(0, third).map((x) => x.mb));
      const lastThirdMb = Math.max(...series.slice(-third).map((x) => x.mb));
      soak = { stats, firstThirdMb, lastThirdMb, series };
      rows.push({
        workload: `soak: ${SOAK_SECONDS} s, random athlete of ${most}`,
        athletes: most,
        rides: RIDES,
        ...loadFields(stats, rss.peak('soak')),
        target: `RSS flat: last third's max ≤ ${TARGET.flat}× the first third's`,
        met: lastThirdMb <= TARGET.flat * firstThirdMb && stats.errors === 0,
        note: `RSS max first third ${firstThirdMb} MB → last third ${lastThirdMb} MB; statuses ${JSON.stringify(stats.statuses)}`,
      });
      process.stdout.write(
        `soak: ${stats.rps} req/s, p50 ${stats.p50_ms} ms, p99 ${stats.p99_ms} ms, ${stats.errors} errors; RSS max first third ${firstThirdMb} MB, last third ${lastThirdMb} MB, peak ${rss.peak('soak')} MB\n`,
      );
    }
    const loadPeak = rss.peak();
    await api.stop();
    api = undefined;
    recordTarget({
      benchmark: 'many-users',
      target: `API RSS ≤ 1 GB at default settings throughout (first pass, every U, the soak)${soak ? `, flat over ${SOAK_SECONDS} s (last third ≤ ${TARGET.flat}× the first)` : ''}`,
      figure: `peak ${loadPeak} MB${soak ? `; soak first third ${soak.firstThirdMb} MB → last third ${soak.lastThirdMb} MB` : ''}`,
      met: loadPeak <= TARGET.rssMb && (!soak || soak.lastThirdMb <= TARGET.flat * soak.firstThirdMb),
    });

    // 2. First requests at 1,000 rides, one at a time, each in a fresh API process.
    const [firstGroup, denseGroup] = groupSpecs();
    const firstIds = bench.athletes.get(firstGroup!.key)!;
    const denseId = bench.athletes.get(denseGroup!.key)![0]!;
    const subjects = [...firstIds.map((id, i) => ({ id, group: firstGroup!.key, i })), { id: denseId, group: denseGroup!.key, i: 0 }];
    // Each athlete's derived files as ingestion leaves them (earlier runs' requests may have changed them).
    const d0 = performance.now();
    for (const s of subjects) await derivedAsIngested(bench, s.group === firstGroup!.key ? firstGroup! : denseGroup!, s.i, s.id);
    const derivedMb = new Map(subjects.map((s) => [s.id, r1(dirBytes(columnsDir(DIR, s.id)) / MB)]));
    process.stdout.write(
      `\nderived files of the ${subjects.length} athletes with ${FIRST_RIDES} rides appended ride by ride, as the ingest job does, in ${((performance.now() - d0) / 1000).toFixed(1)} s\n`,
    );
    let evictError: string | undefined;
    const firstPass = async (label: string) => {
      const proc = await startApi(bench, port);
      rss.watch(proc.pid);
      rss.phase = label;
      await warmProcess(bench, proc, many[0]!);
      const tokens = await mintTokens(
        bench,
        proc,
        subjects.map((s) => s.id),
      );
      const out: number[] = [];
      for (let k = 0; k < subjects.length; k++) {
        evictError ??= evict([columnsDir(DIR, subjects[k]!.id), path.join(DIR, 'users', subjects[k]!.id, 'activities')]);
        const a = await get(undefined, proc.url + CURVE_PATH, tokens[k]!);
        if (a.status !== 200) throw new Error(`${label}: ${a.status} ${a.body.toString().slice(0, 300)}`);
        out.push(r1(a.ms));
      }
      return { proc, ms: out, tokens };
    };
    const cold = await firstPass('first request');
    await cold.proc.stop();
    for (const s of subjects) rmSync(columnsDir(DIR, s.id), { recursive: true, force: true });
    const bare = await firstPass('no derived files');
    api = bare.proc;
    firstRequests = subjects.map((s, k) => ({
      group: s.group,
      athlete: s.i,
      rides: FIRST_RIDES,
      cold_ms: cold.ms[k]!,
      no_derived_ms: bare.ms[k]!,
      derived_mb: derivedMb.get(s.id)!,
    }));
    if (evictError)
      notes.push(`the athletes' files could not be dropped from the page cache (${evictError}): the first requests read them from memory`);
    process.stdout.write(
      `\nfirst request of an athlete with ${FIRST_RIDES} rides (the last year), one at a time, each in a fresh API process, the athlete's files dropped from the page cache first:\n`,
    );
    for (const f of firstRequests) {
      process.stdout.write(
        `  ${f.group} #${f.athlete}: ${f.cold_ms} ms (derived files ${f.derived_mb} MB); with no derived files ${f.no_derived_ms} ms\n`,
      );
    }
    const p50 = (xs: number[]) =>
      r1(
        quantile(
          [...xs].sort((a, b) => a - b),
          0.5,
        ),
      );
    const firstCold = firstRequests.filter((f) => f.group === firstGroup!.key);
    const coldP50 = p50(firstCold.map((f) => f.cold_ms));
    const bareP50 = p50(firstCold.map((f) => f.no_derived_ms));
    rows.push({
      workload: `first request, athlete nobody asked for yet (${FIRST_RIDES} rides over 3 years, derived files as ingestion leaves them, out of the page cache)`,
      athletes: FIRST_ATHLETES,
      rides: FIRST_RIDES,
      requests: firstCold.length,
      errors: 0,
      p50_ms: coldP50,
      max_ms: Math.max(...firstCold.map((f) => f.cold_ms)),
      target: `p50 ≤ ${TARGET.firstMs} ms`,
      met: coldP50 <= TARGET.firstMs,
      note: `each: ${firstCold.map((f) => f.cold_ms).join(', ')} ms; ${FIRST_RIDES} rides within the year: ${firstRequests.at(-1)!.cold_ms} ms`,
    });
    rows.push({
      workload: `first request with no derived files (columns/ removed; sample files out of the page cache)`,
      athletes: FIRST_ATHLETES,
      rides: FIRST_RIDES,
      requests: firstCold.length,
      errors: 0,
      p50_ms: bareP50,
      max_ms: Math.max(...firstCold.map((f) => f.no_derived_ms)),
      note: `each: ${firstCold.map((f) => f.no_derived_ms).join(', ')} ms; ${FIRST_RIDES} rides within the year: ${firstRequests.at(-1)!.no_derived_ms} ms`,
    });
    recordTarget({
      benchmark: 'many-users',
      target: `first fatigue-curve request of an athlete with ${FIRST_RIDES} rides nobody asked for yet: p50 ≤ ${TARGET.firstMs} ms`,
      figure: `p50 ${coldP50} ms over ${firstCold.length} athletes (${firstCold.map((f) => f.cold_ms).join(', ')}); with no derived files ${bareP50} ms`,
      met: coldP50 <= TARGET.firstMs,
    });

    // 3. One athlete's fatigue curves over FIRST_RIDES rides within the year, beside the script: on
    //    the grid (the rides' grid entries) and off it (their samples).
    const listed = await bench.deps.db
      .selectFrom('activities')
      .select(['id', 'samples'])
      .where('user_id', '=', denseId)
      .orderBy('start_time')
      .orderBy('id')
      .execute();
    const durations = Array.from(DEFAULT_DURATIONS);
    const paths = listed.map((a) => samplePath(DIR, denseId, a.id));
    const samples = listed.reduce((n, a) => n + a.samples, 0);
    for (const variant of [
      { label: 'on the 250 kJ grid', after: AFTER, path: CURVE_PATH },
      { label: 'off the grid, from raw streams', after: OFF_GRID_AFTER, path: OFF_GRID_PATH },
    ]) {
      rss.phase = `one athlete, ${variant.label}`;
      const token = bare.tokens.at(-1)!;
      const runs: number[] = [];
      let last: Record<string, unknown[]> | undefined;
      for (let k = 0; k < RAW_RUNS; k++) {
        const a = await get(undefined, api.url + variant.path, token, 'application/json');
        if (a.status !== 200) throw new Error(`${variant.label}: ${a.status} ${a.body.toString().slice(0, 300)}`);
        runs.push(a.ms);
        last = JSON.parse(a.body.toString()) as Record<string, unknown[]>;
      }
      const scriptRuns: number[] = [];
      let scriptError: string | undefined;
      for (let k = 0; k < SCRIPT_RUNS; k++) {
        const r = script(paths, durations, variant.after);
        if ('error' in r) {
          scriptError = r.error;
          break;
        }
        scriptRuns.push(r.seconds * 1000);
        if (k === 0 && last) {
          // The script's answers, value for value, against the service's rows (after, duration).
          const want = new Map<string, number>();
          r.best.forEach((row, j) => row.forEach((v, d) => v !== null && want.set(`${variant.after[j]}/${durations[d]}`, v)));
          const got = new Map<string, number>();
          (last.duration as number[]).forEach((d, i) => got.set(`${(last!.after as number[])[i]}/${d}`, (last!.power as number[])[i]!));
          const same = want.size === got.size && [...want].every(([key, v]) => got.get(key) === v);
          if (!same) throw new Error(`${variant.label}: the service and the script disagree (${got.size} vs ${want.size} values)`);
        }
      }
      if (scriptError) notes.push(`baseline script unavailable (${scriptError}); pip install duckdb numpy`);
      const serviceP50 = p50(runs);
      const scriptP50 = scriptRuns.length ? p50(scriptRuns) : undefined;
      const met = serviceP50 <= TARGET.rawMs && scriptP50 !== undefined && scriptP50 >= TARGET.rawSpeedup * serviceP50;
      const what = `one athlete's fatigue curves ${variant.label} (after ${variant.after.join(', ')} kJ), ${listed.length} rides within the year (${(samples / 1e6).toFixed(1)} M samples)`;
      rows.push({
        workload: `${what}, JSON, warm`,
        athletes: 1,
        rides: listed.length,
        requests: runs.length,
        errors: 0,
        p50_ms: serviceP50,
        max_ms: r1(Math.max(...runs)),
        ...(scriptP50 === undefined ? {} : { baseline: { name: 'DuckDB + numpy script', p50_ms: scriptP50 } }),
        target: `p50 ≤ ${TARGET.rawMs} ms and ≥ ${TARGET.rawSpeedup}× the script`,
        met,
      });
      recordTarget({
        benchmark: 'many-users',
        target: `${what}, default durations: p50 ≤ ${TARGET.rawMs} ms and ≥ ${TARGET.rawSpeedup}× a DuckDB + numpy script`,
        figure: `p50 ${serviceP50} ms${scriptP50 === undefined ? ', no script' : `, script ${scriptP50} ms (${(scriptP50 / serviceP50).toFixed(1)}×)`}`,
        met,
      });
    }
    await api.stop();
    api = undefined;

    // 4. Stored curves beside the sample files.
    const perActivity = storage.curves_bytes / Math.max(1, storage.activities);
    const perFile = storage.sample_bytes / Math.max(1, storage.sample_files);
    const share = perActivity / perFile;
    /** A row of bytes kept per activity beside the mean sample file, against the storage target. */
    const storageRow = (workload: string, fraction: number, note: string): Row => ({
      workload,
      athletes: 0,
      rides: storage!.activities,
      requests: 0,
      errors: 0,
      p50_ms: Number.NaN,
      target: `≤ ${TARGET.curvesShare * 100} %`,
      met: fraction <= TARGET.curvesShare,
      note,
    });
    rows.push(
      storageRow(
        `stored curves per activity (pg_total_relation_size('activity_curves') / ${storage.activities.toLocaleString('en')} activities) vs mean sample file`,
        share,
        `${(perActivity / 1024).toFixed(1)} KiB vs ${(perFile / 1024).toFixed(1)} KiB: ${(share * 100).toFixed(1)} % (${(storage.curves_bytes / MB).toFixed(0)} MiB of curves, ${storage.curve_rows.toLocaleString('en')} rows; ${(storage.sample_bytes / MB).toFixed(0)} MiB in ${storage.sample_files.toLocaleString('en')} files)`,
      ),
    );
    recordTarget({
      benchmark: 'many-users',
      target: `stored per-activity curves ≤ ${TARGET.curvesShare * 100} % of the sample files' size`,
      figure: `${(perActivity / 1024).toFixed(1)} KiB per activity vs ${(perFile / 1024).toFixed(1)} KiB per sample file: ${(share * 100).toFixed(1)} %`,
      met: share <= TARGET.curvesShare,
    });
    const gridPer = storage.grid_bytes / Math.max(1, storage.activities);
    const both = (perActivity + gridPer) / perFile;
    rows.push(
      storageRow(
        `stored curves and fatigue grid per activity (the grid's column files / ${storage.activities.toLocaleString('en')} activities) vs mean sample file`,
        both,
        `grid ${(gridPer / 1024).toFixed(1)} KiB (${((gridPer / perFile) * 100).toFixed(1)} %) + curves ${(perActivity / 1024).toFixed(1)} KiB: ${(both * 100).toFixed(1)} % (${(storage.grid_bytes / MB).toFixed(0)} MiB of grid files)`,
      ),
    );
    recordTarget({
      benchmark: 'many-users',
      target: `stored per-activity curves and fatigue grid together ≤ ${TARGET.curvesShare * 100} % of the sample files' size`,
      figure: `${((perActivity + gridPer) / 1024).toFixed(1)} KiB per activity vs ${(perFile / 1024).toFixed(1)} KiB: ${(both * 100).toFixed(1)} %`,
      met: both <= TARGET.curvesShare,
    });
  } finally {
    rss.stop();
    await api?.stop();
    await bench.lifecycle.close();
  }

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
  const table = rows.map((r) => [
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
  for (const note of notes) process.stdout.write(`note: ${note}\n`);
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
    rows,
    first_requests: firstRequests,
    storage,
    soak: soak ? { ...soak.stats, rss_first_third_max_mb: soak.firstThirdMb, rss_last_third_max_mb: soak.lastThirdMb, ticks } : null,
    rss: rss.series,
  };
  process.stdout.write(`\nwrote ${writeReport('many-users', report)} and bench/results/latest.json\n`);
}
