import test from 'ava';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestUser, tokenFor } from './helpers/users.ts';
import { uploadAndWait } from './helpers/activities.ts';
import { fixturesDir } from './helpers/fixtures.ts';
import { cacheKey, storeCacheEntry } from '../api/services/activities/cache-store.ts';

/**
 * The Redis caches stay bounded (issue 16: a soak left 35 k curve and 15 k page keys behind, 1 GB):
 * a user's entries of a superseded version are deleted when the first newer one is stored, each
 * user and cache holds at most CACHE_MAX_ENTRIES_PER_USER entries, and both caches together at most
 * CACHE_MAX_MB.
 */
let service: TestService;
// Serial: the last test sums every cache entry of the service, so no other may store meanwhile.

test.before(async () => {
  service = await startTestService({
    workers: true,
    env: { CACHE_MAX_ENTRIES_PER_USER: '3', CACHE_MAX_MB: '1', READ_CACHE_MEMORY_MB: '0' },
  });
});
test.after.always(() => service?.close());

const prefix = () => service.deps.config.QUEUE_PREFIX;
async function keys(pattern: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await service.deps.redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    found.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  return found.filter((k) => !k.includes('-index:'));
}
const get = (path: string, token: string) =>
  fetch(`${service.url}${path}`, { headers: { authorization: `Bearer ${token}`, accept: 'application/json' } });

test.serial(
  'polled pages: a change deletes the pages of the version before; at most CACHE_MAX_ENTRIES_PER_USER pages per user',
  async (t) => {
    const user = await createTestUser(service);
    const token = await tokenFor(service, user, ['data:read', 'data:write']);
    for (let limit = 1; limit <= 5; limit++) t.is((await get(`/api/v1/activities/?limit=${limit}`, token)).status, 200);
    const before = await keys(`${prefix()}:reads:${user.id}:*`);
    t.is(before.length, 3, 'five pages asked, three kept');

    const trace = await fetch(`${service.url}/api/v1/traces/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ timestamp: '2024-05-01T10:00:00Z', lactate: 2.1 }),
    });
    t.true(trace.status < 300, `trace: ${trace.status}`);
    t.is((await get('/api/v1/activities/?limit=1', token)).status, 200);
    const after = await keys(`${prefix()}:reads:${user.id}:*`);
    t.is(after.length, 1, 'the pages of the version before are gone');
    t.false(before.includes(after[0]!), 'the page left is of the new version');
  },
);

test.serial('computed curves: an upload deletes the results of the data version before', async (t) => {
  const user = await createTestUser(service);
  const token = await tokenFor(service, user, ['data:read', 'data:write']);
  const curve = '/api/v1/activities/longitudinal-mean-max?metric=power&format=json';
  t.is((await get(curve, token)).status, 200);
  t.is((await get(curve.replace('metric=power', 'metric=speed'), token)).status, 200);
  const before = await keys(`${prefix()}:computed:${user.id}:*`);
  t.is(before.length, 2);

  const bytes = new Uint8Array(readFileSync(join(fixturesDir(), 'fit', 'Garmin830_with_Stages.fit')));
  const [source] = await uploadAndWait(service, token, [{ name: 'ride.fit', bytes }]);
  t.is(source.status, 'processed');
  const answer = await get(curve, token);
  t.is(answer.status, 200);
  t.true(((await answer.json()) as { power: unknown[] }).power.length > 0, 'the new ride is in the curve');
  const after = await keys(`${prefix()}:computed:${user.id}:*`);
  t.is(after.length, 1, 'only the result of the new version is left');
  t.false(before.includes(after[0]!));
});

test.serial(
  'the store: a result of an older version than one cached is not stored; both caches together stay within CACHE_MAX_MB',
  async (t) => {
    const deps = service.deps;
    const user = await createTestUser(service);
    const newer = cacheKey(deps, 'computed', user.id, '7', 'q');
    t.true(await storeCacheEntry(deps, 'computed', user.id, '7', newer, Buffer.from('new'), 60));
    const older = cacheKey(deps, 'computed', user.id, '6', 'q');
    t.false(await storeCacheEntry(deps, 'computed', user.id, '6', older, Buffer.from('old'), 60), 'superseded before it was stored');
    t.is(await deps.redis.exists(older), 0);

    // 40 users × 100 KB: 4 MB asked of a 1 MB bound.
    const value = Buffer.alloc(100 * 1024, 7);
    const users = await Promise.all(Array.from({ length: 40 }, () => createTestUser(service)));
    for (const [i, u] of users.entries())
      t.true(
        await storeCacheEntry(
          deps,
          i % 2 ? 'reads' : 'computed',
          u.id,
          '1',
          cacheKey(deps, i % 2 ? 'reads' : 'computed', u.id, '1', 'page'),
          value,
          60,
        ),
      );
    const live = [...(await keys(`${prefix()}:computed:*`)), ...(await keys(`${prefix()}:reads:*`))];
    let bytes = 0;
    for (const key of live) bytes += await deps.redis.strlen(key);
    t.true(bytes <= 1024 * 1024, `${bytes} bytes cached`);
    t.true(bytes >= 1024 * 1024 - 2 * value.length, 'the bound is used, not emptied');
    const last = users.at(-1)!;
    t.is(await deps.redis.exists(cacheKey(deps, 'reads', last.id, '1', 'page')), 1, 'the newest entry is kept');
    t.is(Number(await deps.redis.hget(`${prefix()}:cache-sizes`, '#total')), bytes, 'the running total is exact');
  },
);
