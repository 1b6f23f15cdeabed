/**
 * How per-activity curves are stored (`activity_curves`, db/curves.ts), against real PostgreSQL:
 *
 * - their size: 2 h rides uploaded as a client would, the table's growth on disk (heap, TOAST and
 *   index: pg_total_relation_size) and each row's arrays (pg_column_size) at most 20 % of the
 *   rides' Parquet sample files (docs/architecture.md, "Benchmarks" (Targets), issue 25);
 * - rows written before the compact encoding (raw little-endian Int32, `encoding` 0, as the old code
 *   wrote them) still answer the longitudinal mean-max, the longitudinal AWD, the intensity-duration
 *   model and the per-activity AWD as the compact rows do and as the plain definitions say; the
 *   recompute job (`cli curves --all`) rewrites them compactly, values unchanged, without telling
 *   clients the activity changed;
 * - the per-activity mean-max, no longer stored, is the plain mean-max of the sample file.
 *
 * Tests run one at a time: the size test measures the whole table's growth.
 */
import test from 'ava';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestUser, tokenFor } from './helpers/users.ts';
import { fixturesDir } from './helpers/fixtures.ts';
import { uploadAndWait } from './helpers/activities.ts';
import {
  allGrid,
  getFrame,
  ingested,
  isoZ,
  levelValue,
  plainAwd,
  plainMeanMax,
  plainMeanMaxAll,
  plainValueIndexed,
  poll,
  zeroFilled,
} from './helpers/curves.ts';
import { buildRideFit } from './helpers/synthetic.ts';
import { bumpDataVersion } from '../db/curves.ts';
import { decodeInt32s } from '../engine/curves/curve-codec.ts';
import { enqueueCurves } from '../workers/queues.ts';
import { sampleKey } from '../lib/object-store.ts';
import { objectFile } from '../lib/object-store-local.ts';
import type { IngestedActivity } from '../engine/ingest/ingested.ts';
import type { User } from '../db/database.ts';

let service: TestService;
test.before(async () => {
  service = await startTestService({ workers: true });
});
test.after.always(() => service?.close());

const fixture = (name: string) => new Uint8Array(readFileSync(join(fixturesDir(), 'fit', name)));

interface Uploaded {
  id: string;
  grid: IngestedActivity;
}

async function uploadAll(token: string, files: { name: string; bytes: Uint8Array }[]): Promise<Uploaded[]> {
  const out: Uploaded[] = [];
  for (const file of files) {
    const [source] = await uploadAndWait(service, token, [file]);
    if (source.status !== 'processed' || source.activity_ids.length !== 1) throw new Error(`${file.name}: ${JSON.stringify(source)}`);
    out.push({ id: source.activity_ids[0], grid: (await ingested(file.bytes))[0]! });
  }
  return out;
}

const relationSize = async () =>
  Number((await sql<{ bytes: string }>`SELECT pg_total_relation_size('activity_curves') AS bytes`.execute(service.deps.db)).rows[0]!.bytes);

test.serial('stored curves of 2 h rides take at most 20 % of their sample files on disk', async (t) => {
  const user = await createTestUser(service);
  const token = await tokenFor(service, user, ['data:read', 'data:write']);
  const before = await relationSize();
  const rides = await uploadAll(
    token,
    Array.from({ length: 8 }, (_, i) => ({
      name: `ride-${i}.fit`,
      bytes: buildRideFit({ start: new Date(Date.UTC(2026, 4, 1 + i, 7)), seconds: 7200, seed: 500 + i }),
    })),
  );
  const grown = (await relationSize()) - before;
  const sampleBytes = rides.map((r) => statSync(objectFile(service.config.DATA_DIR, sampleKey(user.id, r.id))).size);
  const samples = sampleBytes.reduce((a, b) => a + b, 0);
  t.log(
    `sample files ${Math.round(samples / rides.length)} B per ride; activity_curves grew ${Math.round(grown / rides.length)} B per ride (${((grown / samples) * 100).toFixed(1)} %)`,
  );
  t.true(grown > 0, 'the rides have stored curves');
  t.true(grown <= 0.2 * samples, `the table grew ${grown} B for ${samples} B of sample files`);

  const columns = await sql<{ activity_id: string; bytes: string; rows: string; encodings: number[] }>`
    SELECT activity_id, sum(coalesce(pg_column_size(level_duration), 0) + coalesce(pg_column_size(level_start), 0) + pg_column_size(awd)) AS bytes,
           count(*) AS rows, array_agg(DISTINCT encoding) AS encodings
    FROM activity_curves WHERE activity_id = ANY(${rides.map((r) => r.id)}::uuid[]) GROUP BY activity_id`.execute(service.deps.db);
  t.is(columns.rows.length, rides.length);
  for (const row of columns.rows) {
    const file = sampleBytes[rides.findIndex((r) => r.id === row.activity_id)]!;
    t.is(Number(row.rows), 3, 'power, speed and heart rate');
    t.deepEqual(row.encodings, [1], 'written compactly');
    t.true(Number(row.bytes) <= 0.2 * file, `activity ${row.activity_id}: ${row.bytes} B of arrays for a ${file} B sample file`);
  }
});

test.serial('the per-activity mean-max is the plain mean-max of the sample file at every duration (nothing of it is stored)', async (t) => {
  const user = await createTestUser(service);
  const token = await tokenFor(service, user, ['data:read', 'data:write']);
  const [ride] = await uploadAll(token, [{ name: 'ride.fit', bytes: fixture('Karoo-Botley_BW_Swanmore_Wickham-2025-05-09-1238.fit') }]);
  const columns = await sql<{
    column_name: string;
  }>`SELECT column_name FROM information_schema.columns WHERE table_name = 'activity_curves' ORDER BY column_name`.execute(service.deps.db);
  t.deepEqual(
    columns.rows.map((r) => r.column_name),
    ['activity_id', 'awd', 'computed_at', 'encoding', 'level_duration', 'level_start', 'metric', 'version'],
  );
  for (const metric of ['power', 'speed'] as const) {
    const x = zeroFilled(ride!.grid.channels[metric]!);
    const grid = allGrid(x.length);
    const answer = await getFrame(service, token, `/api/v1/activities/${ride!.id}/mean-max?durations=all&metric=${metric}`);
    const want = plainMeanMax(x, grid);
    t.deepEqual(answer.parquet.columns.duration, grid, metric);
    const values = answer.parquet.columns[metric] as number[];
    t.true(
      values.every((v, k) => Math.abs(v - want.best[k]!) <= 1e-9 * Math.max(1, want.best[k]!)),
      `${metric}: values`,
    );
    if (metric === 'power') t.deepEqual(values, Array.from(want.best), 'power (whole watts) exactly');
    // Starts: the earliest best window (power exact; speed: a window whose mean is the best).
    const starts = (answer.parquet.ms.start as number[]).map((ms) => (ms - ride!.grid.start) / 1000);
    if (metric === 'power') t.deepEqual(starts, Array.from(want.start), 'power: the starts of the earliest best windows');
    else
      t.true(
        starts.every((s, k) => Number.isInteger(s) && s >= 0 && s + grid[k]! <= x.length),
        'speed: windows inside the activity',
      );
  }
});

/** The activity's rows rewritten as the code before the compact encoding wrote them: raw little-endian Int32, the `encoding` column left to its default. */
async function rewriteRaw(id: string) {
  const { db } = service.deps;
  const rows = await db.selectFrom('activity_curves').selectAll().where('activity_id', '=', id).execute();
  const raw = (b: Buffer | null, encoding: number) => {
    if (b === null) return null;
    const values = decodeInt32s(b, encoding);
    return Buffer.from(values.buffer, values.byteOffset, values.byteLength);
  };
  await db.deleteFrom('activity_curves').where('activity_id', '=', id).execute();
  for (const r of rows) {
    await sql`INSERT INTO activity_curves (activity_id, metric, version, level_duration, level_start, awd, computed_at)
              VALUES (${r.activity_id}, ${r.metric}, ${r.version}, ${raw(r.level_duration, r.encoding)}, ${raw(r.level_start, r.encoding)}, ${raw(r.awd, r.encoding)}, ${r.computed_at})`.execute(
      db,
    );
  }
}

const decodedRows = async (ids: string[]) =>
  (
    await service.deps.db
      .selectFrom('activity_curves')
      .selectAll()
      .where('activity_id', 'in', ids)
      .orderBy('activity_id')
      .orderBy('metric')
      .execute()
  ).map((r) => ({
    id: r.activity_id,
    metric: r.metric,
    encoding: r.encoding,
    bytes: (r.level_duration?.length ?? 0) + (r.level_start?.length ?? 0) + r.awd.length,
    values: [r.level_duration, r.level_start, r.awd].map((b) => (b === null ? null : Array.from(decodeInt32s(b, r.encoding)))),
  }));

/** What the stored curves answer: every endpoint that reads them. */
async function answers(user: User, token: string, ids: string[]) {
  await bumpDataVersion(service.deps.db, user.id); // results cached before the rows changed are not reused
  const frame = async (path: string) => (await getFrame(service, token, path)).parquet.columns;
  const model = await fetch(`${service.url}/api/v1/profile/intensity-duration-model?date=2026-06-30&metric=power`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return {
    levels: await frame('/api/v1/activities/longitudinal-mean-max?metric=power'),
    speedLevels: await frame('/api/v1/activities/longitudinal-mean-max?metric=speed'),
    awd: await frame('/api/v1/activities/longitudinal-accumulated-work-duration?metric=power'),
    heartRateAwd: await frame('/api/v1/activities/longitudinal-accumulated-work-duration?metric=heart_rate'),
    model: (await model.json()) as { parameters: unknown },
    activityAwd: await Promise.all(
      ids.flatMap((id) =>
        ['power', 'speed', 'heart_rate'].map((m) => frame(`/api/v1/activities/${id}/accumulated-work-duration?metric=${m}`)),
      ),
    ),
  };
}

test.serial(
  'rows of the raw encoding (written before the compact one) answer every reader as compact rows do; the recompute job rewrites them compactly',
  async (t) => {
    const user = await createTestUser(service);
    const token = await tokenFor(service, user, ['data:read', 'data:write']);
    const acts = await uploadAll(token, [
      { name: 'a.fit', bytes: fixture('Garmin830_with_Stages.fit') },
      { name: 'b.fit', bytes: fixture('SigmaRox11_1.fit') },
      { name: 'c.fit', bytes: buildRideFit({ start: new Date(Date.UTC(2026, 5, 2, 7)), seconds: 5400, seed: 77 }) },
      { name: 'd.fit', bytes: buildRideFit({ start: new Date(Date.UTC(2026, 5, 3, 7)), seconds: 3600, seed: 78 }) },
    ]);
    const ids = acts.map((a) => a.id);
    const compact = await decodedRows(ids);
    t.true(compact.every((r) => r.encoding === 1));
    const want = await answers(user, token, ids);

    // The plain definitions, from the ingested grids: the value-indexed envelope (older activity on ties) and each activity's AWD.
    const ordered = [...acts].sort((x, y) => x.grid.start - y.grid.start || (x.id < y.id ? -1 : 1));
    const duration: number[] = [];
    const start: string[] = [];
    const owner: string[] = [];
    for (const a of ordered) {
      const c = plainMeanMaxAll(zeroFilled(a.grid.channels.power!));
      const vi = plainValueIndexed(c.best, c.start, 1);
      vi.duration.forEach((d, k) => {
        if (!(duration[k]! >= d)) [duration[k], start[k], owner[k]] = [d, isoZ(a.grid.start + vi.start[k]! * 1000), a.id];
      });
    }
    t.deepEqual(
      want.levels.power,
      duration.map((_, k) => levelValue(k + 1, 1)),
    );
    t.deepEqual(want.levels.duration, duration, 'longitudinal mean-max: the plain envelope');
    t.deepEqual(want.levels.start, start);
    t.deepEqual(want.levels.activity_id, owner);
    acts.forEach((a, i) => {
      const plain = plainAwd(a.grid.channels.power!, 1);
      t.deepEqual(want.activityAwd[i * 3]!.duration, plain.durations, `activity ${i}: AWD`);
    });
    t.truthy(want.model.parameters, 'the model is fitted');

    // Half the activities' rows as the old code wrote them: a mix, then all of them.
    for (const id of ids.slice(0, 2)) await rewriteRaw(id);
    const mixed = await decodedRows(ids);
    t.deepEqual(
      mixed.map((r) => r.encoding),
      compact.map((r) => (ids.slice(0, 2).includes(r.id) ? 0 : 1)),
    );
    t.deepEqual(
      mixed.map((r) => r.values),
      compact.map((r) => r.values),
      'the same values, raw',
    );
    t.deepEqual(await answers(user, token, ids), want, 'raw and compact rows together answer the same');
    for (const id of ids.slice(2)) await rewriteRaw(id);
    const raw = await decodedRows(ids);
    t.true(raw.every((r) => r.encoding === 0));
    t.deepEqual(await answers(user, token, ids), want, 'raw rows only answer the same');

    // `cli curves --all` queues this job: every row rewritten compactly, values unchanged, no activity_updated.
    const eventsBefore = await service.deps.db
      .selectFrom('events')
      .select('id')
      .where('type', '=', 'activity_updated')
      .where('resource_id', 'in', ids)
      .execute();
    await enqueueCurves(service.deps.queues, { userId: user.id, all: true });
    const rewritten = await poll('rows rewritten compactly', async () => {
      const rows = await decodedRows(ids);
      return rows.length === compact.length && rows.every((r) => r.encoding === 1) ? rows : undefined;
    });
    t.deepEqual(rewritten, compact, 'the compact rows of ingestion, byte for byte');
    t.true(rewritten.reduce((n, r) => n + r.bytes, 0) < 0.15 * raw.reduce((n, r) => n + r.bytes, 0), 'far fewer bytes than raw');
    t.deepEqual(await answers(user, token, ids), want);
    const eventsAfter = await service.deps.db
      .selectFrom('events')
      .select('id')
      .where('type', '=', 'activity_updated')
      .where('resource_id', 'in', ids)
      .execute();
    t.is(eventsAfter.length, eventsBefore.length, 'the same curves in another encoding are no change for clients');
  },
);
