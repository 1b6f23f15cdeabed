import test from 'ava';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { promises as fs, mkdtempSync, readFileSync, rmSync, statSync, existsSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FileMigrationProvider, Migrator, type Kysely } from 'kysely';
import pg from 'pg';
import type { Job } from 'bullmq';
import { runCli } from './helpers/cli.ts';
import { infrastructure } from './helpers/infra.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { tokenFor, TEST_PASSWORD } from './helpers/users.ts';
import { api, uploadAndWait } from './helpers/activities.ts';
import { buildActivityFit } from './helpers/fit-builder.ts';
import { fixturesDir } from './helpers/fixtures.ts';
import { canonical, freshIngest, oldLayoutCurveRows, oldRules, sameValues } from './helpers/reprocess.ts';
import { createDb, type Db, type User } from '../db/database.ts';
import { migrateToLatest, MIGRATIONS_DIR } from '../db/migrate.ts';
import { createUser } from '../db/users.ts';
import { insertSource } from '../db/sources.ts';
import { countOlderIngestRules } from '../db/reprocess.ts';
import { activityId } from '../db/activities.ts';
import { curveRows } from '../db/curves.ts';
import { hashPassword } from '../api/services/auth/passwords.ts';
import { ingestFile } from '../engine/ingest/ingest.ts';
import { CHANNELS } from '../engine/channels.ts';
import { INGEST_RULES_VERSION } from '../engine/ingest/rules.ts';
import { createSampleStore, type SampleStore } from '../engine/samples/sample-file.ts';
import { sampleKey, sourceKey } from '../lib/object-store.ts';
import { objectFile } from '../lib/object-store-local.ts';
import { createLogger } from '../lib/log.ts';
import { activityRow } from '../workers/ingest.ts';
import { reprocessProcessor, type ReprocessResult } from '../workers/reprocess.ts';
import type { ReprocessJob } from '../workers/queues.ts';
import { AFTER_GRID_CHANNEL, afterGridEntry } from '../engine/curves/after-grid.ts';

/**
 * `cli reprocess` on a copy of the database layout from before ingest versions
 * (2026-11-25T10-activity-span-index): activities stored by the old rules (their rows, sample files and
 * curves hold old numbers), then migrated to the latest layout (version 1), re-derived by the
 * workers, and compared with what a fresh ingest of the same originals gives.
 */

const LAYOUT_BEFORE_VERSIONS = '2026-11-25T10-activity-span-index';

let service: TestService;
let db: Db;
let dropDatabase: () => Promise<void>;
let dataDir: string;

interface Seeded {
  user: User;
  sourceId: string;
  bytes: Uint8Array;
  ids: string[];
}
let rider: User;
let other: User;
let single: Seeded; // a real device's ride
let brick: Seeded; // a multisport file: run then ride; the ride is deleted before the reprocess
let lost: Seeded; // its original is gone
let othersRide: Seeded; // another user's

async function oldLayoutDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const { postgresUrl } = await infrastructure();
  const name = `tds_test_${Math.floor(Date.now() / 1000)}_${randomBytes(4).toString('hex')}`;
  const url = new URL(postgresUrl);
  url.pathname = `/${name}`;
  const admin = new pg.Client({ connectionString: postgresUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
  await admin.end();
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: postgresUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`).finally(() => c.end());
    },
  };
}

/** Store a file's activities the way the old rules and the old layout did: source, original, rows, sample files, curves. */
async function seedOld(store: SampleStore, user: User, name: string, bytes: Uint8Array, tags: string[]): Promise<Seeded> {
  const { source } = await insertSource(db, {
    user_id: user.id,
    type: 'fit',
    origin: 'manual_upload',
    filename: name,
    content_sha256: createHash('sha256').update(bytes).digest('hex'),
    size_bytes: bytes.length,
    sport: null,
    tags,
  });
  await db.updateTable('sources').set({ status: 'processed', processed_at: new Date() }).where('id', '=', source.id).execute();
  const original = objectFile(dataDir, sourceKey(user.id, source.id, 'fit'));
  await fs.mkdir(path.dirname(original), { recursive: true });
  writeFileSync(original, bytes);
  const parsed = await ingestFile({ format: 'fit', bytes: bytes.slice(), sport: null });
  if (!parsed.ok) throw new Error(`${name}: ${parsed.code}`);
  const ids: string[] = [];
  for (const [index, a] of parsed.activities.entries()) {
    const id = activityId(source.id, index);
    const old = oldRules(a);
    await store.writeSampleFile(objectFile(dataDir, sampleKey(user.id, id)), { start: a.start, length: a.length, channels: old.channels });
    // Only the columns of the old layout.
    await db
      .insertInto('activities')
      .values({
        id,
        user_id: user.id,
        source_id: source.id,
        session_index: index,
        sport: a.sport,
        start_time: new Date(a.start),
        end_time: new Date(a.end),
        utc_offset_seconds: a.utcOffsetSeconds,
        metrics: a.metrics,
        tags,
        summary: JSON.stringify(old.summary),
        laps: JSON.stringify(old.laps),
        distance: a.distance,
        devices: a.devices,
        samples: a.length,
        implausible_samples: JSON.stringify(a.implausibleSamples),
      })
      .execute();
    const curves = oldLayoutCurveRows(id, old.channels, new Date());
    if (curves.length) await (db as Kysely<any>).insertInto('activity_curves').values(curves).execute(); // the old layout's columns
    ids.push(id);
  }
  return { user, sourceId: source.id, bytes, ids };
}

test.before(async () => {
  const database = await oldLayoutDatabase();
  dropDatabase = database.drop;
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'tds-reprocess-'));
  db = createDb(database.url, 2);
  const migrator = new Migrator({ db, provider: new FileMigrationProvider({ fs, path, migrationFolder: MIGRATIONS_DIR }) });
  const migrated = await migrator.migrateTo(LAYOUT_BEFORE_VERSIONS);
  if (migrated.error) throw migrated.error;

  const password_hash = await hashPassword(TEST_PASSWORD);
  rider = await createUser(db, {
    email: `rider-${randomBytes(3).toString('hex')}@example.com`,
    first_name: 'Ada',
    last_name: 'Old',
    password_hash,
  });
  other = await createUser(db, {
    email: `other-${randomBytes(3).toString('hex')}@example.com`,
    first_name: 'Bea',
    last_name: 'Old',
    password_hash,
  });
  const store = await createSampleStore({ fsync: false });
  try {
    single = await seedOld(store, rider, 'ride.fit', new Uint8Array(readFileSync(path.join(fixturesDir(), 'fit', '4078723797.fit'))), [
      'commute',
    ]);
    const start = new Date('2026-05-18T08:00:00Z');
    brick = await seedOld(
      store,
      rider,
      'brick.fit',
      buildActivityFit({
        utcOffsetSeconds: 3600,
        sessions: [
          { sport: 'running', start, seconds: 600, laps: 2 },
          { sport: 'cycling', subSport: 'road', start: new Date(start.getTime() + 700_000), seconds: 900, laps: 3 },
        ],
      }),
      [],
    );
    lost = await seedOld(
      store,
      rider,
      'lost.fit',
      buildActivityFit({ sessions: [{ sport: 'cycling', start: new Date('2026-05-20T08:00:00Z'), seconds: 1200 }] }),
      [],
    );
    othersRide = await seedOld(
      store,
      other,
      'other.fit',
      buildActivityFit({ sessions: [{ sport: 'cycling', start: new Date('2026-05-21T08:00:00Z'), seconds: 900 }] }),
      [],
    );
  } finally {
    await store.close();
  }
  rmSync(objectFile(dataDir, sourceKey(rider.id, lost.sourceId, 'fit')));

  // Today's layout: the rows become version 1, without the new fields.
  await migrateToLatest(db);
  service = await startTestService({ workers: true, env: { DATABASE_URL: database.url, DATA_DIR: dataDir } });
});

test.after.always(async () => {
  await service?.close();
  await db?.destroy();
  await dropDatabase?.();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

const cli = (...args: string[]) =>
  runCli(
    {
      DATABASE_URL: service.config.DATABASE_URL,
      REDIS_URL: service.config.REDIS_URL,
      QUEUE_PREFIX: service.config.QUEUE_PREFIX,
      DATA_DIR: dataDir,
    },
    ...args,
  );

/** The NDJSON lines of a `reprocess --json` run, and its summary (the last). */
async function reprocess(...args: string[]) {
  const run = await cli('reprocess', '--json', ...args);
  const lines = run.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  return { code: run.code, stderr: run.stderr, lines, summary: lines.at(-1) };
}

const activity = (id: string) => db.selectFrom('activities').selectAll().where('id', '=', id).executeTakeFirst();
const updatedEvents = (ids: string[]) =>
  db.selectFrom('events').select('resource_id').where('type', '=', 'activity_updated').where('resource_id', 'in', ids).execute();
const versions = (userId: string) =>
  db.selectFrom('users').select(['data_version', 'read_version']).where('id', '=', userId).executeTakeFirstOrThrow();

test.serial('the migration leaves the old rows at version 1 without the new fields', async (t) => {
  const rows = await db.selectFrom('activities').selectAll().execute();
  t.is(rows.length, 5);
  for (const row of rows)
    t.like(row, { ingest_version: 1, timer_seconds: null, moving_seconds: null, device_summary: null, dropped_records: null });
  t.is(await countOlderIngestRules(db), 5, 'what the start-up warning counts (bin/boot.ts)');
  const curves = await db.selectFrom('activity_curves').select(['encoding', 'awd']).execute();
  t.true(curves.length > 0 && curves.every((c) => c.encoding === 0), 'their stored curves are read as raw Int32 (encoding 0)');
});

test.serial('`cli reprocess --user` re-derives the old activities from their originals as a fresh ingest would, once', async (t) => {
  const token = await tokenFor(service, rider, ['data:read', 'data:write']);
  // The user deletes the ride of the multisport file: it must stay deleted.
  const [run, ride] = brick.ids as [string, string];
  t.is((await api(service, token, 'DELETE', `/api/v1/activities/${ride}`)).status, 204);
  t.false(existsSync(objectFile(dataDir, sampleKey(rider.id, ride))));

  // What clients and caches hold before: the details' ETag, a cached list page, the power column.
  const [id] = single.ids as [string];
  const before = await api(service, token, 'GET', `/api/v1/activities/${id}`);
  t.is(before.status, 200);
  t.is(before.body.ingest_version, 1);
  const listBefore = await api(service, token, 'GET', '/api/v1/activities/?limit=10');
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  const fresh = (await freshIngest(single.bytes))[0]!;
  const curveQuery = `/api/v1/activities/longitudinal-mean-max?metric=power&after=0&start=${day(fresh.start - 86_400_000)}&end=${day(fresh.end + 86_400_000)}&format=json`;
  t.is((await api(service, token, 'GET', curveQuery)).status, 200);
  const columnBefore = (await service.deps.engine.columns.held(rider.id, 'power')).get(id)!;
  const oldPower = oldRules(fresh).channels.power!;
  t.true(
    sameValues(
      columnBefore.values,
      oldPower.map((x) => (x === x ? x : 0)),
      fresh.length,
    ),
    'the column holds the old samples',
  );
  const versionsBefore = await versions(rider.id);

  const result = await reprocess('--user', rider.email);
  t.is(result.code, 3, result.stderr);
  t.like(result.lines[0], { event: 'queued', sources: 3, activities: 3, rules_version: INGEST_RULES_VERSION });
  t.like(result.summary, {
    event: 'summary',
    sources: 3,
    activities: 3,
    done: 3,
    reprocessed: 2,
    unchanged: 0,
    failed: 0,
    missing_original: 1,
    gone: 0,
    jobs_failed: 0,
  });
  t.deepEqual(
    result.summary.failures.map((f: { source_id: string; code: string }) => [f.source_id, f.code]),
    [[lost.sourceId, 'file_missing']],
  );

  // Each re-derived activity: same id, the current version, and exactly what a fresh ingest gives.
  for (const seeded of [single, brick]) {
    const expected = await freshIngest(seeded.bytes);
    const kept = seeded === brick ? [run] : seeded.ids;
    for (const activityIdKept of kept) {
      const index = seeded.ids.indexOf(activityIdKept);
      const row = (await activity(activityIdKept))!;
      t.truthy(row, 'the id is unchanged');
      t.is(row.id, activityId(seeded.sourceId, index));
      const want = activityRow(row.id, index, expected[index]!);
      t.is(row.ingest_version, INGEST_RULES_VERSION);
      t.is(row.timer_seconds, want.timer_seconds ?? null);
      t.is(row.moving_seconds, want.moving_seconds ?? null);
      t.not(row.timer_seconds, null, 'the new fields are filled');
      t.is(canonical(row.device_summary), canonical(want.device_summary));
      t.is(canonical(row.device_checks), canonical(want.device_checks));
      t.not(row.device_checks, null, 'the data checks are made');
      t.is(canonical(row.dropped_records), canonical(want.dropped_records));
      t.is(canonical(row.summary), canonical(want.summary), "the summary is a fresh ingest's");
      t.is(canonical(row.laps), canonical(want.laps));
      t.deepEqual(
        [row.sport, row.start_time.getTime(), row.end_time.getTime(), row.samples, row.distance, row.metrics, row.devices],
        [want.sport, want.start_time.getTime(), want.end_time.getTime(), want.samples, want.distance, want.metrics, want.devices],
      );
      t.deepEqual(row.tags, seeded === single ? ['commute'] : [], 'tags are kept');
      const file = await service.deps.engine.samples.readSampleFile(objectFile(dataDir, sampleKey(rider.id, row.id)));
      t.is(file.start, expected[index]!.start);
      t.is(file.length, expected[index]!.length);
      for (const channel of CHANNELS)
        t.true(
          sameValues(file.channels[channel], expected[index]!.channels[channel], file.length),
          `sample file channel ${channel} is a fresh ingest's`,
        );
      const curves = await db.selectFrom('activity_curves').selectAll().where('activity_id', '=', row.id).orderBy('metric').execute();
      const wantCurves = curveRows(row.id, expected[index]!.curves, new Date()).sort((a, b) => (a.metric < b.metric ? -1 : 1));
      t.deepEqual(
        curves.map((c) => [c.metric, c.encoding, c.level_duration, c.level_start, c.awd]),
        wantCurves.map((c) => [c.metric, c.encoding, c.level_duration, c.level_start, c.awd]),
        "the curves are a fresh ingest's",
      );
    }
  }

  t.is(await activity(ride), undefined, 'the deleted session of the multisport file is not brought back');
  t.false(existsSync(objectFile(dataDir, sampleKey(rider.id, ride))));
  t.is((await db.selectFrom('activities').select('id').where('source_id', '=', brick.sourceId).execute()).length, 1);

  const untouched = (await activity(lost.ids[0]!))!;
  t.like(untouched, { ingest_version: 1, timer_seconds: null }, 'the activity without its original is left as it was');
  t.is(
    untouched.summary!.power && (untouched.summary!.power as { max: number }).max,
    oldRules((await freshIngest(lost.bytes))[0]!).summary.power!.max,
  );
  t.like(await activity(othersRide.ids[0]!), { ingest_version: 1 }, "another user's activity is not touched");

  const events = await updatedEvents([...single.ids, ...brick.ids, ...lost.ids, ...othersRide.ids]);
  t.deepEqual(events.map((e) => e.resource_id).sort(), [id, run].sort(), 'one activity_updated per re-derived activity');
  const versionsAfter = await versions(rider.id);
  t.true(BigInt(versionsAfter.data_version) > BigInt(versionsBefore.data_version));
  t.true(BigInt(versionsAfter.read_version) > BigInt(versionsBefore.read_version));

  // The API's answers change: the details (its old ETag no longer matches), the cached list page, the channel column.
  const after = await fetch(`${service.url}/api/v1/activities/${id}`, {
    headers: { authorization: `Bearer ${token}`, 'if-none-match': before.headers.get('etag')! },
  });
  t.is(after.status, 200);
  const details = (await after.json()) as { ingest_version: number; summary: unknown };
  t.is(details.ingest_version, INGEST_RULES_VERSION);
  t.is(canonical(details.summary), canonical((await api(service, token, 'GET', `/api/v1/activities/${id}`)).body.summary));
  t.notDeepEqual(details.summary, before.body.summary);
  const listAfter = await api(service, token, 'GET', '/api/v1/activities/?limit=10');
  const listed = (body: { id: string; summary: unknown }[]) => body.find((a) => a.id === id)!.summary;
  t.notDeepEqual(listed(listAfter.body), listed(listBefore.body), 'the cached list page is not served again');
  t.deepEqual(listed(listAfter.body), details.summary);
  t.is((await api(service, token, 'GET', curveQuery)).status, 200);
  const columnAfter = (await service.deps.engine.columns.held(rider.id, 'power')).get(id)!;
  t.is(columnAfter.values.length, fresh.length);
  t.not(columnAfter.stamp, columnBefore.stamp, 'the entry of the re-derived activity has its new stamp');
  t.true(
    sameValues(
      columnAfter.values,
      fresh.channels.power!.map((x) => (x === x ? x : 0)),
      fresh.length,
    ),
    'the column holds the new samples, not stale ones',
  );
  // `after=0` at the default durations is answered from the fatigue grid: its entry is re-derived too.
  const gridAfter = (await service.deps.engine.columns.held(rider.id, AFTER_GRID_CHANNEL)).get(id)!;
  t.is(gridAfter.stamp, columnAfter.stamp, 'the grid entry of the re-derived activity has its new stamp');
  t.deepEqual(Array.from(gridAfter.values), Array.from(afterGridEntry(fresh.channels.power!)), "the grid entry is the new samples' one");
});

test.serial("`cli reprocess` takes every user's old activities; `--all` a second time finds nothing to change", async (t) => {
  const first = await reprocess();
  t.is(first.code, 3, first.stderr);
  t.like(
    first.summary,
    { sources: 2, activities: 2, reprocessed: 1, unchanged: 0, missing_original: 1 },
    "the other user's activity, and the one whose original is still missing",
  );
  t.like(await activity(othersRide.ids[0]!), { ingest_version: INGEST_RULES_VERSION });
  t.is(await countOlderIngestRules(db), 1, 'only the activity whose original is missing is left at version 1');

  const kept = [single.ids[0]!, brick.ids[0]!, othersRide.ids[0]!];
  const eventsBefore = (await updatedEvents(kept)).length;
  t.is(eventsBefore, 3);
  const versionsBefore = await versions(rider.id);
  const mtimes = kept.map((id) => statSync(objectFile(dataDir, sampleKey(id === othersRide.ids[0] ? other.id : rider.id, id))).mtimeMs);

  const again = await reprocess('--all');
  t.is(again.code, 3, again.stderr);
  t.like(again.summary, { sources: 4, activities: 4, reprocessed: 0, unchanged: 3, failed: 0, missing_original: 1, jobs_failed: 0 });
  t.is((await updatedEvents(kept)).length, eventsBefore, 'no event for unchanged activities');
  t.deepEqual(await versions(rider.id), versionsBefore, 'nothing changed: caches stay valid');
  t.deepEqual(
    kept.map((id) => statSync(objectFile(dataDir, sampleKey(id === othersRide.ids[0] ? other.id : rider.id, id))).mtimeMs),
    mtimes,
    'no sample file is written again',
  );
  t.is((await db.selectFrom('activities').select('id').execute()).length, 4, 'no row added');

  const none = await reprocess('--user', other.email);
  t.is(none.code, 0, none.stderr);
  t.like(none.summary, { sources: 0, activities: 0, reprocessed: 0 });
});

test.serial(
  'a retried job (its worker killed after the new sample file was in place) commits the change once; a second run changes nothing',
  async (t) => {
    const deps = {
      db,
      pool: service.deps.engine.pool,
      samples: service.deps.engine.samples,
      files: service.deps.engine.files,
      log: createLogger('silent'),
      now: () => new Date(),
    };
    const run = reprocessProcessor(deps);
    const job = (data: ReprocessJob, attemptsMade: number) => ({ data, attemptsMade, stalledCounter: 0 }) as unknown as Job<ReprocessJob>;
    const token = await tokenFor(service, rider, ['data:read', 'data:write']);
    const bytes = buildActivityFit({ sessions: [{ sport: 'cycling', start: new Date('2026-06-01T08:00:00Z'), seconds: 1500, laps: 3 }] });
    const [source] = await uploadAndWait(service, token, [{ name: 'killed.fit', bytes }]);
    const id = source.activity_ids[0] as string;
    const fresh = (await freshIngest(bytes))[0]!;
    // As the old rules stored it, then a killed attempt: the new sample file renamed into place, a temporary file left, nothing committed.
    const old = oldRules(fresh);
    await db
      .updateTable('activities')
      .set({ ingest_version: 1, summary: JSON.stringify(old.summary), laps: JSON.stringify(old.laps), timer_seconds: null })
      .where('id', '=', id)
      .execute();
    await service.deps.engine.samples.writeSampleFile(objectFile(dataDir, sampleKey(rider.id, id)), fresh);
    const leftover = `${objectFile(dataDir, sampleKey(rider.id, id))}.tmp-0123456789ab`;
    writeFileSync(leftover, 'partial');
    const eventsBefore = (await updatedEvents([id])).length;

    const retried: ReprocessResult = await run(job({ sourceId: source.id }, 1));
    t.like(retried, { reprocessed: 1, unchanged: 0, failed: 0 });
    t.false(existsSync(leftover), "the killed attempt's temporary file is removed");
    t.like(await activity(id), { ingest_version: INGEST_RULES_VERSION });
    t.is(canonical((await activity(id))!.summary), canonical(activityRow(id, 0, fresh).summary));
    t.is((await updatedEvents([id])).length, eventsBefore + 1, 'one event');

    const skipped = await run(job({ sourceId: source.id }, 0));
    t.like(skipped, { reprocessed: 0, unchanged: 1, skipped: 'already current' });
    const again = await run(job({ sourceId: source.id, all: true }, 0));
    t.like(again, { reprocessed: 0, unchanged: 1 });
    t.is((await updatedEvents([id])).length, eventsBefore + 1, 'no second event');
    t.like(await run(job({ sourceId: randomUUID() }, 0)), { skipped: 'source deleted' });
  },
);

test('`cli reprocess` names an unknown user', async (t) => {
  const run = await cli('reprocess', '--user', 'nobody@example.com');
  t.is(run.code, 2);
  t.regex(run.stderr, /no user with email nobody@example.com/);
});
