import test from 'ava';
import { sql } from 'kysely';
import { rename } from 'node:fs/promises';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestApplication, createTestUser, tokenFor } from './helpers/users.ts';
import { api, uploadAndWait } from './helpers/activities.ts';
import { sampleKey } from '../lib/object-store.ts';
import { objectFile } from '../lib/object-store-local.ts';

/** A CSV ride of `seconds` s of power starting at `stamp` (UTC). */
function ride(stamp: string, seconds = 600) {
  const start = Date.parse(stamp);
  const lines = Array.from({ length: seconds }, (_, i) => `${new Date(start + i * 1000).toISOString().slice(0, 19)}Z,${150 + (i % 50)}`);
  return new TextEncoder().encode(`timestamp,power\n${lines.join('\n')}\n`);
}

let service: TestService;
test.before(async () => {
  service = await startTestService({ workers: true });
});
test.after.always(async () => {
  await service?.close();
});

async function athlete() {
  const user = await createTestUser(service);
  const app = await createTestApplication(service, user, { name: 'Coach' });
  return {
    user,
    token: await tokenFor(service, user, ['data:read', 'data:write']),
    appToken: await tokenFor(service, user, ['data:read', 'data:write'], app.id),
  };
}

async function uploadRides(token: string, stamps: string[]): Promise<string[]> {
  const sources = await uploadAndWait(
    service,
    token,
    stamps.map((stamp, i) => ({ name: `ride${i}.csv`, bytes: ride(stamp) })),
    { sport: 'cycling' },
  );
  return sources.map((s) => s.activity_ids[0]);
}

/** GET with the token and these headers; fetch decodes a compressed answer and keeps its headers. */
const get = (token: string, path: string, headers: Record<string, string> = {}) =>
  fetch(`${service.url}${path}`, { headers: { authorization: `Bearer ${token}`, ...headers } });

/**
 * Poll `path`: a first 200 with an ETag and `Cache-Control: private, no-cache`, then 304 with no body
 * for its tag; after `change`, 200 with a new tag (and a 304 again for that one).
 */
async function pollAcrossChange(
  t: import('ava').ExecutionContext,
  token: string,
  path: string,
  change: () => Promise<void>,
  extra: Record<string, string> = {},
) {
  const first = await get(token, path, extra);
  t.is(first.status, 200, path);
  await first.arrayBuffer();
  const etag = first.headers.get('etag')!;
  t.regex(etag, /^(W\/)?"[A-Za-z0-9_-]{32}"$/, path);
  t.is(first.headers.get('cache-control'), 'private, no-cache', path);
  const unchanged = await get(token, path, { ...extra, 'if-none-match': etag });
  t.is(unchanged.status, 304, `${path}: unchanged`);
  t.is(await unchanged.text(), '');
  t.is(unchanged.headers.get('etag'), etag);
  t.is(unchanged.headers.get('cache-control'), 'private, no-cache');
  await change();
  const changed = await get(token, path, { ...extra, 'if-none-match': etag });
  t.is(changed.status, 200, `${path}: changed`);
  const next = changed.headers.get('etag')!;
  t.not(next.replace(/^W\//, ''), etag.replace(/^W\//, ''), `${path}: a new tag`);
  t.is((await get(token, path, { ...extra, 'if-none-match': next })).status, 304, `${path}: the new tag`);
  return changed;
}

test('the activity list, latest and details: 304 while unchanged, 200 with a new tag after a change', async (t) => {
  const { token, appToken } = await athlete();
  const [a, b] = await uploadRides(token, ['2026-04-01T08:00:00Z', '2026-04-02T08:00:00Z']);
  const changed = await pollAcrossChange(t, appToken, '/api/v1/activities/?limit=10', async () => {
    t.is((await api(service, appToken, 'PUT', `/api/v1/activities/${a}/app-metadata`, { seen: true })).status, 200);
  });
  t.deepEqual(((await changed.json()) as { id: string; app_metadata: unknown }[]).find((x) => x.id === a)!.app_metadata, { seen: true });
  await pollAcrossChange(t, appToken, `/api/v1/activities/${a}`, async () => {
    t.is((await api(service, appToken, 'PUT', `/api/v1/activities/${a}/app-metadata`, { seen: 2 })).status, 200);
  });
  await pollAcrossChange(t, token, `/api/v1/activities/${b}`, async () => {
    t.is((await api(service, token, 'POST', '/api/v1/traces/', { timestamp: '2026-04-02T08:05:00Z', lactate: 2.1 })).status, 201);
  });
  await pollAcrossChange(t, token, '/api/v1/activities/latest', async () => {
    t.is((await api(service, token, 'DELETE', `/api/v1/activities/${b}`)).status, 204);
  });
  // Another application, another query, another user: other tags.
  const [mine, theirs, other] = await Promise.all([
    get(appToken, `/api/v1/activities/${a}`),
    get(token, `/api/v1/activities/${a}`),
    get(appToken, '/api/v1/activities/?limit=9'),
  ]);
  t.not(mine.headers.get('etag'), theirs.headers.get('etag'), 'each application sees its own app metadata');
  t.is((await get(appToken, '/api/v1/activities/?limit=10', { 'if-none-match': other.headers.get('etag')! })).status, 200);
  const stranger = await athlete();
  t.is(
    (await get(stranger.token, `/api/v1/activities/${a}`, { 'if-none-match': mine.headers.get('etag')! })).status,
    404,
    "another user's activity stays a 404",
  );
  // HEAD and `*`.
  t.is(
    (
      await fetch(`${service.url}/api/v1/activities/${a}`, {
        method: 'HEAD',
        headers: { authorization: `Bearer ${appToken}`, 'if-none-match': mine.headers.get('etag')! },
      })
    ).status,
    304,
  );
  t.is((await get(appToken, `/api/v1/activities/${a}`, { 'if-none-match': '*' })).status, 304);
  t.is((await get(appToken, `/api/v1/activities/${b}`, { 'if-none-match': '*' })).status, 404, 'a deleted activity is a 404, not a 304');
});

test('frames and curves: 304 without computing anything, JSON and Parquet tagged apart, a new tag after an upload', async (t) => {
  const { user, token } = await athlete();
  const [a] = (await uploadRides(token, ['2026-05-01T08:00:00Z'])) as [string];
  const data = `/api/v1/activities/${a}/data`;
  const json = await get(token, `${data}?format=json`);
  const parquet = await get(token, data);
  t.is(parquet.headers.get('content-type'), 'application/vnd.apache.parquet');
  t.not(json.headers.get('etag')!.replace(/^W\//, ''), parquet.headers.get('etag'), 'JSON and Parquet are different representations');
  t.is(
    (await get(token, data, { accept: 'application/json' })).headers.get('etag'),
    json.headers.get('etag'),
    'Accept: application/json is the JSON one',
  );
  t.is(
    (await get(token, data, { 'if-none-match': json.headers.get('etag')! })).status,
    200,
    'the JSON tag does not revalidate the Parquet answer',
  );
  t.regex(String(parquet.headers.get('vary')), /Accept/);

  // Nothing left to compute from (no sample file, no cached result): a matching tag is still 304.
  const file = objectFile(service.config.DATA_DIR, sampleKey(user.id, a));
  await rename(file, `${file}.away`);
  const computed = await service.deps.redis.keys(`${service.config.QUEUE_PREFIX}:computed:${user.id}:*`);
  if (computed.length) await service.deps.redis.del(...computed);
  t.is((await get(token, data, { 'if-none-match': parquet.headers.get('etag')! })).status, 304);
  t.is((await get(token, data)).status, 404, 'without the tag the frame is computed: the samples are gone');
  await rename(`${file}.away`, file);

  await pollAcrossChange(t, token, `/api/v1/activities/${a}/mean-max?format=json`, async () => {
    await uploadRides(token, ['2026-05-02T08:00:00Z']);
  });
  await pollAcrossChange(t, token, '/api/v1/activities/longitudinal-mean-max?sport=cycling', async () => {
    await uploadRides(token, ['2026-05-03T08:00:00Z']);
  });
  await pollAcrossChange(t, token, '/api/v1/activities/longitudinal-data?format=json&metrics=power', async () => {
    await uploadRides(token, ['2026-05-04T08:00:00Z']);
  });
});

test('computed answers follow the data version read with the credential, not the read version', async (t) => {
  const { user, token } = await athlete();
  await uploadRides(token, ['2026-05-01T08:00:00Z']);
  const bump = (column: 'data_version' | 'read_version') =>
    service.deps.db
      .updateTable('users')
      .set({ [column]: sql`${sql.ref(column)} + 1` })
      .where('id', '=', user.id)
      .execute();
  for (const path of [
    '/api/v1/activities/longitudinal-mean-max?sport=cycling',
    '/api/v1/activities/longitudinal-data?format=json&metrics=power',
  ]) {
    const first = await get(token, path);
    await first.arrayBuffer();
    const etag = first.headers.get('etag')!;
    await bump('read_version');
    t.is((await get(token, path, { 'if-none-match': etag })).status, 304, `${path}: the read version does not key computed answers`);
    await pollAcrossChange(t, token, path, async () => {
      await bump('data_version');
    });
  }
});

test('traces, sources and dailies carry validators too', async (t) => {
  const { token } = await athlete();
  const [source] = await uploadAndWait(service, token, [{ name: 'ride.csv', bytes: ride('2026-06-01T08:00:00Z') }], { sport: 'cycling' });
  const trace = (await api(service, token, 'POST', '/api/v1/traces/', { timestamp: '2026-06-01T08:05:00Z', lactate: 1.2 })).body
    .id as string;
  await pollAcrossChange(t, token, '/api/v1/traces/', async () => {
    t.is((await api(service, token, 'PUT', `/api/v1/traces/${trace}`, { timestamp: '2026-06-01T08:05:00Z', lactate: 1.9 })).status, 200);
  });
  await pollAcrossChange(t, token, `/api/v1/traces/${trace}`, async () => {
    t.is((await api(service, token, 'PUT', `/api/v1/traces/${trace}`, { timestamp: '2026-06-01T08:05:00Z', lactate: 2.5 })).status, 200);
  });
  await pollAcrossChange(t, token, '/api/v1/sources/', async () => {
    await uploadAndWait(service, token, [{ name: 'other.csv', bytes: ride('2026-06-02T08:00:00Z') }], { sport: 'cycling' });
  });
  const one = await get(token, `/api/v1/sources/${source.id}`);
  t.is((await get(token, `/api/v1/sources/${source.id}`, { 'if-none-match': one.headers.get('etag')! })).status, 304);
  await pollAcrossChange(t, token, '/api/v1/dailies/body_mass?start=2026-06-01&end=2026-06-30', async () => {
    t.is((await api(service, token, 'POST', '/api/v1/dailies/body_mass', { date: '2026-06-10', value: 70.5 })).status, 200);
  });
});

test('token answers stay no-store', async (t) => {
  const res = await fetch(`${service.url}/api/v1/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=refresh_token&refresh_token=nope&client_id=x',
  });
  t.is(res.headers.get('cache-control'), 'no-store');
  t.is(res.headers.get('etag'), null);
});

test('Link: next, prev and first on the activity, trace and source lists, absolute on BASE_URL, keeping the other parameters', async (t) => {
  const { token } = await athlete();
  const ids = await uploadRides(token, ['2026-07-01T08:00:00Z', '2026-07-02T08:00:00Z', '2026-07-03T08:00:00Z']);
  for (const [i, stamp] of ['2026-07-01T08:05:00Z', '2026-07-02T08:05:00Z', '2026-07-03T08:05:00Z'].entries()) {
    t.is((await api(service, token, 'POST', '/api/v1/traces/', { timestamp: stamp, lactate: i + 1 })).status, 201);
  }
  const links = async (path: string) => {
    const res = await get(token, path);
    t.is(res.status, 200, path);
    const rels: Record<string, string> = {};
    for (const part of (res.headers.get('link') ?? '').split(/,\s*(?=<)/).filter(Boolean)) {
      const m = /^<([^>]+)>;\s*rel="(\w+)"$/.exec(part);
      if (!m) throw new Error(`unparsable Link part ${part}`);
      rels[m[2]!] = m[1]!;
    }
    return { rels, body: (await res.json()) as { id: string }[] };
  };
  const base = service.config.BASE_URL;
  const first = await links('/api/v1/activities/?sport=cycling&limit=2&tags=a&tags=b');
  t.deepEqual(
    first.body.map((a) => a.id),
    [],
    'no activity has those tags',
  );
  t.deepEqual(Object.keys(first.rels), ['first'], 'an empty first page has neither next nor prev');

  const page1 = await links('/api/v1/activities/?sport=cycling&limit=2');
  t.deepEqual(
    page1.body.map((a) => a.id),
    [ids[2], ids[1]],
  );
  t.is(page1.rels.first, `${base}/api/v1/activities/?sport=cycling&limit=2&offset=0`);
  t.is(page1.rels.next, `${base}/api/v1/activities/?sport=cycling&limit=2&offset=2`);
  t.is(page1.rels.prev, undefined, 'no prev on the first page');
  const page2 = await links(page1.rels.next!.slice(base.length));
  t.deepEqual(
    page2.body.map((a) => a.id),
    [ids[0]],
  );
  t.is(page2.rels.next, undefined, 'no next on the last page');
  t.is(page2.rels.prev, `${base}/api/v1/activities/?sport=cycling&limit=2&offset=0`);
  const exact = await links('/api/v1/activities?limit=3');
  t.is(exact.body.length, 3);
  t.is(exact.rels.next, undefined, 'a last page that is exactly full has no next');
  t.is(exact.rels.first, `${base}/api/v1/activities?limit=3&offset=0`, 'the path as asked');
  const middle = await links('/api/v1/activities/?limit=1&offset=1');
  t.is(middle.rels.prev, `${base}/api/v1/activities/?limit=1&offset=0`);
  t.is(middle.rels.next, `${base}/api/v1/activities/?limit=1&offset=2`);

  const traces = await links('/api/v1/traces/?limit=2&start=2026-07-01');
  t.is(traces.body.length, 2);
  t.is(traces.rels.next, `${base}/api/v1/traces/?limit=2&start=2026-07-01&offset=2`);
  const lastTraces = await links(traces.rels.next!.slice(base.length));
  t.is(lastTraces.body.length, 1);
  t.is(lastTraces.rels.next, undefined);

  const sources = await links('/api/v1/sources/?limit=2&offset=1');
  t.is(sources.body.length, 2);
  t.is(sources.rels.prev, `${base}/api/v1/sources/?limit=2&offset=0`);
  t.is(sources.rels.next, undefined);
});
