/**
 * With STORAGE=s3 a host's copies and channel columns stay within DISK_CACHE_MAX_MB
 * (workers/disk-budget.ts): over it, the columns of the users served least recently are removed, a
 * user served within the last minute is kept, and the requests after answer the same, rebuilding what
 * they need (from the grid rows in PostgreSQL, and from the store's sample files).
 */
import test from 'ava';
import { existsSync } from 'node:fs';
import { startTestService, type TestService } from './helpers/service.ts';
import { testAthlete } from './helpers/users.ts';
import { api, ingestIdle, uploadAndWait } from './helpers/activities.ts';
import { buildActivityFit } from './helpers/fit-builder.ts';
import { testBucket } from './helpers/rgw.ts';
import { diskBudget } from '../workers/disk-budget.ts';
import { processLock } from '../engine/samples/channel-columns.ts';
import { columnsDir } from '../lib/storage.ts';

let service: TestService;
let bucket: Awaited<ReturnType<typeof testBucket>>;

test.before(async () => {
  bucket = await testBucket();
  service = await startTestService({ workers: true, env: { ...bucket.env, CURVE_CACHE_SECONDS: '0' } });
});
test.after.always(async () => {
  await service?.close();
  await bucket?.remove();
});

function ride(day: number, seed: number): Uint8Array {
  return buildActivityFit({
    utcOffsetSeconds: 0,
    sessions: [
      {
        sport: 'cycling',
        start: new Date(Date.UTC(2024, 1, 1, 7) + day * 86_400_000),
        seconds: 3000,
        record: (i) => ({ power: 180 + ((i * seed) % 200), heartRate: 130, cadence: 90, speed: 8, distance: i * 8 }),
      },
    ],
  });
}

const CURVES = ['after=0,250', 'after=0,100'].map(
  (a) => `/api/v1/activities/longitudinal-mean-max?metric=power&${a}&start=2024-01-01&end=2024-12-31&format=json`,
);

test("over the budget, the least recently served users' columns go; one served lately stays; answers are unchanged", async (t) => {
  const athletes = [];
  for (let k = 0; k < 3; k++) {
    const a = await testAthlete(service);
    await uploadAndWait(service, a.token, [
      { name: 'a.fit', bytes: ride(k, k + 3) },
      { name: 'b.fit', bytes: ride(k + 1, k + 9) },
    ]);
    athletes.push(a);
  }
  await ingestIdle(service);
  const before = [];
  for (const a of athletes) before.push(await Promise.all(CURVES.map(async (c) => (await api(service, a.token, 'GET', c)).body)));
  for (const a of athletes) t.true(existsSync(columnsDir(service.config.DATA_DIR, a.user.id)));

  // Ten minutes later, the third athlete has just been served; the budget is one byte.
  const later = () => Date.now() + 10 * 60_000;
  const budget = diskBudget({ dataDir: service.config.DATA_DIR, budgetBytes: 1, held: () => 0, lock: processLock(), now: later });
  budget.noteUse(athletes[2]!.user.id);
  await new Promise((r) => setTimeout(r, 50));
  t.true((await budget.enforce()) > 0);
  t.false(existsSync(columnsDir(service.config.DATA_DIR, athletes[0]!.user.id)));
  t.false(existsSync(columnsDir(service.config.DATA_DIR, athletes[1]!.user.id)));
  t.true(existsSync(columnsDir(service.config.DATA_DIR, athletes[2]!.user.id)), 'served within the last minute: kept');

  for (const [k, a] of athletes.entries())
    for (const [i, c] of CURVES.entries()) {
      const res = await api(service, a.token, 'GET', c);
      t.is(res.status, 200);
      t.deepEqual(res.body, before[k]![i], `athlete ${k}, ${c}`);
    }
  // Within the budget nothing goes.
  const roomy = diskBudget({ dataDir: service.config.DATA_DIR, budgetBytes: 1024 ** 3, held: () => 0, lock: processLock(), now: later });
  t.is(await roomy.enforce(), 0);
});
