import test from 'ava';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import type { User } from '../db/database.ts';
import { activityId, storeActivities } from '../db/activities.ts';
import { insertSource } from '../db/sources.ts';
import { sampleKey, sourceKey } from '../lib/object-store.ts';
import { objectFile } from '../lib/object-store-local.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { signedInClient, WebClient } from './helpers/http.ts';
import { createTestUser, tokenFor } from './helpers/users.ts';
import { api, uploadAndWait } from './helpers/activities.ts';
import { fixturesDir } from './helpers/fixtures.ts';

let service: TestService;
test.before(async () => {
  service = await startTestService({ workers: true });
});
test.after.always(() => service?.close());

const FIT_A = '2016-05-23_18-14-30_4_25.fit';
const FIT_B = '2020-06-01-16-52-40.fit';
const fit = (name: string) => ({ name, bytes: new Uint8Array(readFileSync(`${fixturesDir()}/fit/${name}`)) });

/** A new user signed in on a web client, with an API token for uploading. */
async function athlete() {
  const user = await createTestUser(service);
  const token = await tokenFor(service, user, ['data:read', 'data:write']);
  const web = await signedInClient(service.url, user.email);
  return { user, token, web };
}

/** Upload fixture files; the activities they produced, with their sources. */
async function uploaded(token: string, names: string[]) {
  const sources = await uploadAndWait(service, token, names.map(fit));
  for (const s of sources) if (s.status !== 'processed') throw new Error(`${s.filename}: ${JSON.stringify(s.error)}`);
  return sources.map((s: { id: string; activity_ids: string[] }) => ({ sourceId: s.id, activityIds: s.activity_ids }));
}

const activityIdsOn = (page: string) => [...page.matchAll(/<tr data-activity-id="([0-9a-f-]{36})">/g)].map((m) => m[1]!);

test('signed out, the activity pages send you to sign in', async (t) => {
  const anon = new WebClient(service.url);
  for (const path of ['/activities', `/activities/${activityId(crypto.randomUUID(), 0)}`]) {
    const res = await anon.get(path);
    t.is(res.status, 303, path);
    t.is(res.headers.get('location'), `/signin?next=${encodeURIComponent(path)}`);
  }
  const post = await anon.postForm(`/activities/${crypto.randomUUID()}/delete`, { confirm: 'yes' });
  t.is(post.status, 303);
  t.regex(post.headers.get('location')!, /^\/signin\?next=/);
});

test('the list shows the uploaded activities newest first, each linking to its page; the nav links to it', async (t) => {
  const { token, web } = await athlete();
  const empty = await (await web.get('/activities')).text();
  t.regex(empty, /id="no-activities"/);
  t.regex(empty, /<a href="\/activities">Activities<\/a>/, 'signed-in nav links to the list');

  const [a, b] = await uploaded(token, [FIT_A, FIT_B]);
  const ids = [...a!.activityIds, ...b!.activityIds];
  t.true(ids.length >= 2);
  const res = await web.get('/activities');
  t.is(res.status, 200);
  const body = await res.text();
  t.notRegex(body, /id="no-activities"/);
  const listed = activityIdsOn(body);
  t.deepEqual([...listed].sort(), [...ids].sort());
  for (const id of ids)
    t.regex(body, new RegExp(`<a href="/activities/${id}"><time datetime="[^"]+Z">\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}</time></a>`));

  // Newest first, the same order as the API's list.
  const apiList = await api(service, token, 'GET', '/api/v1/activities/');
  t.is(apiList.status, 200);
  const apiIds = (apiList.body as { id: string }[]).map((x) => x.id);
  t.deepEqual(listed, apiIds);
  t.regex(body, /<th>Start<\/th><th>Name<\/th><th>Sport<\/th><th>Duration<\/th><th>Distance<\/th><th>Metrics<\/th>/);
  t.regex(body, /\d+\.\d\d km/, 'a distance in km');
});

test('the list pages by 50, with older and newer links', async (t) => {
  const { user, web } = await athlete();
  await seedActivities(user, 51);
  const first = await (await web.get('/activities')).text();
  const firstIds = activityIdsOn(first);
  t.is(firstIds.length, 50);
  t.regex(first, /<a href="\/activities\?page=2" rel="next" id="older">/);
  t.notRegex(first, /id="newer"/);
  const second = await (await web.get('/activities?page=2')).text();
  const secondIds = activityIdsOn(second);
  t.is(secondIds.length, 1);
  t.false(firstIds.includes(secondIds[0]!));
  t.regex(second, /<a href="\/activities" rel="prev" id="newer">/);
  t.notRegex(second, /id="older"/);
  // The oldest activity is the last one.
  t.is(
    secondIds[0],
    activityId(
      (await service.deps.db.selectFrom('activities').select('source_id').where('user_id', '=', user.id).executeTakeFirstOrThrow())
        .source_id,
      0,
    ),
  );
  const bad = await web.get('/activities?page=nonsense');
  t.is(bad.status, 200);
  t.deepEqual(activityIdsOn(await bad.text()), firstIds);
});

/** `n` one-minute activities a day apart (session 0 the oldest), straight into the database. */
async function seedActivities(user: User, n: number) {
  const { source } = await insertSource(service.deps.db, {
    user_id: user.id,
    type: 'fit',
    origin: 'manual_upload',
    filename: 'seed.fit',
    content_sha256: randomBytes(32).toString('hex'),
    size_bytes: 1,
    sport: null,
  });
  const base = Date.UTC(2024, 0, 1, 8);
  await storeActivities(
    service.deps.db,
    source,
    Array.from({ length: n }, (_, i) => ({
      id: activityId(source.id, i),
      session_index: i,
      sport: 'running',
      start_time: new Date(base + i * 86_400_000),
      end_time: new Date(base + i * 86_400_000 + 60_000),
      utc_offset_seconds: 3600,
      metrics: ['heart_rate'],
      summary: { heart_rate: { mean: 140, max: 150, min: 120, start: 120, end: 150 } },
      laps: null,
      distance: null,
      devices: [],
      samples: 60,
      implausible_samples: {},
      curves: [],
    })),
    new Date(),
  );
}

test('the details page shows the activity, its summary and laps, and downloads the original file with the session cookie', async (t) => {
  const { token, web } = await athlete();
  const [a] = await uploaded(token, [FIT_B]);
  const id = a!.activityIds[0]!;
  const details = (await api(service, token, 'GET', `/api/v1/activities/${id}`)).body;
  const res = await web.get(`/activities/${id}`);
  t.is(res.status, 200);
  const body = await res.text();
  t.regex(body, new RegExp(`<dd id="activity-sport"><code>${details.sport.replace(/[.+]/g, '\\$&')}</code></dd>`));
  t.true(body.includes(`datetime="${details.start}"`), 'start instant');
  t.true(body.includes(details.start_local.replace('T', ' ').slice(0, 19)), 'local start');
  t.true(body.includes(details.end_local.replace('T', ' ').slice(0, 19)), 'local end');
  t.regex(body, /<dd id="activity-duration">\d+:\d\d(:\d\d)?<\/dd>/);
  for (const device of details.devices) t.true(body.includes(device), `device ${device}`);
  if (details.distance !== null) t.regex(body, new RegExp(`<dd id="activity-distance">${(details.distance / 1000).toFixed(2)} km</dd>`));
  if (details.summary && Object.keys(details.summary).length) t.regex(body, /<table class="wide" id="summary">/);
  if (details.laps?.length) {
    t.regex(body, /<table class="wide" id="laps">/);
    t.is([...body.matchAll(/<tr data-lap="\d+">/g)].length, details.laps.length);
  }
  t.regex(body, /<form method="post" action="\/activities\/[0-9a-f-]+\/delete" class="stack" id="delete-form">/);
  t.regex(body, /<input type="checkbox" id="confirm" name="confirm" value="yes" required>/);

  const link = new RegExp(`<a href="(/api/v1/activities/${id}/download)" id="download" download>Download original file</a>`).exec(body);
  t.truthy(link);
  const download = await web.get(link![1]!);
  t.is(download.status, 200);
  t.regex(download.headers.get('content-disposition') ?? '', /attachment/);
  t.deepEqual(new Uint8Array(await download.arrayBuffer()), fit(FIT_B).bytes);
});

test("another user's activity and malformed ids are the 404 page", async (t) => {
  const owner = await athlete();
  const [a] = await uploaded(owner.token, [FIT_A]);
  const id = a!.activityIds[0]!;
  const other = await athlete();
  for (const path of [`/activities/${id}`, '/activities/not-an-id', `/activities/${crypto.randomUUID()}`]) {
    const res = await other.web.get(path, { accept: 'text/html' });
    t.is(res.status, 404, path);
    t.regex(await res.text(), /Activity not found/);
  }
  const del = await other.web.postForm(`/activities/${id}/delete`, { confirm: 'yes' });
  t.is(del.status, 404);
  t.is((await other.web.postForm('/activities/not-an-id/delete', { confirm: 'yes' })).status, 404, 'malformed id');
  t.is((await api(service, owner.token, 'GET', `/api/v1/activities/${id}`)).status, 200, 'still there');
  t.is((await other.web.get(`/api/v1/activities/${id}/download`)).status, 404, "the download of another user's activity");
});

test('delete is refused from another origin or without confirming', async (t) => {
  const { token, web } = await athlete();
  const [a] = await uploaded(token, [FIT_A]);
  const id = a!.activityIds[0]!;
  const foreign = await web.postForm(`/activities/${id}/delete`, { confirm: 'yes' }, { origin: 'https://evil.example' });
  t.is(foreign.status, 403);
  const none = await web.postForm(`/activities/${id}/delete`, { confirm: 'yes' }, { origin: null });
  t.is(none.status, 403);
  const unconfirmed = await web.postForm(`/activities/${id}/delete`, {});
  t.is(unconfirmed.status, 422);
  const page = await unconfirmed.text();
  t.regex(page, /id="confirm-error"/);
  t.regex(page, /aria-invalid="true"/);
  t.is((await api(service, token, 'GET', `/api/v1/activities/${id}`)).status, 200, 'still there');
});

test('delete removes the activity, its sample file and its original file, and says so', async (t) => {
  const { user, token, web } = await athlete();
  const [a, b] = await uploaded(token, [FIT_A, FIT_B]);
  t.is(a!.activityIds.length, 1, 'a single-activity file');
  const id = a!.activityIds[0]!;
  const keep = b!.activityIds[0]!;
  const { DATA_DIR } = service.config;
  const samples = objectFile(DATA_DIR, sampleKey(user.id, id));
  const original = objectFile(DATA_DIR, sourceKey(user.id, a!.sourceId, 'fit'));
  t.true(existsSync(samples), samples);
  t.true(existsSync(original), original);
  t.true(samples.endsWith(`/users/${user.id}/activities/${id}.parquet`));
  t.true(original.endsWith(`/users/${user.id}/sources/${a!.sourceId}.fit`));

  const res = await web.postForm(`/activities/${id}/delete`, { confirm: 'yes' });
  t.is(res.status, 303);
  t.is(res.headers.get('location'), '/activities?deleted=1');
  const list = await (await web.get(res.headers.get('location')!)).text();
  t.regex(list, /<p class="notice" role="status">Activity deleted\.<\/p>/);
  t.deepEqual(activityIdsOn(list), [keep]);

  t.is((await api(service, token, 'GET', `/api/v1/activities/${id}`)).status, 404);
  t.is((await api(service, token, 'GET', `/api/v1/sources/${a!.sourceId}`)).status, 404, 'its source went with its last activity');
  t.false(existsSync(samples), 'sample file removed');
  t.false(existsSync(original), 'original file removed');
  t.true(existsSync(objectFile(DATA_DIR, sampleKey(user.id, keep))), "the other activity's samples stay");
  t.is((await web.get(`/activities/${id}`)).status, 404);
  t.is((await web.postForm(`/activities/${id}/delete`, { confirm: 'yes' })).status, 404, 'deleting twice');
});
