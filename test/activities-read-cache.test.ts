import test from 'ava';
import http from 'node:http';
import { startTestService, type TestService } from './helpers/service.ts';
import { apiRoutes, createApp } from '../api/app.ts';
import { createTestApplication, createTestUser, tokenFor } from './helpers/users.ts';
import { api, uploadAndWait } from './helpers/activities.ts';
import type { User } from '../db/database.ts';

/** A CSV ride of `seconds` s of power starting at `stamp` (UTC). */
function ride(stamp: string, seconds = 600) {
  const start = Date.parse(stamp);
  const lines = Array.from({ length: seconds }, (_, i) => `${new Date(start + i * 1000).toISOString().slice(0, 19)}Z,${150 + (i % 50)}`);
  return new TextEncoder().encode(`timestamp,power\n${lines.join('\n')}\n`);
}

let service: TestService;
let uncached: TestService;
test.before(async () => {
  service = await startTestService({ workers: true });
  uncached = await startTestService({ env: { READ_CACHE_SECONDS: '0' } });
});
test.after.always(async () => {
  await service?.close();
  await uncached?.close();
});

async function athlete() {
  const user = await createTestUser(service);
  const token = await tokenFor(service, user, ['data:read', 'data:write']);
  const [appA, appB] = [
    await createTestApplication(service, user, { name: 'A' }),
    await createTestApplication(service, user, { name: 'B' }),
  ];
  const tokenA = await tokenFor(service, user, ['data:read', 'data:write'], appA.id);
  const tokenB = await tokenFor(service, user, ['data:read', 'data:write'], appB.id);
  return { user, token, tokenA, tokenB };
}

async function uploadRide(token: string, stamp: string): Promise<string> {
  const [source] = await uploadAndWait(service, token, [{ name: 'ride.csv', bytes: ride(stamp) }], { sport: 'cycling' });
  if (source.status !== 'processed') throw new Error(JSON.stringify(source));
  return source.activity_ids[0];
}

const cachedKeys = (user: User) => service.deps.redis.keys(`${service.deps.config.QUEUE_PREFIX}:reads:${user.id}:*`);
const list = async (token: string, query = '') => {
  const res = await api(service, token, 'GET', `/api/v1/activities/${query}`);
  if (res.status !== 200) throw new Error(`list: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { id: string; app_metadata: unknown; traces: { id: string; lactate: number | null; app_metadata: unknown }[] }[];
};

test('a page is served from the cache: same body and headers, and a change made behind the writers is not seen', async (t) => {
  const { user, tokenA } = await athlete();
  const id = await uploadRide(tokenA, '2026-05-01T08:00:00Z');
  const trace = (await api(service, tokenA, 'POST', '/api/v1/traces/', { timestamp: '2026-05-01T08:05:00Z', lactate: 1.5 })).body.id;

  const first = await fetch(`${service.url}/api/v1/activities/?limit=10`, { headers: { authorization: `Bearer ${tokenA}` } });
  const second = await fetch(`${service.url}/api/v1/activities/?limit=10`, { headers: { authorization: `Bearer ${tokenA}` } });
  t.is(first.headers.get('content-type'), 'application/json; charset=utf-8');
  t.is(second.headers.get('content-type'), 'application/json; charset=utf-8');
  t.is(await second.text(), await first.text());
  t.is((await cachedKeys(user)).length, 1);

  // Written straight to the database, bypassing every writer: the cached page does not show it...
  await service.deps.db.updateTable('traces').set({ lactate: 9.9 }).where('id', '=', trace).execute();
  t.is((await list(tokenA, '?limit=10'))[0]!.traces[0]!.lactate, 1.5);
  // ...another query is another page; and the next change through the API shows both.
  t.is((await list(tokenA, '?limit=11'))[0]!.traces[0]!.lactate, 9.9);
  t.is((await api(service, tokenA, 'PUT', `/api/v1/activities/${id}/app-metadata`, { seen: true })).status, 200);
  const after = (await list(tokenA, '?limit=10'))[0]!;
  t.is(after.traces[0]!.lactate, 9.9);
  t.deepEqual(after.app_metadata, { seen: true });
});

test('every change to what the list shows is seen at once by the next identical request (list and latest)', async (t) => {
  const { token, tokenA, tokenB } = await athlete();
  const older = await uploadRide(token, '2026-06-01T08:00:00Z');
  const views = async () => ({
    a: await list(tokenA),
    b: await list(tokenB),
    first: await list(token),
    latest: (await api(service, tokenA, 'GET', '/api/v1/activities/latest')).body,
  });
  let seen = await views(); // cache every view

  const newer = await uploadRide(token, '2026-06-02T08:00:00Z');
  seen = await views();
  t.deepEqual(
    seen.a.map((a) => a.id),
    [newer, older],
    'an uploaded activity',
  );
  t.is(seen.latest.id, newer);

  const traceId = (await api(service, token, 'POST', '/api/v1/traces/', { timestamp: '2026-06-02T08:03:00Z', lactate: 2 })).body.id;
  seen = await views();
  t.deepEqual(
    seen.a[0]!.traces.map((x) => x.id),
    [traceId],
    'a created trace',
  );
  t.deepEqual(
    seen.latest.traces.map((x: { id: string }) => x.id),
    [traceId],
  );

  t.is((await api(service, token, 'PUT', `/api/v1/traces/${traceId}`, { timestamp: '2026-06-02T08:03:00Z', lactate: 3.5 })).status, 200);
  seen = await views();
  t.is(seen.a[0]!.traces[0]!.lactate, 3.5, 'a replaced trace');

  t.is((await api(service, tokenA, 'PUT', `/api/v1/traces/${traceId}/app-metadata`, { step: 4 })).status, 200);
  seen = await views();
  t.deepEqual(seen.a[0]!.traces[0]!.app_metadata, { step: 4 }, "the application's trace metadata");
  t.is(seen.b[0]!.traces[0]!.app_metadata, null, "another application's page is its own");
  t.is(seen.first[0]!.traces[0]!.app_metadata, null);

  t.is((await api(service, tokenA, 'DELETE', `/api/v1/traces/${traceId}/app-metadata`)).status, 204);
  seen = await views();
  t.is(seen.a[0]!.traces[0]!.app_metadata, null, 'deleted trace metadata');

  t.is((await api(service, tokenB, 'PUT', `/api/v1/activities/${newer}/app-metadata`, { plan: 'z2' })).status, 200);
  seen = await views();
  t.deepEqual(seen.b[0]!.app_metadata, { plan: 'z2' }, "the application's activity metadata");
  t.is(seen.a[0]!.app_metadata, null);
  t.is(seen.latest.app_metadata, null);
  t.deepEqual((await api(service, tokenB, 'GET', '/api/v1/activities/latest')).body.app_metadata, { plan: 'z2' });

  t.is((await api(service, tokenB, 'DELETE', `/api/v1/activities/${newer}/app-metadata`)).status, 204);
  seen = await views();
  t.is(seen.b[0]!.app_metadata, null, 'deleted activity metadata');

  t.is((await api(service, token, 'DELETE', `/api/v1/traces/${traceId}`)).status, 204);
  seen = await views();
  t.deepEqual(seen.a[0]!.traces, [], 'a deleted trace');

  t.is((await api(service, token, 'DELETE', `/api/v1/activities/${newer}`)).status, 204);
  seen = await views();
  t.deepEqual(
    seen.a.map((a) => a.id),
    [older],
    'a deleted activity',
  );
  t.is(seen.latest.id, older);
});

test("one user's changes leave another user's cached pages alone; READ_CACHE_SECONDS=0 caches nothing", async (t) => {
  const one = await athlete();
  const two = await athlete();
  await uploadRide(two.token, '2026-07-01T08:00:00Z');
  await list(two.token);
  const before = await cachedKeys(two.user);
  await uploadRide(one.token, '2026-07-01T08:00:00Z');
  await list(two.token);
  t.deepEqual(await cachedKeys(two.user), before, "the other user's page is still the cached one");

  const user = await createTestUser(uncached);
  const token = await tokenFor(uncached, user, ['data:read']);
  t.deepEqual((await api(uncached, token, 'GET', '/api/v1/activities/')).body, []);
  t.is((await api(uncached, token, 'GET', '/api/v1/activities/latest')).body, null);
  t.deepEqual(await uncached.deps.redis.keys(`${uncached.deps.config.QUEUE_PREFIX}:reads:*`), []);
});

test('pages carry a strong ETag: a matching If-None-Match is answered 304 without a body, until a change', async (t) => {
  const { tokenA } = await athlete();
  const id = await uploadRide(tokenA, '2026-08-01T08:00:00Z');
  const get = (headers: Record<string, string> = {}, path = '/api/v1/activities/?limit=10') =>
    fetch(`${service.url}${path}`, { headers: { authorization: `Bearer ${tokenA}`, ...headers } });
  const first = await get();
  const etag = first.headers.get('etag')!;
  t.regex(etag, /^"[A-Za-z0-9_-]{32}"$/);
  t.is((await get()).headers.get('etag'), etag, 'the cached page has the same ETag');
  const notModified = await get({ 'if-none-match': etag });
  t.is(notModified.status, 304);
  t.is(notModified.headers.get('etag'), etag);
  t.is(await notModified.text(), '');
  t.is((await get({ 'if-none-match': '"something else"' })).status, 200);

  t.is((await api(service, tokenA, 'PUT', `/api/v1/activities/${id}/app-metadata`, { seen: true })).status, 200);
  const changed = await get({ 'if-none-match': etag });
  t.is(changed.status, 200, 'a change makes another page');
  t.not(changed.headers.get('etag'), etag);
  t.deepEqual(((await changed.json()) as { app_metadata: unknown }[])[0]!.app_metadata, { seen: true });

  const latest = await get({}, '/api/v1/activities/latest');
  t.is((await get({ 'if-none-match': latest.headers.get('etag')! }, '/api/v1/activities/latest')).status, 304);
  // Built on every request, the same page has the same ETag.
  const user = await createTestUser(uncached);
  const token = await tokenFor(uncached, user, ['data:read']);
  const built = await fetch(`${uncached.url}/api/v1/activities/`, { headers: { authorization: `Bearer ${token}` } });
  t.is(
    (
      await fetch(`${uncached.url}/api/v1/activities/`, {
        headers: { authorization: `Bearer ${token}`, 'if-none-match': built.headers.get('etag')! },
      })
    ).status,
    304,
  );
});

test("each API process answers repeated polls from its memory, and sees another process's writes at once", async (t) => {
  // A second API process: the same database and Redis, its own memory of pages.
  const server = http.createServer(createApp({ ...service.deps }, apiRoutes).callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => void server.close());
  const other = { ...service, url: `http://127.0.0.1:${(server.address() as { port: number }).port}` };

  const { user, tokenA } = await athlete();
  const id = await uploadRide(tokenA, '2026-09-01T08:00:00Z');
  const trace = (await api(service, tokenA, 'POST', '/api/v1/traces/', { timestamp: '2026-09-01T08:05:00Z', lactate: 1.5 })).body.id;
  const lactate = async (s: TestService) => (await api(s, tokenA, 'GET', '/api/v1/activities/')).body[0].traces[0].lactate;
  t.is(await lactate(service), 1.5);
  t.is(await lactate(other), 1.5);
  const etags = await Promise.all(
    [service, other].map(async (s) => (await api(s, tokenA, 'GET', '/api/v1/activities/')).headers.get('etag')),
  );
  t.is(etags[0], etags[1], 'the page read from Redis by the other process has the same ETag');

  // Gone from Redis and changed behind the writers: the first process still answers from its memory...
  await service.deps.redis.del(...(await cachedKeys(user)));
  await service.deps.db.updateTable('traces').set({ lactate: 9.9 }).where('id', '=', trace).execute();
  t.is(await lactate(service), 1.5);
  t.is(await lactate(other), 1.5);
  // ...and a change through either process is seen by both at once.
  t.is((await api(other, tokenA, 'PUT', `/api/v1/activities/${id}/app-metadata`, { seen: 1 })).status, 200);
  t.is(await lactate(service), 9.9);
  t.is(await lactate(other), 9.9);
  t.is((await api(service, tokenA, 'PUT', `/api/v1/activities/${id}/app-metadata`, { seen: 2 })).status, 200);
  t.deepEqual((await api(other, tokenA, 'GET', '/api/v1/activities/')).body[0].app_metadata, { seen: 2 });
  t.deepEqual((await api(service, tokenA, 'GET', '/api/v1/activities/')).body[0].app_metadata, { seen: 2 });
});
