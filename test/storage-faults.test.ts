/**
 * Faults of the object store, against a real one: a gateway of the test's own (another radosgw of
 * the same Ceph cluster, scripts/ceph-rgw.sh start-gateway) stopped for 30 s while a client uploads
 * and polls curves: every upload is acknowledged (and then processed, once the gateway is back) or
 * refused with 503 and Retry-After, never a 500 and never acknowledged then lost; warm curves keep
 * answering. A writer killed mid-upload leaves no object visible (and housekeeping aborts what it
 * began). An object removed behind the service's back is a clear 404 or 409 naming the activity.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, startTestService, type TestService } from './helpers/service.ts';
import { testAthlete } from './helpers/users.ts';
import { api, ingestIdle, upload, uploadAndWait, waitForSource } from './helpers/activities.ts';
import { buildActivityFit } from './helpers/fit-builder.ts';
import { ownGateway, settingsOf, testBucket } from './helpers/rgw.ts';
import { archiveKey, sampleKey } from '../lib/object-store.ts';
import { createS3ObjectStore } from '../lib/object-store-s3.ts';
import { columnsDir } from '../lib/storage.ts';

let service: TestService;
let bucket: Awaited<ReturnType<typeof testBucket>>;
let gw: Awaited<ReturnType<typeof ownGateway>>;

test.before(async () => {
  bucket = await testBucket();
  gw = await ownGateway('faults', await freePort());
  service = await startTestService({
    workers: true,
    env: { ...bucket.env, S3_ENDPOINT: gw.endpoint, CURVE_CACHE_SECONDS: '0', READ_CACHE_SECONDS: '0' },
  });
});
test.after.always(async () => {
  await service?.close();
  await gw?.start().catch(() => undefined);
  await gw?.stop().catch(() => undefined);
  await bucket?.remove();
});

function ride(day: number, seconds: number, seed: number): Uint8Array {
  return buildActivityFit({
    utcOffsetSeconds: 0,
    sessions: [
      {
        sport: 'cycling',
        start: new Date(Date.UTC(2024, 6, 1, 7) + day * 86_400_000 + seed * 1000),
        seconds,
        record: (i) => ({ power: 140 + ((i * seed) % 220), heartRate: 130, cadence: 90, speed: 8, distance: i * 8 }),
      },
    ],
  });
}

const CURVE = '/api/v1/activities/longitudinal-mean-max?metric=power&after=0,250&start=2024-01-01&end=2024-12-31&format=json';

test.serial(
  'the gateway stopped for 30 s under uploads and curve requests: 202 or 503 + Retry-After, nothing lost, warm curves answer',
  async (t) => {
    const { user, token } = await testAthlete(service);
    await uploadAndWait(
      service,
      token,
      [1, 2].map((d) => ({ name: `warm-${d}.fit`, bytes: ride(d, 2400, d) })),
    );
    t.is((await api(service, token, 'GET', CURVE)).status, 200, 'warm: the grid column is on this host');

    const statuses = new Map<number, number>();
    const count = (s: number) => statuses.set(s, (statuses.get(s) ?? 0) + 1);
    const acknowledged: string[] = [];
    let refusedWithoutRetryAfter = 0;
    let curveFailures = 0;
    let curves = 0;
    let running = true;
    let n = 0;
    const uploads = (async () => {
      while (running) {
        n++;
        const res = await upload(service, token, [{ name: `during-${n}.fit`, bytes: ride(10 + (n % 200), 600, n + 10) }]);
        count(res.status);
        if (res.status === 202) acknowledged.push(...res.body.sources.map((s: { id: string }) => s.id));
        else if (res.status === 503 && !res.headers.get('retry-after')) refusedWithoutRetryAfter++;
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
    const polls = (async () => {
      while (running) {
        const res = await api(service, token, 'GET', CURVE);
        curves++;
        if (res.status !== 200) curveFailures++;
        await new Promise((r) => setTimeout(r, 200));
      }
    })();

    await new Promise((r) => setTimeout(r, 2_000));
    const stoppedAt = Date.now();
    await gw.stop();
    await new Promise((r) => setTimeout(r, Math.max(0, 30_000 - (Date.now() - stoppedAt))));
    const acknowledgedDuringOutage = acknowledged.length;
    await gw.start();
    await new Promise((r) => setTimeout(r, 3_000));
    running = false;
    await Promise.all([uploads, polls]);

    t.false(statuses.has(500), `no 500: ${JSON.stringify([...statuses])}`);
    t.deepEqual(
      [...statuses.keys()].filter((s) => s !== 202 && s !== 503),
      [],
      'every upload accepted or refused with 503',
    );
    t.true((statuses.get(503) ?? 0) > 0, 'uploads were refused while the gateway was down');
    t.is(refusedWithoutRetryAfter, 0, 'each 503 says when to retry');
    t.is(curveFailures, 0, `all ${curves} curve requests answered from this host's warm columns`);
    // Every acknowledged upload is processed once the gateway is back: its original was stored before the 202.
    const ends = await Promise.all(acknowledged.map((id) => waitForSource(service, token, id, 120_000)));
    t.deepEqual(
      ends.filter((s) => s.status !== 'processed').map((s) => [s.filename, s.status, s.error]),
      [],
    );
    t.true(acknowledgedDuringOutage > 0 || acknowledged.length > 0);
    for (const s of ends) t.not(await bucket.store.head(sampleKey(user.id, s.activity_ids[0])), null, `the samples of ${s.filename}`);
  },
);

test.serial('a writer killed in the middle of a multipart upload leaves no object; housekeeping aborts the upload', async (t) => {
  const file = path.join(os.tmpdir(), `killed-${randomUUID()}`);
  writeFileSync(file, randomBytes(400 * 1024 * 1024));
  const key = archiveKey(randomUUID());
  const script = `
    import { createS3ObjectStore } from './lib/object-store-s3.ts';
    const store = createS3ObjectStore(${JSON.stringify(settingsOf(bucket.env))});
    process.stdout.write('writing\\n');
    await store.putFile(${JSON.stringify(key)}, ${JSON.stringify(file)});
    process.stdout.write('done\\n');
  `;
  const child = spawn(process.execPath, ['--import=tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve) => child.stdout.on('data', (d) => String(d).includes('writing') && resolve()));
  await new Promise((r) => setTimeout(r, 400));
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));
  rmSync(file, { force: true });
  t.is(await bucket.store.head(key), null, 'no object, not even part of one');
  const listed: string[] = [];
  for await (const o of bucket.store.list('backfills/')) listed.push(o.key);
  t.false(listed.includes(key));
  const direct = createS3ObjectStore(settingsOf(bucket.env));
  t.true((await direct.abortIncompleteUploads!(new Date(Date.now() + 60_000))) >= 1, 'the unfinished upload is found and aborted');
  t.is(await direct.abortIncompleteUploads!(new Date(Date.now() + 60_000)), 0);
  direct.close();
});

test.serial("an object removed behind the service's back: a clear 404 or 409 naming the activity, never a 500", async (t) => {
  const { user, token } = await testAthlete(service);
  const [a, b] = await uploadAndWait(service, token, [
    { name: 'kept.fit', bytes: ride(100, 1800, 77) },
    { name: 'lost.fit', bytes: ride(101, 1800, 78) },
  ]);
  const lost = b.activity_ids[0] as string;
  await ingestIdle(service);
  await bucket.store.remove([sampleKey(user.id, lost), `users/${user.id}/sources/${b.id}.fit`]);
  // This host lost its copies too: every read must go to the store.
  rmSync(path.join(service.config.DATA_DIR, 'cache', 'users', user.id), { recursive: true, force: true });
  rmSync(columnsDir(service.config.DATA_DIR, user.id), { recursive: true, force: true });

  const data = await api(service, token, 'GET', `/api/v1/activities/${lost}/data?metrics=power`);
  t.is(data.status, 404);
  t.regex(data.body.detail, /no longer stored/);
  const download = await api(service, token, 'GET', `/api/v1/activities/${lost}/download`);
  t.is(download.status, 404);
  // Off the fatigue grid, the curve needs every ride's samples: it names the missing one.
  const curve = await api(
    service,
    token,
    'GET',
    '/api/v1/activities/longitudinal-mean-max?metric=power&after=0,100&start=2024-01-01&end=2024-12-31&format=json',
  );
  t.is(curve.status, 409, JSON.stringify(curve.body));
  t.regex(curve.body.detail, new RegExp(`samples of activity ${lost} are missing from the object store`));
  // The other activity is whole.
  t.is((await api(service, token, 'GET', `/api/v1/activities/${a.activity_ids[0]}/data?metrics=power`)).status, 200);
  // Deleting the broken activity clears it.
  t.is((await api(service, token, 'DELETE', `/api/v1/activities/${lost}`)).status, 204);
  t.is(
    (
      await api(
        service,
        token,
        'GET',
        '/api/v1/activities/longitudinal-mean-max?metric=power&after=0,100&start=2024-01-01&end=2024-12-31&format=json',
      )
    ).status,
    200,
  );
});
