import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { loadConfig, type Config } from '../../lib/config.ts';
import { createLogger } from '../../lib/log.ts';
import { Lifecycle } from '../../lib/lifecycle.ts';
import { columnsDir } from '../../lib/storage.ts';
import { createDb } from '../../db/database.ts';
import { ensureDatabase, migrateToLatest, MIGRATIONS_DIR } from '../../db/migrate.ts';
import { createUser } from '../../db/users.ts';
import type { NewActivity } from '../../db/activities.ts';
import { appendToColumns } from '../../workers/ingest.ts';
import { createApiDeps } from '../../api/server.ts';
import type { Deps } from '../../api/services/deps.ts';
import { hashPassword } from '../../api/services/auth/passwords.ts';
import { TestClock, type TestService } from '../../test/helpers/service.ts';
import { curveInputs, rideChannels, simulateRide } from '../../test/helpers/synthetic.ts';
import { storeSynthetic } from '../curves.ts';
import {
  COUNTS,
  DAY,
  DEFAULT_DIR,
  DIR,
  FIRST_ATHLETES,
  FIRST_RIDES,
  FIRST_SPAN,
  MARKER,
  NEWEST,
  POOL_SIZE,
  QUEUE_PREFIX,
  RIDES,
  SEED_FORMAT,
  SEEDERS,
  YEAR_SPAN,
} from './settings.ts';

/**
 * The data of `npm run bench -- many-users` (bench/many-users/many-users.ts): its database and data
 * directory, seeded once and reused while their marker matches (openBench), the pool of rides the
 * athletes' rides are drawn from, and an athlete's derived files made again as ingestion leaves them.
 */
export interface GroupSpec {
  key: string;
  athletes: number;
  rides: number;
  spanMs: number;
  /** Athlete i's ride j is pool ride (i × stride + j) mod POOL_SIZE. */
  stride: number;
}

export interface Marker {
  format: number;
  /** Per group key: athlete index → user id, for each athlete whose rides are all stored. */
  groups: Record<string, { rides: number; span_days: number; athletes: Record<string, string> }>;
  /** The latest migration when each seeding ended (stored curves seeded before a later migration are as it left them). */
  migration: string;
  seedings: { at: string; rides: number; seconds: number; per_1000_s: number; seeders: number }[];
}

export function groupSpecs(): GroupSpec[] {
  const most = COUNTS.at(-1)!;
  return [
    { key: `first-${FIRST_RIDES}-3y`, athletes: FIRST_ATHLETES, rides: FIRST_RIDES, spanMs: FIRST_SPAN, stride: 37 },
    { key: `dense-${FIRST_RIDES}-1y`, athletes: 1, rides: FIRST_RIDES, spanMs: YEAR_SPAN, stride: 53 },
    { key: `many-${RIDES}-1y`, athletes: most, rides: RIDES, spanMs: YEAR_SPAN, stride: 131 },
  ];
}

export interface PoolRide {
  channels: { power: Float64Array; heart_rate: Float64Array; speed: Float64Array; cadence: Float64Array };
  curves: NewActivity['curves'];
}

/** POOL_SIZE distinct rides of 30 min to 3 h, their curves computed once in the engine pool. */
export async function ridePool(deps: Deps): Promise<PoolRide[]> {
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

export async function ridePoolOf(bench: Bench): Promise<PoolRide[]> {
  bench.pool ??= await ridePool(bench.deps);
  return bench.pool;
}

export function ingestDeps(deps: Deps) {
  return { db: deps.db, columns: deps.engine.columns, log: deps.log };
}

/**
 * The athlete's derived files (columns/) as ingestion leaves them: removed, then each ride's power
 * and speed appended after its row, one ride at a time in time order, as the ingest job appends.
 */
export async function derivedAsIngested(bench: Bench, g: GroupSpec, i: number, userId: string): Promise<void> {
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

export function rideStart(g: GroupSpec, i: number, j: number): number {
  return NEWEST - g.spanMs + Math.floor(((j + 0.5) * g.spanMs) / g.rides) - ((i * 7 + j * 3) % 5) * 1_800_000;
}

export function emailOf(g: GroupSpec, i: number): string {
  return `bench-many-${g.key}-${i}@example.com`;
}

export function readMarker(): Marker | undefined {
  if (!existsSync(MARKER)) return undefined;
  try {
    return JSON.parse(readFileSync(MARKER, 'utf8')) as Marker;
  } catch {
    return undefined;
  }
}

export function writeMarker(m: Marker): void {
  const tmp = `${MARKER}.tmp`;
  writeFileSync(tmp, JSON.stringify(m, null, 1) + '\n');
  renameSync(tmp, MARKER);
}

export function latestMigration(): string {
  return (
    readdirSync(MIGRATIONS_DIR)
      .filter((f) => /\.[jt]s$/.test(f))
      .sort()
      .at(-1) ?? ''
  );
}

/** `<DATABASE_URL db>_bench_many`, and a name of its own for each other BENCH_MANY_USERS_DIR (a database goes with one directory). */
export function benchDatabaseUrl(base: Config): string {
  const url = new URL(base.DATABASE_URL);
  const own = DIR === DEFAULT_DIR ? '' : `_${createHash('sha256').update(DIR).digest('hex').slice(0, 8)}`;
  url.pathname = `${url.pathname}_bench_many${own}`;
  return url.toString();
}

export async function dropDatabase(url: string): Promise<void> {
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

export interface Bench {
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
export async function openBench(): Promise<Bench> {
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

/** Seeds what the marker lacks, or says the data matches; then the athletes' ids, per group. */
export async function seed(bench: Bench): Promise<void> {
  const { marker } = bench;
  const groups = groupSpecs();
  const missing = await missingAthletes(bench, groups);
  if (missing.length) await seedAthletes(bench, missing);
  else {
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

/**
 * The athletes the marker lists whose rides are not all stored (their ids and files dropped from the
 * marker and the data directory), and those it does not list: each to be seeded.
 */
async function missingAthletes(bench: Bench, groups: GroupSpec[]): Promise<{ g: GroupSpec; i: number }[]> {
  const { deps, marker } = bench;
  const { db } = deps;
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
  return missing;
}

/** The athletes missing, SEEDERS at a time, each ride through storeSynthetic; the marker written after each athlete. */
async function seedAthletes(bench: Bench, missing: { g: GroupSpec; i: number }[]): Promise<void> {
  const { deps, marker } = bench;
  const { db } = deps;
  const total = missing.reduce((n, m) => n + m.g.rides, 0);
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
}
