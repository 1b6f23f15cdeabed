import test from 'ava';
import type { User } from '../db/database.ts';
import { createTrace } from '../db/traces.ts';
import { upsertDaily } from '../db/dailies.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { signedInClient, WebClient } from './helpers/http.ts';
import { createTestApplication, createTestUser, tokenFor } from './helpers/users.ts';
import { api, uploadAndWait } from './helpers/activities.ts';

let service: TestService;
test.before(async () => {
  service = await startTestService({ workers: true });
});
test.after.always(() => service?.close());

/** A new user signed in on a web client, with an API token for writing traces and dailies. */
async function athlete() {
  const user = await createTestUser(service);
  const token = await tokenFor(service, user, ['data:read', 'data:write']);
  const web = await signedInClient(service.url, user.email);
  return { user, token, web };
}

const LAB_TRACE = {
  timestamp: '2026-05-18T17:32:00+02:00',
  lactate: 2.1,
  power: 250,
  sport: 'cycling.road',
  tags: ['lab'],
  notes: '<script>x</script>',
};

async function postTrace(token: string, body: Record<string, unknown>): Promise<string> {
  const res = await api(service, token, 'POST', '/api/v1/traces/', body);
  if (res.status !== 201) throw new Error(`POST trace: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id;
}

async function postDaily(token: string, measure: string, date: string, value: number) {
  const res = await api(service, token, 'POST', `/api/v1/dailies/${measure}`, { date, value });
  if (res.status !== 200) throw new Error(`POST daily: ${res.status} ${JSON.stringify(res.body)}`);
}

const body = async (web: WebClient, path = '/data') => {
  const res = await web.get(path);
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status}`);
  return res.text();
};
const traceIdsOn = (page: string) => [...page.matchAll(/<tr data-trace-id="([0-9a-f-]{36})">/g)].map((m) => m[1]!);
const dailiesOn = (page: string) =>
  [...page.matchAll(/<tr data-measure="([a-z_]+)" data-date="(\d{4}-\d\d-\d\d)">/g)].map((m) => `${m[1]}/${m[2]}`);
/** The <tr> of one trace. */
const traceRowOf = (page: string, id: string) => new RegExp(`<tr data-trace-id="${id}">[\\s\\S]*?</tr>`).exec(page)?.[0] ?? '';
const storedTraces = (user: User) => service.deps.db.selectFrom('traces').select('id').where('user_id', '=', user.id).execute();
const storedDailies = (user: User) =>
  service.deps.db.selectFrom('dailies').select(['measure', 'day']).where('user_id', '=', user.id).execute();

test('signed out, the page and its delete forms send you to sign in, deleting nothing', async (t) => {
  const owner = await athlete();
  const id = await postTrace(owner.token, LAB_TRACE);
  await postDaily(owner.token, 'body_mass', '2026-05-18', 72.4);
  const anon = new WebClient(service.url);
  for (const path of ['/data', '/data?traces_page=2']) {
    const res = await anon.get(path);
    t.is(res.status, 303, path);
    t.is(res.headers.get('location'), `/signin?next=${encodeURIComponent(path)}`);
  }
  for (const path of [`/data/traces/${id}/delete`, '/data/dailies/body_mass/2026-05-18/delete']) {
    const res = await anon.postForm(path, {});
    t.is(res.status, 303, path);
    t.is(res.headers.get('location'), `/signin?next=${encodeURIComponent('/data')}`);
  }
  t.is((await storedTraces(owner.user)).length, 1);
  t.is((await storedDailies(owner.user)).length, 1);
});

test('empty, the page says how applications write traces and dailies; the nav links to it', async (t) => {
  const { web } = await athlete();
  const page = await body(web);
  t.regex(page, /<title>Traces and daily measures · /);
  t.regex(
    page,
    /<header class="site">[\s\S]*<a href="\/activities">Activities<\/a>[\s\S]*<a href="\/data">Traces and dailies<\/a>[\s\S]*<\/header>/,
  );
  t.regex(page, /<p id="no-traces">No traces yet\.[\s\S]*<code>POST \/api\/v1\/traces\/<\/code>/);
  t.regex(page, /<p id="no-dailies">No daily measures yet\.[\s\S]*<code>POST \/api\/v1\/dailies\/\{measure\}<\/code>/);
  t.notRegex(page, /id="traces-table"|id="dailies-table"|class="pager"/);
});

test("the page lists the user's traces and dailies with local times, units, escaped text and each application's metadata; not another user's", async (t) => {
  const { user, token, web } = await athlete();
  const lab = await postTrace(token, LAB_TRACE);
  const stepTest = await api(service, token, 'POST', '/api/v1/tests/', { sport: 'running', start: '2026-05-19T06:00:00-04:30' });
  const later = await postTrace(token, {
    timestamp: '2026-05-19T06:05:30.250-04:30',
    heart_rate: 141,
    speed: 3.5,
    vo2: 41.5,
    rpe: 6,
    test_id: stepTest.body.id,
  });
  await postDaily(token, 'body_mass', '2026-05-18', 72.4);
  await postDaily(token, 'resting_hr', '2026-05-19', 48);
  const app = await createTestApplication(service, user, { name: 'Lab <Notebook> & Co' });
  const other = await createTestApplication(service, user, { name: 'Another app' });
  const appToken = await tokenFor(service, user, ['data:read', 'data:write'], app.id);
  const otherToken = await tokenFor(service, user, ['data:read', 'data:write'], other.id);
  // Keys in jsonb's own order (shorter first, then bytewise), so the stored object reads back the same.
  t.is((await api(service, appToken, 'PUT', `/api/v1/traces/${lab}/app-metadata`, { note: '<b>"bold"</b>', step: 4 })).status, 200);
  t.is((await api(service, otherToken, 'PUT', `/api/v1/traces/${lab}/app-metadata`, { synced: true })).status, 200);

  const stranger = await athlete();
  const foreign = await postTrace(stranger.token, { timestamp: '2026-05-18T17:33:00+02:00', lactate: 9.87, notes: 'foreign note' });
  await postDaily(stranger.token, 'hrv', '2026-05-18', 77);

  const page = await body(web);
  t.deepEqual(traceIdsOn(page), [later, lab], 'newest first');
  t.false(page.includes(foreign));
  t.false(page.includes('foreign note'));
  t.false(page.includes('9.87'));

  const labRow = traceRowOf(page, lab);
  t.regex(
    labRow,
    /<time datetime="2026-05-18T15:32:00Z">2026-05-18 17:32:00<\/time> <span class="muted">UTC\+02:00<\/span>/,
    'local time on the trace’s own offset',
  );
  t.regex(labRow, /<span data-sport="cycling\.road">Cycling › road<\/span>/);
  t.regex(labRow, /<span data-value="lactate">Lactate 2\.1 mmol\/L<\/span>/);
  t.regex(labRow, /<span data-value="power">Power 250 W<\/span>/);
  t.notRegex(labRow, /data-value="(speed|heart_rate|vo2|rpe)"/, 'null values are left out');
  t.regex(labRow, /<span class="trace-note">&lt;script&gt;x&lt;\/script&gt;<\/span>/);
  t.false(page.includes('<script>x</script>'), 'notes are escaped');
  t.regex(labRow, /Tags: <code>lab<\/code>/);
  t.regex(
    labRow,
    new RegExp(
      `<span class="app-metadata" data-application-id="${other.id}"><strong class="app-name">Another app</strong>: <code>\\{&quot;synced&quot;:true\\}</code></span>`,
    ),
  );
  t.regex(
    labRow,
    new RegExp(
      `<span class="app-metadata" data-application-id="${app.id}"><strong class="app-name">Lab &lt;Notebook&gt; &amp; Co</strong>: <code>\\{&quot;note&quot;:&quot;&lt;b&gt;\\\\&quot;bold\\\\&quot;&lt;/b&gt;&quot;,&quot;step&quot;:4\\}</code></span>`,
    ),
    'the application name and its compact JSON, escaped',
  );
  t.true(labRow.indexOf('Another app') < labRow.indexOf('Lab &lt;Notebook'), 'applications by name');
  t.false(page.includes('<b>'));
  t.regex(labRow, /<td class="trace-activity"><span class="muted">—<\/span><\/td>/, 'no activity contains it');
  t.regex(labRow, new RegExp(`<form method="post" action="/data/traces/${lab}/delete" class="inline">`));

  const laterRow = traceRowOf(page, later);
  t.regex(laterRow, /<time datetime="2026-05-19T10:35:30\.250Z">2026-05-19 06:05:30<\/time> <span class="muted">UTC−04:30<\/span>/);
  t.regex(laterRow, /<td class="trace-sport"><span class="muted">—<\/span><\/td>/);
  t.regex(
    laterRow,
    /Speed 12\.6 km\/h<\/span><br><span data-value="heart_rate">Heart rate 141 bpm<\/span><br><span data-value="vo2">VO₂ 41\.5 mL\/min\/kg<\/span><br><span data-value="rpe">RPE 6<\/span>/,
  );
  t.true(
    laterRow.includes(
      `<span class="trace-test" data-match="explicit">Test <a href="/tests/${stepTest.body.id}">Running test, 2026-05-19 06:00</a></span>`,
    ),
    'the trace links its test, named by its sport and local start',
  );
  t.regex(laterRow, /<td class="trace-apps"><span class="muted">—<\/span><\/td>/);

  t.deepEqual(dailiesOn(page), ['resting_hr/2026-05-19', 'body_mass/2026-05-18'], 'newest first, not the other user’s');
  t.regex(
    page,
    /<tr data-measure="body_mass" data-date="2026-05-18">\s*<td>2026-05-18<\/td>\s*<td><code>body_mass<\/code><\/td>\s*<td class="daily-value">72\.4 kg<\/td>\s*<td><code>manual<\/code><\/td>/,
  );
  t.regex(page, /<tr data-measure="resting_hr" data-date="2026-05-19">[\s\S]*?<td class="daily-value">48 bpm<\/td>/);
  t.regex(page, /<form method="post" action="\/data\/dailies\/body_mass\/2026-05-18\/delete" class="inline">/);
  t.notRegex(page, /id="no-traces"|id="no-dailies"|class="pager"/);
});

test('a trace within an uploaded activity links to that activity', async (t) => {
  const { token, web } = await athlete();
  // A five-minute ride at UTC+02:00 around the lab trace's 17:32.
  const rows = Array.from(
    { length: 301 },
    (_, i) => `${new Date(Date.UTC(2026, 4, 18, 15, 30, i)).toISOString().replace('.000Z', 'Z')},${200 + (i % 10)}`,
  );
  const [source] = await uploadAndWait(
    service,
    token,
    [{ name: 'ride.csv', bytes: new TextEncoder().encode(`timestamp,power\n${rows.join('\n')}\n`) }],
    { sport: 'cycling' },
  );
  t.is(source.status, 'processed', JSON.stringify(source.error));
  const activityId = source.activity_ids[0];
  t.truthy(activityId);
  const inside = await postTrace(token, LAB_TRACE);
  const outside = await postTrace(token, { ...LAB_TRACE, timestamp: '2026-05-18T18:00:00+02:00' });

  const page = await body(web);
  t.regex(
    traceRowOf(page, inside),
    new RegExp(`<td class="trace-activity"><a href="/activities/${activityId}">Cycling, 2026-05-18 \\d\\d:30</a></td>`),
  );
  t.regex(traceRowOf(page, outside), /<td class="trace-activity"><span class="muted">—<\/span><\/td>/);
  t.is((await web.get(`/activities/${activityId}`)).status, 200, 'the link leads to the activity');
});

test('traces page by 50 and dailies by 60, each keeping the other list’s page', async (t) => {
  const { user, web } = await athlete();
  const now = new Date();
  const base = Date.UTC(2025, 0, 1, 8);
  for (let i = 0; i < 51; i++) {
    await createTrace(
      service.deps.db,
      user.id,
      {
        time: new Date(base + i * 3_600_000),
        utc_offset_seconds: 3600,
        test_id: null,
        lactate: i,
        rpe: null,
        notes: null,
        power: null,
        speed: null,
        heart_rate: null,
        vo2: null,
        tags: [],
        sport: null,
      },
      now,
    );
  }
  for (let i = 0; i < 61; i++) {
    await upsertDaily(
      service.deps.db,
      {
        user_id: user.id,
        measure: 'body_mass',
        day: new Date(base + i * 86_400_000).toISOString().slice(0, 10),
        value: 70 + i / 10,
        source: 'manual',
      },
      now,
    );
  }

  const first = await body(web);
  const firstTraces = traceIdsOn(first);
  t.is(firstTraces.length, 50);
  t.is(dailiesOn(first).length, 60);
  t.regex(first, /<a href="\/data\?traces_page=2#traces" rel="next" id="traces-older">/);
  t.regex(first, /<a href="\/data\?dailies_page=2#dailies" rel="next" id="dailies-older">/);
  t.notRegex(first, /id="traces-newer"|id="dailies-newer"/);
  t.true(first.includes('2025-03-02'), 'the newest daily first');
  t.false(first.includes('<td>2025-01-01</td>'), 'the oldest daily on page 2');

  const second = await body(web, '/data?traces_page=2');
  const secondTraces = traceIdsOn(second);
  t.is(secondTraces.length, 1);
  t.false(firstTraces.includes(secondTraces[0]!));
  t.regex(traceRowOf(second, secondTraces[0]!), /Lactate 0 mmol\/L/, 'the oldest trace last');
  t.regex(second, /<a href="\/data#traces" rel="prev" id="traces-newer">/);
  t.notRegex(second, /id="traces-older"/);
  t.is(dailiesOn(second).length, 60, 'dailies stay on their first page');
  t.regex(
    second,
    /<a href="\/data\?traces_page=2&amp;dailies_page=2#dailies" rel="next" id="dailies-older">/,
    'the dailies pager keeps the traces page',
  );

  const both = await body(web, '/data?traces_page=2&dailies_page=2');
  t.deepEqual(dailiesOn(both), ['body_mass/2025-01-01']);
  t.regex(both, /<a href="\/data\?traces_page=2#dailies" rel="prev" id="dailies-newer">/);
  t.regex(both, /<a href="\/data\?dailies_page=2#traces" rel="prev" id="traces-newer">/);

  const beyond = await body(web, '/data?traces_page=3&dailies_page=3');
  t.regex(beyond, /<p id="no-traces">No traces on this page\. <a href="\/data\?dailies_page=3#traces">Back to the newest<\/a>/);
  t.regex(beyond, /<p id="no-dailies">No daily measures on this page\./);

  const nonsense = await body(web, '/data?traces_page=nonsense&dailies_page=-1');
  t.deepEqual(traceIdsOn(nonsense), firstTraces);
});

test('the delete buttons remove a trace and a daily value and come back with a notice', async (t) => {
  const { user, token, web } = await athlete();
  const gone = await postTrace(token, LAB_TRACE);
  const kept = await postTrace(token, { ...LAB_TRACE, timestamp: '2026-05-18T17:40:00+02:00', lactate: 3.3 });
  const app = await createTestApplication(service, user, { name: 'Lab app' });
  const appToken = await tokenFor(service, user, ['data:write'], app.id);
  t.is((await api(service, appToken, 'PUT', `/api/v1/traces/${gone}/app-metadata`, { step: 1 })).status, 200);
  await postDaily(token, 'body_mass', '2026-05-18', 72.4);
  await postDaily(token, 'body_mass', '2026-05-19', 72.1);

  // The buttons' forms carry the pages they were shown on.
  const page = await body(web);
  t.regex(
    page,
    /<input type="hidden" name="traces_page" value="1"><input type="hidden" name="dailies_page" value="1">\s*<button type="submit" class="danger small" id="delete-trace-[0-9a-f-]+" aria-label="Delete the trace of 2026-05-18 17:32:00">Delete<\/button>/,
  );

  const res = await web.postForm(`/data/traces/${gone}/delete`, { traces_page: '1', dailies_page: '1' });
  t.is(res.status, 303);
  t.is(res.headers.get('location'), '/data?trace_deleted=1#traces');
  const after = await body(web, '/data?trace_deleted=1');
  t.regex(after, /<p class="notice" role="status">Trace deleted\.<\/p>/);
  t.deepEqual(traceIdsOn(after), [kept]);
  t.is((await api(service, token, 'GET', `/api/v1/traces/${gone}`)).status, 404);
  t.is(
    (await service.deps.db.selectFrom('trace_app_metadata').select('trace_id').where('trace_id', '=', gone).execute()).length,
    0,
    'its app metadata went with it',
  );
  t.is((await web.postForm(`/data/traces/${gone}/delete`, {})).status, 404, 'deleting twice');

  const daily = await web.postForm('/data/dailies/body_mass/2026-05-18/delete', { traces_page: '2', dailies_page: 'x' });
  t.is(daily.status, 303);
  t.is(daily.headers.get('location'), '/data?traces_page=2&daily_deleted=1#dailies', 'back to the pages posted from');
  const afterDaily = await body(web, '/data?daily_deleted=1');
  t.regex(afterDaily, /<p class="notice" role="status">Daily value deleted\.<\/p>/);
  t.deepEqual(dailiesOn(afterDaily), ['body_mass/2026-05-19']);
  t.deepEqual(await storedDailies(user), [{ measure: 'body_mass', day: '2026-05-19' }]);
  t.is((await web.postForm('/data/dailies/body_mass/2026-05-18/delete', {})).status, 404, 'deleting twice');
});

test("delete is refused from another origin, for another user's trace or daily, and for malformed ids; nothing is deleted", async (t) => {
  const owner = await athlete();
  const id = await postTrace(owner.token, LAB_TRACE);
  await postDaily(owner.token, 'body_mass', '2026-05-18', 72.4);
  const dailyPath = '/data/dailies/body_mass/2026-05-18/delete';

  for (const path of [`/data/traces/${id}/delete`, dailyPath]) {
    t.is((await owner.web.postForm(path, {}, { origin: 'https://evil.example' })).status, 403, `${path} foreign origin`);
    t.is((await owner.web.postForm(path, {}, { origin: null })).status, 403, `${path} no origin`);
  }

  const other = await athlete();
  for (const path of [`/data/traces/${id}/delete`, dailyPath]) {
    const res = await other.web.postForm(path, {});
    t.is(res.status, 404, path);
    t.regex(await res.text(), /(Trace|Daily value) not found\./);
  }
  for (const path of [
    '/data/traces/not-an-id/delete',
    `/data/traces/${crypto.randomUUID()}/delete`,
    '/data/dailies/weight/2026-05-18/delete',
    '/data/dailies/body_mass/2026-02-30/delete',
    '/data/dailies/body_mass/0000-01-01/delete',
    '/data/dailies/body_mass/18.05.2026/delete',
    '/data/dailies/toString/2026-05-18/delete',
  ]) {
    t.is((await owner.web.postForm(path, {})).status, 404, path);
  }

  t.deepEqual(await storedTraces(owner.user), [{ id }]);
  t.deepEqual(await storedDailies(owner.user), [{ measure: 'body_mass', day: '2026-05-18' }]);
  const page = await body(owner.web);
  t.deepEqual(traceIdsOn(page), [id]);
  t.deepEqual(dailiesOn(page), ['body_mass/2026-05-18']);
});
