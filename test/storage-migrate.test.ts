/**
 * `npm run cli -- storage migrate --to s3` and back, on a deployment with real data: a local
 * service's originals and sample files copied into a real S3 store (Ceph RGW) and verified; run
 * again it copies nothing; after an object goes missing (an interrupted run) only that one is
 * copied; a service started with STORAGE=s3 on the same database and an empty DATA_DIR answers as
 * the local one did; `--to local` into an empty directory gives back every file byte for byte.
 */
import test from 'ava';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestService, type TestService } from './helpers/service.ts';
import { testAthlete, tokenFor } from './helpers/users.ts';
import { uploadAndWait } from './helpers/activities.ts';
import { buildActivityFit } from './helpers/fit-builder.ts';
import { testBucket } from './helpers/rgw.ts';
import { runCli } from './helpers/cli.ts';
import { sampleKey } from '../lib/object-store.ts';

let local: TestService;
let bucket: Awaited<ReturnType<typeof testBucket>>;

test.before(async () => {
  bucket = await testBucket();
  local = await startTestService({ workers: true, env: { CURVE_CACHE_SECONDS: '0' } });
});
test.after.always(async () => {
  await local?.close();
  await bucket?.remove();
});

function ride(day: number, seed: number): Uint8Array {
  return buildActivityFit({
    utcOffsetSeconds: 0,
    sessions: [
      {
        sport: 'cycling',
        start: new Date(Date.UTC(2024, 4, 1, 7) + day * 86_400_000),
        seconds: 1500,
        record: (i) => ({ power: 150 + ((i * seed) % 200), heartRate: 130, cadence: 90, speed: 8, distance: i * 8 }),
      },
    ],
  });
}

/** Every file under a data directory that is an object (relative path = key), with its bytes. */
function objectFiles(dataDir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (rel: string) => {
    for (const e of readdirSync(path.join(dataDir, rel), { withFileTypes: true })) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(p);
      else if (/^users\/[^/]+\/(sources|activities)\/[^/]+$/.test(p)) out.set(p, readFileSync(path.join(dataDir, p)));
    }
  };
  walk('');
  return out;
}

/** The local service's settings, for the CLI. */
function cliEnv(): Record<string, string> {
  const c = local.config;
  return { DATABASE_URL: c.DATABASE_URL, REDIS_URL: c.REDIS_URL, QUEUE_PREFIX: c.QUEUE_PREFIX, DATA_DIR: c.DATA_DIR };
}

async function curveOf(service: TestService, token: string) {
  const res = await fetch(
    `${service.url}/api/v1/activities/longitudinal-mean-max?metric=power&after=0&start=2024-01-01&end=2024-12-31&format=json`,
    {
      headers: { authorization: `Bearer ${token}` },
    },
  );
  return { status: res.status, body: await res.json() };
}

test.serial('a data directory migrated to S3 and back, verified, resumable, idempotent', async (t) => {
  const { user, token } = await testAthlete(local);
  const sources = await uploadAndWait(
    local,
    token,
    [1, 2, 3].map((d) => ({ name: `r${d}.fit`, bytes: ride(d, d + 3) })),
  );
  const activityIds = sources.map((s) => s.activity_ids[0] as string);
  const before = objectFiles(local.config.DATA_DIR);
  t.is(before.size, 6, 'three originals and three sample files');
  const expected = await curveOf(local, token);
  const env = { ...cliEnv(), ...bucket.env, STORAGE: 'local' };

  const first = await runCli(env, 'storage', 'migrate', '--to', 's3', '--json');
  t.is(first.code, 0, first.stderr);
  const summary = JSON.parse(first.stdout);
  t.like(summary, { to: 's3', objects: 6, copied: 6, already_there: 0, failed: [] });
  const keys: string[] = [];
  for await (const o of bucket.store.list('')) keys.push(o.key);
  t.deepEqual(keys, [...before.keys()].sort());

  // Idempotent: nothing to copy the second time.
  const again = await runCli(env, 'storage', 'migrate', '--to', 's3', '--json');
  t.like(JSON.parse(again.stdout), { objects: 6, copied: 0, already_there: 6 });

  // Resumable: an object the store lacks (a run stopped before it) or holds otherwise is copied, alone.
  await bucket.store.remove([sampleKey(user.id, activityIds[0]!)]);
  await bucket.store.put(sampleKey(user.id, activityIds[1]!), Buffer.from('half of a file'));
  const resumed = await runCli(env, 'storage', 'migrate', '--to', 's3', '--json');
  t.like(JSON.parse(resumed.stdout), { objects: 6, copied: 2, already_there: 4, failed: [] });
  for (const [key, bytes] of before) t.true((await bucket.store.get(key)).equals(bytes), key);

  // The service on the store, with an empty data directory, answers as the local one did.
  const emptyDir = mkdtempSync(path.join(os.tmpdir(), 'tds-migrated-'));
  // The local deployment's secrets key, as the operator moves it into SECRETS_KEY.
  const secretsKey = readFileSync(path.join(local.config.DATA_DIR, 'secrets.key'), 'utf8').trim();
  const onS3 = await startTestService({
    env: { ...bucket.env, SECRETS_KEY: secretsKey, DATABASE_URL: local.config.DATABASE_URL, DATA_DIR: emptyDir, CURVE_CACHE_SECONDS: '0' },
  });
  try {
    const onS3Token = await tokenFor(onS3, user, ['data:read']);
    t.deepEqual(await curveOf(onS3, onS3Token), expected);
    const download = await fetch(`${onS3.url}/api/v1/activities/${activityIds[2]}/download`, {
      headers: { authorization: `Bearer ${onS3Token}` },
    });
    t.true(Buffer.from(await download.arrayBuffer()).equals(before.get(`users/${user.id}/sources/${sources[2]!.id}.fit`)!));
  } finally {
    await onS3.close();
  }

  // And back, into a directory that has none of it: every file as it was.
  const backDir = mkdtempSync(path.join(os.tmpdir(), 'tds-back-'));
  const back = await runCli({ ...env, DATA_DIR: backDir }, 'storage', 'migrate', '--to', 'local', '--json');
  t.is(back.code, 0, back.stderr);
  t.like(JSON.parse(back.stdout), { to: 'local', objects: 6, copied: 6, failed: [] });
  const after = objectFiles(backDir);
  t.deepEqual([...after.keys()].sort(), [...before.keys()].sort());
  for (const [key, bytes] of before) t.true(after.get(key)!.equals(bytes), key);
  t.false(
    readdirSync(path.join(backDir, 'users', user.id, 'activities')).some((n) => n.includes('.tmp-')),
    'no temporary file left',
  );
  const backAgain = await runCli({ ...env, DATA_DIR: backDir }, 'storage', 'migrate', '--to', 'local', '--json');
  t.like(JSON.parse(backAgain.stdout), { copied: 0, already_there: 6 });
  t.true(statSync(backDir).isDirectory());
  rmSync(emptyDir, { recursive: true, force: true });
  rmSync(backDir, { recursive: true, force: true });
});

test('bad use: no --to, or no store named', async (t) => {
  const env = { ...cliEnv(), STORAGE: 'local' };
  const noTo = await runCli({ ...env, ...bucket.env, STORAGE: 'local' }, 'storage', 'migrate');
  t.is(noTo.code, 2);
  t.regex(noTo.stderr, /--to must be s3 or local/);
  const noStore = await runCli(
    { ...env, S3_BUCKET: '', S3_ACCESS_KEY_ID: '', S3_SECRET_ACCESS_KEY: '' },
    'storage',
    'migrate',
    '--to',
    's3',
  );
  t.is(noStore.code, 2);
  t.regex(noStore.stderr, /S3_BUCKET, S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY/);
  const wrongKey = await runCli(
    { ...env, ...bucket.env, STORAGE: 'local', S3_SECRET_ACCESS_KEY: 'wrong' },
    'storage',
    'migrate',
    '--to',
    's3',
  );
  t.is(wrongKey.code, 2);
  t.regex(wrongKey.stderr, /S3_SECRET_ACCESS_KEY: /);
});
