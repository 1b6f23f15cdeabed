/**
 * Two API hosts and a worker host that share no disk: each in its own network namespace (veth; its
 * own loopback, ports and data directory), reaching PostgreSQL, Redis and the S3 store (Ceph RGW)
 * only over the network. An upload to host A is processed by the worker host W, and host B answers
 * its time series, curves and downloads byte for byte as a single host (the local default) answers
 * the same uploads; a delete on A is never served by B afterwards; B's first fatigue curve for an
 * athlete with 1,000 rides it never saw comes within 1 s.
 */
import test from 'ava';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestUser, tokenFor } from './helpers/users.ts';
import { uploadAndWait } from './helpers/activities.ts';
import { buildActivityFit } from './helpers/fit-builder.ts';
import { fitCopy } from './helpers/fixtures.ts';
import { yazlZip } from './helpers/zip.ts';
import { testBucket } from './helpers/rgw.ts';
import { forward, makeHost, startOn, type Host } from './helpers/netns.ts';
import { kill } from './helpers/worker-process.ts';
import type { User } from '../db/database.ts';

const BASE_URL = 'http://training.test';
let bucket: Awaited<ReturnType<typeof testBucket>>;
let admin: TestService;
let single: TestService;
const hosts: Host[] = [];
const relays: net.Server[] = [];
const children: ChildProcess[] = [];
const dirs: string[] = [];
let A: string;
let B: string;

/** What a host in namespace `h` is started with: the shared services through its gateway, a data directory of its own. */
function hostEnv(h: Host): Record<string, string> {
  const db = new URL(admin.config.DATABASE_URL);
  db.hostname = h.gateway;
  const dir = mkdtempSync(path.join(os.tmpdir(), `tds-host-${h.ns}-`));
  dirs.push(dir);
  return {
    ...bucket.env,
    S3_ENDPOINT: `http://${h.gateway}:${new URL(bucket.env.S3_ENDPOINT!).port}`,
    DATABASE_URL: db.toString(),
    REDIS_URL: `redis://${h.gateway}:6379`,
    QUEUE_PREFIX: admin.config.QUEUE_PREFIX,
    BASE_URL,
    HOST: '0.0.0.0',
    PORT: '8000',
    DATA_DIR: dir,
    LOG_LEVEL: 'info',
    ENGINE_THREADS: '1',
    DATABASE_POOL_SIZE: '4',
    CURVE_CACHE_SECONDS: '0', // Redis is shared: B must compute, not find A's answer
    READ_CACHE_SECONDS: '0',
  };
}

test.before(async () => {
  bucket = await testBucket();
  // The deployment's database and keys, made (and its tokens minted) from here, as an operator's CLI would.
  admin = await startTestService({ env: { ...bucket.env, BASE_URL, CURVE_CACHE_SECONDS: '0' } });
  single = await startTestService({ workers: true, env: { CURVE_CACHE_SECONDS: '0', READ_CACHE_SECONDS: '0' } });
  for (const n of [1, 2, 3]) {
    const h = makeHost(n);
    hosts.push(h);
    for (const port of [5432, 6379, Number(new URL(bucket.env.S3_ENDPOINT!).port)]) relays.push(await forward(h.gateway, port));
  }
  const [a, w, b] = hosts as [Host, Host, Host];
  children.push(
    ...(await Promise.all([
      startOn(a, 'bin/api.ts', 'api listening', hostEnv(a)),
      startOn(w, 'bin/worker.ts', 'workers running', { ...hostEnv(w), LOG_LEVEL: 'info' }),
      startOn(b, 'bin/api.ts', 'api listening', hostEnv(b)),
    ])),
  );
  A = `http://${a.address}:8000`;
  B = `http://${b.address}:8000`;
});

test.after.always(async () => {
  await Promise.all(children.map((c) => kill(c, 'SIGTERM')));
  for (const r of relays) r.close();
  for (const h of hosts) h.remove();
  await Promise.all([admin?.close(), single?.close()]);
  await bucket?.remove();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function ride(day: number, seconds: number, seed: number): Uint8Array {
  return buildActivityFit({
    utcOffsetSeconds: 7200,
    sessions: [
      {
        sport: 'cycling',
        start: new Date(Date.UTC(2024, 8, 1, 6) + day * 86_400_000),
        seconds,
        record: (i) => ({
          power: 160 + ((i * seed) % 240),
          heartRate: 125 + (i % 50),
          cadence: 88,
          speed: 7 + ((i * seed) % 40) / 10,
          distance: i * 8,
        }),
      },
    ],
  });
}

async function call(base: string, token: string, method: string, url: string, body?: FormData) {
  const res = await fetch(base + url, { method, headers: { authorization: `Bearer ${token}` }, body });
  return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()), type: res.headers.get('content-type') };
}

const json = (r: { bytes: Buffer }) => JSON.parse(r.bytes.toString('utf8'));

async function rows(parquet: Buffer) {
  const file = parquet.buffer.slice(parquet.byteOffset, parquet.byteOffset + parquet.byteLength) as ArrayBuffer;
  return parquetReadObjects({ file, compressors, parsers: { timestampFromMicroseconds: (micros: bigint) => micros } });
}

async function uploadTo(base: string, token: string, files: { name: string; bytes: Uint8Array }[]): Promise<{ id: string }[]> {
  const form = new FormData();
  for (const f of files) form.append('files', new Blob([f.bytes as Uint8Array<ArrayBuffer>]), f.name);
  const res = await call(base, token, 'POST', '/api/v1/activities/upload', form);
  if (res.status !== 202) throw new Error(`upload: ${res.status} ${res.bytes}`);
  return json(res).sources;
}

async function waitProcessed(base: string, token: string, ids: string[]) {
  const deadline = Date.now() + 120_000;
  const out = [];
  for (const id of ids) {
    for (;;) {
      const s = json(await call(base, token, 'GET', `/api/v1/sources/${id}`));
      if (s.status !== 'processing') {
        out.push(s);
        break;
      }
      if (Date.now() > deadline) throw new Error(`source ${id} still processing`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return out;
}

let user: User;
let token: string;
let singleToken: string;
let ids: string[] = [];
let singleIds: string[] = [];

test.serial('an upload to A is processed by the worker host; B answers as a single host does, byte for byte', async (t) => {
  user = await createTestUser(admin);
  token = await tokenFor(admin, user, ['data:read', 'data:write']);
  const other = await createTestUser(single);
  singleToken = await tokenFor(single, other, ['data:read', 'data:write']);
  const files = [1, 2, 3].map((d) => ({ name: `ride-${d}.fit`, bytes: ride(d, 2400 + d * 600, d + 5) }));
  const sources = await waitProcessed(
    A,
    token,
    (await uploadTo(A, token, files)).map((s) => s.id),
  );
  t.deepEqual(
    sources.map((s) => s.status),
    ['processed', 'processed', 'processed'],
  );
  ids = sources.map((s) => s.activity_ids[0]);
  singleIds = (await uploadAndWait(single, singleToken, files)).map((s) => s.activity_ids[0]);
  // A runs no worker, and its data directory holds nothing of the uploads: W processed them from the store.
  const aDir = dirs[0]!;
  t.deepEqual(
    readdirSync(aDir).filter((n) => n !== 'tmp' && n !== 'cache'),
    [],
  );

  const rename = new Map(singleIds.map((id, i) => [id, ids[i]!]));
  for (const [i, id] of ids.entries()) {
    const fromB = await call(B, token, 'GET', `/api/v1/activities/${id}/data?metrics=power,heart_rate,speed,cadence`);
    const fromSingle = await call(
      single.url,
      singleToken,
      'GET',
      `/api/v1/activities/${singleIds[i]}/data?metrics=power,heart_rate,speed,cadence`,
    );
    t.is(fromB.status, 200);
    t.true(fromB.bytes.equals(fromSingle.bytes), `time series ${i}: the same Parquet bytes`);
    const download = await call(B, token, 'GET', `/api/v1/activities/${id}/download`);
    t.true(download.bytes.equals(Buffer.from(files[i]!.bytes)), `download ${i}`);
  }
  const series = '/api/v1/activities/longitudinal-data?metrics=power,heart_rate&start=2024-01-01&end=2024-12-31';
  const [seriesB, seriesSingle] = [await call(B, token, 'GET', series), await call(single.url, singleToken, 'GET', series)];
  t.deepEqual(
    await rows(seriesB.bytes),
    (await rows(seriesSingle.bytes)).map((r) => ({ ...r, activity_id: rename.get(r.activity_id as string) })),
  );
  for (const after of ['0,250,500', '0,100,300']) {
    for (const format of ['json', 'parquet']) {
      const url = `/api/v1/activities/longitudinal-mean-max?metric=power&after=${after}&start=2024-01-01&end=2024-12-31&format=${format}`;
      const [fromB, fromSingle] = [await call(B, token, 'GET', url), await call(single.url, singleToken, 'GET', url)];
      t.is(fromB.status, 200, `${url}: ${fromB.bytes}`);
      if (format === 'json') {
        const expected = json(fromSingle);
        t.deepEqual(json(fromB), { ...expected, activity_id: expected.activity_id.map((id: string) => rename.get(id)) }, url);
      } else
        t.deepEqual(
          await rows(fromB.bytes),
          (await rows(fromSingle.bytes)).map((r) => ({ ...r, activity_id: rename.get(r.activity_id as string) })),
          url,
        );
    }
  }
});

test.serial('a delete on A is never served by B afterwards', async (t) => {
  // B has read the activity (its copy and its columns hold it) before A deletes it.
  t.is((await call(B, token, 'GET', `/api/v1/activities/${ids[1]}/data?metrics=power`)).status, 200);
  t.is((await call(A, token, 'DELETE', `/api/v1/activities/${ids[1]}`)).status, 204);
  t.is((await call(single.url, singleToken, 'DELETE', `/api/v1/activities/${singleIds[1]}`)).status, 204);
  t.is((await call(B, token, 'GET', `/api/v1/activities/${ids[1]}/data?metrics=power`)).status, 404);
  t.is((await call(B, token, 'GET', `/api/v1/activities/${ids[1]}`)).status, 404);
  const rename = new Map(singleIds.map((id, i) => [id, ids[i]!]));
  for (const after of ['0,250', '0,100']) {
    const url = `/api/v1/activities/longitudinal-mean-max?metric=power&after=${after}&start=2024-01-01&end=2024-12-31&format=json`;
    const fromB = json(await call(B, token, 'GET', url));
    const expected = json(await call(single.url, singleToken, 'GET', url));
    t.false(fromB.activity_id.includes(ids[1]), url);
    t.deepEqual(fromB, { ...expected, activity_id: expected.activity_id.map((id: string) => rename.get(id)) }, url);
  }
  const list = json(await call(B, token, 'GET', '/api/v1/activities?start=2024-01-01&end=2024-12-31'));
  t.false(JSON.stringify(list).includes(ids[1]!));
});

test.serial("B's first fatigue curve of an athlete with 1,000 rides it never saw: within 1 s", async (t) => {
  const athlete = await createTestUser(admin);
  const athleteToken = await tokenFor(admin, athlete, ['data:read', 'data:write']);
  // 1,000 rides of 40 min: 20 distinct rides on 20 days, 50 copies of each (other bytes, same content).
  const bases = Array.from({ length: 20 }, (_, d) => ride(100 + d, 2400, 11 + d));
  const zip = await yazlZip(
    Array.from({ length: 1000 }, (_, k) => ({
      name: `history/${k}.fit`,
      data: fitCopy(bases[k % 20]!, Math.floor(k / 20)),
      compress: false,
    })),
  );
  const form = new FormData();
  form.append('archive', new Blob([zip]), 'history.zip');
  const started = await call(A, athleteToken, 'POST', '/api/v1/activities/backfill', form);
  t.is(started.status, 202);
  const backfillId = json(started).id as string;
  const t0 = Date.now();
  for (;;) {
    const row = await admin.deps.db.selectFrom('backfills').select(['status']).where('id', '=', backfillId).executeTakeFirstOrThrow();
    if (row.status === 'completed' || row.status === 'failed') {
      t.is(row.status, 'completed');
      break;
    }
    if (Date.now() - t0 > 300_000) throw new Error('the backfill did not complete in 5 minutes');
    await new Promise((r) => setTimeout(r, 500));
  }
  t.log(`1,000 rides loaded through A and W in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  const count = await admin.deps.db
    .selectFrom('activities')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('user_id', '=', athlete.id)
    .executeTakeFirstOrThrow();
  t.is(Number(count.n), 1000);

  const url = '/api/v1/activities/longitudinal-mean-max?metric=power&after=0,250,500&start=2024-01-01&end=2024-12-31&format=json';
  const c0 = performance.now();
  const first = await call(B, athleteToken, 'GET', url);
  const coldMs = performance.now() - c0;
  t.is(first.status, 200);
  const w0 = performance.now();
  t.is((await call(B, athleteToken, 'GET', url)).status, 200);
  const warmMs = performance.now() - w0;
  t.log(`B's first fatigue curve over 1,000 rides: ${coldMs.toFixed(0)} ms cold, ${warmMs.toFixed(0)} ms warm`);
  t.true(coldMs <= 1000, `${coldMs.toFixed(0)} ms`);
  // Answered from the rides' grid rows: B fetched no sample file for it.
  t.false(existsSync(path.join(dirs[2]!, 'cache', 'users', athlete.id)));
});
