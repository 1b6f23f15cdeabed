/**
 * The service with STORAGE=s3 against a real S3 store (Ceph RGW, scripts/ceph-rgw.sh), beside one
 * with the local default, the same files uploaded to both: originals and sample files are objects in
 * the bucket and nowhere else; the API answers the same bytes (time series Parquet, curves,
 * downloads), also after this host lost every local copy and column; a history import's archive goes
 * through the store; a delete removes every object of the activity.
 */
import test from 'ava';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { startTestService, type TestService } from './helpers/service.ts';
import { testAthlete } from './helpers/users.ts';
import { api, ingestIdle, upload, uploadAndWait, waitForSource } from './helpers/activities.ts';
import { buildActivityFit } from './helpers/fit-builder.ts';
import { yazlZip } from './helpers/zip.ts';
import { testBucket } from './helpers/rgw.ts';
import { archiveKey, sampleKey, sourceKey } from '../lib/object-store.ts';
import { columnsDir } from '../lib/storage.ts';
import { parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';

let s3: TestService;
let local: TestService;
let bucket: Awaited<ReturnType<typeof testBucket>>;

test.before(async () => {
  bucket = await testBucket();
  const env = { CURVE_CACHE_SECONDS: '0', READ_CACHE_SECONDS: '0' };
  [s3, local] = await Promise.all([
    startTestService({ workers: true, env: { ...env, ...bucket.env } }),
    startTestService({ workers: true, env }),
  ]);
});

test.after.always(async () => {
  await Promise.all([s3?.close(), local?.close()]);
  await bucket?.remove();
});

function ride(day: number, seconds: number, seed: number): Uint8Array {
  return buildActivityFit({
    utcOffsetSeconds: 3600,
    sessions: [
      {
        sport: 'cycling',
        start: new Date(Date.UTC(2024, 2, 1, 8) + day * 86_400_000),
        seconds,
        record: (i) => ({
          power: 100 + ((i * seed) % 300),
          heartRate: 120 + (i % 40),
          cadence: 85,
          speed: 6 + ((i * seed) % 50) / 10,
          distance: i * 7,
        }),
      },
    ],
  });
}

async function rowsOf(parquet: Buffer): Promise<Record<string, unknown>[]> {
  const file = parquet.buffer.slice(parquet.byteOffset, parquet.byteOffset + parquet.byteLength) as ArrayBuffer;
  return parquetReadObjects({ file, compressors, parsers: { timestampFromMicroseconds: (micros: bigint) => micros } });
}

async function bytes(service: TestService, token: string, url: string): Promise<{ status: number; body: Buffer; type: string | null }> {
  const res = await fetch(service.url + url, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, body: Buffer.from(await res.arrayBuffer()), type: res.headers.get('content-type') };
}

/** Whether this host holds a copy (of any version: `{key}@{stamp}`) of the object. */
function hasCopy(key: string): boolean {
  const file = path.join(s3.config.DATA_DIR, 'cache', key);
  const names = existsSync(path.dirname(file)) ? readdirSync(path.dirname(file)) : [];
  return names.some((n) => n === path.basename(file) || n.startsWith(`${path.basename(file)}@`));
}

/** Every object key in the test's bucket. */
async function bucketKeys(): Promise<string[]> {
  const keys: string[] = [];
  for await (const o of bucket.store.list('')) keys.push(o.key);
  return keys;
}

/** Files under DATA_DIR other than what a host derives or spools (cache/, columns/, tmp/, secrets.key). */
function nonDerivedFiles(dataDir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const e of readdirSync(path.join(dataDir, rel), { withFileTypes: true })) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        if (!['cache', 'tmp'].includes(p) && !p.endsWith('/columns')) walk(p);
      } else if (p !== 'secrets.key') out.push(p);
    }
  };
  walk('');
  return out;
}

test.serial(
  'an upload is stored in the bucket and answered as the local store answers it, also after every local copy is lost',
  async (t) => {
    const a = await testAthlete(s3);
    const b = await testAthlete(local);
    const files = [1, 2, 3].map((d) => ({ name: `ride-${d}.fit`, bytes: ride(d, 1800 + d * 300, 7 + d) }));
    const [onS3, onLocal] = await Promise.all([uploadAndWait(s3, a.token, files), uploadAndWait(local, b.token, files)]);
    t.deepEqual(
      onS3.map((s) => s.status),
      ['processed', 'processed', 'processed'],
    );
    const ids = onS3.map((s) => s.activity_ids[0] as string);
    const localIds = onLocal.map((s) => s.activity_ids[0] as string);

    // The originals and the sample files are objects of the bucket; nothing of them is kept under DATA_DIR but copies in cache/.
    const keys = await bucketKeys();
    for (const [i, source] of onS3.entries()) {
      t.true(keys.includes(sourceKey(a.user.id, source.id, 'fit')), `original of ${source.id}`);
      t.true(keys.includes(sampleKey(a.user.id, ids[i]!)), `samples of ${ids[i]}`);
    }
    t.deepEqual(nonDerivedFiles(s3.config.DATA_DIR), []);

    const answers = async (service: TestService, token: string, activityIds: string[]) => ({
      data: await Promise.all(
        activityIds.map((id) => bytes(service, token, `/api/v1/activities/${id}/data?metrics=power,heart_rate,speed`)),
      ),
      download: await Promise.all(activityIds.map((id) => bytes(service, token, `/api/v1/activities/${id}/download`))),
      series: await bytes(service, token, '/api/v1/activities/longitudinal-data?metrics=power&start=2024-01-01&end=2024-12-31'),
      curve: await api(
        service,
        token,
        'GET',
        '/api/v1/activities/longitudinal-mean-max?metric=power&after=0,250&start=2024-01-01&end=2024-12-31&format=json',
      ),
    });
    const expected = await answers(local, b.token, localIds);
    const check = async (when: string) => {
      const got = await answers(s3, a.token, ids);
      for (const [i, d] of got.data.entries()) {
        t.is(d.status, 200, `${when}: data ${i}`);
        t.true(d.body.equals(expected.data[i]!.body), `${when}: the time series of ride ${i} is the local store's, byte for byte`);
        t.true(got.download[i]!.body.equals(Buffer.from(files[i]!.bytes)), `${when}: the original of ride ${i}`);
      }
      t.is(got.series.status, 200);
      const rename = new Map(localIds.map((id, i) => [id, ids[i]!]));
      // Read with hyparquet (an independent reader): the same rows, each activity's id being its own service's.
      const expectedRows = (await rowsOf(expected.series.body)).map((r) => ({ ...r, activity_id: rename.get(r.activity_id as string) }));
      t.deepEqual(await rowsOf(got.series.body), expectedRows, `${when}: the longitudinal series`);
      t.is(got.curve.status, 200);
      t.deepEqual(
        got.curve.body,
        { ...expected.curve.body, activity_id: expected.curve.body.activity_id.map((id: string) => rename.get(id)) },
        when,
      );
    };
    await check('warm');
    // A host that lost its disk: copies, channel columns and fatigue grids rebuilt from the bucket.
    await ingestIdle(s3);
    rmSync(path.join(s3.config.DATA_DIR, 'cache'), { recursive: true, force: true });
    rmSync(columnsDir(s3.config.DATA_DIR, a.user.id), { recursive: true, force: true });
    // The fatigue curve on the grid comes from the rides' grid rows in PostgreSQL: not one sample file fetched.
    const cold = await api(
      s3,
      a.token,
      'GET',
      '/api/v1/activities/longitudinal-mean-max?metric=power&after=0,250&start=2024-01-01&end=2024-12-31&format=json',
    );
    t.is(cold.status, 200);
    t.false(existsSync(path.join(s3.config.DATA_DIR, 'cache')), 'no sample file fetched for the grid');
    const rows = await s3.deps.db.selectFrom('activity_fatigue_grids').select('activity_id').where('activity_id', 'in', ids).execute();
    t.is(rows.length, 3);
    await check('after the local copies were lost');
    t.true(hasCopy(sampleKey(a.user.id, ids[0]!)), 'copies fetched again');
  },
);

test.serial('a delete removes every object of the activity from the bucket and the local copies', async (t) => {
  const a = await testAthlete(s3);
  const [source] = await uploadAndWait(s3, a.token, [{ name: 'one.fit', bytes: ride(20, 1200, 5) }]);
  const id = source.activity_ids[0] as string;
  await bytes(s3, a.token, `/api/v1/activities/${id}/data?metrics=power`);
  t.true(hasCopy(sampleKey(a.user.id, id)));
  t.is((await api(s3, a.token, 'DELETE', `/api/v1/activities/${id}`)).status, 204);
  const keys = await bucketKeys();
  t.false(keys.includes(sampleKey(a.user.id, id)));
  t.false(keys.includes(sourceKey(a.user.id, source.id, 'fit')));
  t.false(hasCopy(sampleKey(a.user.id, id)));
  t.is((await api(s3, a.token, 'GET', `/api/v1/activities/${id}/data?metrics=power`)).status, 404);
});

test.serial('a history import: the archive is an object until its scan, then removed; its files become objects', async (t) => {
  const a = await testAthlete(s3);
  const zip = await yazlZip([
    { name: 'export/a.fit', data: ride(40, 900, 3) },
    { name: 'export/b.fit', data: ride(41, 900, 4) },
  ]);
  const form = new FormData();
  form.append('archive', new Blob([zip]), 'export.zip');
  const res = await fetch(`${s3.url}/api/v1/activities/backfill`, {
    method: 'POST',
    headers: { authorization: `Bearer ${a.token}` },
    body: form,
  });
  t.is(res.status, 202);
  const backfill = (await res.json()) as { id: string };
  const deadline = Date.now() + 60_000;
  let status: string | undefined;
  while (Date.now() < deadline) {
    status = (await s3.deps.db.selectFrom('backfills').select('status').where('id', '=', backfill.id).executeTakeFirst())?.status;
    if (status === 'completed' || status === 'failed') break;
    await new Promise((r) => setTimeout(r, 200));
  }
  t.is(status, 'completed');
  const keys = await bucketKeys();
  t.false(keys.includes(archiveKey(backfill.id)), 'the archive is removed after its scan');
  const sources = keys.filter((k) => k.startsWith(`users/${a.user.id}/sources/`));
  t.is(sources.length, 2);
  const list = await api(s3, a.token, 'GET', '/api/v1/activities?start=2024-01-01&end=2024-12-31');
  t.is(list.body.length ?? list.body.activities?.length, 2);
});

test.serial('a corrupt file fails alone; the other file of the request is stored and processed', async (t) => {
  const a = await testAthlete(s3);
  const res = await upload(s3, a.token, [
    { name: 'good.fit', bytes: ride(60, 600, 9) },
    { name: 'bad.fit', bytes: Buffer.from('not a fit file at all') },
  ]);
  t.is(res.status, 202, JSON.stringify(res.body));
  const [good, bad] = await Promise.all(res.body.sources.map((s: { id: string }) => waitForSource(s3, a.token, s.id)));
  t.is(good.status, 'processed');
  t.is(bad.status, 'failed');
  const keys = await bucketKeys();
  t.true(keys.includes(sampleKey(a.user.id, good.activity_ids[0])));
  // The failed file's original is kept (as with the local store: it can be downloaded, reprocessed under newer rules).
  t.true(keys.includes(sourceKey(a.user.id, bad.id, 'fit')));
});

test.serial("a sample file replaced in the store (re-derived on another host) is never read stale from this host's copy", async (t) => {
  const a = await testAthlete(s3);
  const [first, second] = await uploadAndWait(s3, a.token, [
    { name: 'x.fit', bytes: ride(70, 900, 3) },
    { name: 'y.fit', bytes: ride(71, 1500, 8) },
  ]);
  const [x, y] = [first.activity_ids[0] as string, second.activity_ids[0] as string];
  const url = (id: string) => `/api/v1/activities/${id}/data?metrics=power`;
  const before = await bytes(s3, a.token, url(x));
  const other = await bytes(s3, a.token, url(y));
  t.false(before.body.equals(other.body));
  // As `cli reprocess` does on some host: the new sample object written, then the row's updated_at moved.
  await bucket.store.put(sampleKey(a.user.id, x), await bucket.store.get(sampleKey(a.user.id, y)));
  await s3.deps.db
    .updateTable('activities')
    .set({ updated_at: new Date(Date.now() + 1000) })
    .where('id', '=', x)
    .execute();
  const after = await bytes(s3, a.token, url(x));
  t.is(after.status, 200);
  t.true(after.body.equals(other.body), 'the new version is fetched, not the copy of the old one');
});
