import test from 'ava';
import type { User } from '../db/database.ts';
import { parseStepTable } from '../api/web/step-table.ts';
import { createTestWithTraces } from '../db/tests.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { signedInClient, WebClient } from './helpers/http.ts';
import { createTestUser, tokenFor } from './helpers/users.ts';
import { readFileSync } from 'node:fs';
import { api, uploadAndWait } from './helpers/activities.ts';
import { fixturesDir } from './helpers/fixtures.ts';

let service: TestService;
test.before(async () => {
  service = await startTestService({ workers: true });
});
test.after.always(() => service?.close());

async function athlete() {
  const user = await createTestUser(service);
  const token = await tokenFor(service, user, ['data:read', 'data:write']);
  const web = await signedInClient(service.url, user.email);
  return { user, token, web };
}

const storedTests = (user: User) => service.deps.db.selectFrom('tests').selectAll().where('user_id', '=', user.id).execute();
const storedTraces = (user: User) =>
  service.deps.db.selectFrom('traces').selectAll().where('user_id', '=', user.id).orderBy('time').execute();

/** A step table as a spreadsheet copies it: tabs, a header row. */
const TABLE = [
  'Step\tPower (W)\tDuration\tLactate\tHR',
  '0\t0\t0\t1.1\t78',
  '1\t100\t4:00\t1.2\t118',
  '2\t150\t4\t1.5\t134',
  '3\t200\t3:30\t2,4\t151',
  '4\t250\t4:00\t4.8',
].join('\n');

const FORM = {
  title: 'Ramp <lab>',
  sport: 'cycling',
  start: '2026-05-18T09:00',
  utc_offset_minutes: '120',
  tags: 'lab, spring',
  steps: TABLE,
};

test('the step table: separators, decimal commas, m:ss and minutes, speeds and paces in the user’s units, bad cells named', (t) => {
  const cycling = parseStepTable(TABLE, 'cycling', 'metric');
  if (!('steps' in cycling)) return t.fail(JSON.stringify(cycling));
  t.deepEqual(
    cycling.steps.map((s) => [s.intensity, s.durationSeconds, s.lactate, s.heartRate]),
    [
      [0, 0, 1.1, 78],
      [100, 240, 1.2, 118],
      [150, 240, 1.5, 134],
      [200, 210, 2.4, 151],
      [250, 240, 4.8, null],
    ],
  );
  const kmh = parseStepTable('1,10.8,3,1.2\n2;12,6;3;2,0;150', 'rowing', 'metric');
  if (!('steps' in kmh)) return t.fail(JSON.stringify(kmh));
  t.deepEqual(
    kmh.steps.map((s) => [s.metric, Math.round(s.intensity * 1000) / 1000]),
    [
      ['speed', 3],
      ['speed', 3.5],
    ],
  );
  const pace = parseStepTable('1\t5:00\t3:00\t1.5', 'running', 'metric');
  t.deepEqual('steps' in pace && Math.round(pace.steps[0]!.intensity * 1000) / 1000, Math.round((1000 / 300) * 1000) / 1000, '5:00 /km');
  const mile = parseStepTable('1\t8:00\t3:00\t1.5', 'running', 'imperial');
  t.deepEqual(
    'steps' in mile && Math.round(mile.steps[0]!.intensity * 1000) / 1000,
    Math.round((1609.344 / 480) * 1000) / 1000,
    '8:00 /mi',
  );
  t.deepEqual(parseStepTable('Step,W,min,La\n1,100,3,1.2\n2,150,3,abc', 'cycling', 'metric'), {
    error: { row: 3, column: 4, columnName: 'lactate', message: '“abc” is not a lactate in mmol/L' },
  });
  t.like(parseStepTable('1,100,3', 'cycling', 'metric'), { error: { row: 1, column: 4 } });
  t.like(parseStepTable('1,100,3,1.2,400', 'cycling', 'metric'), { error: { row: 1, column: 5, columnName: 'heart rate' } });
  t.like(parseStepTable('1,100,x,1.2', 'cycling', 'metric'), { error: { column: 3, columnName: 'duration' } });
  t.like(parseStepTable('', 'cycling', 'metric'), { error: { row: 1 } });
  // Power and heart rate are whole numbers, as the API's traces take them (the database column is an integer).
  t.like(parseStepTable('1;212,5;3;1.2', 'cycling', 'metric'), { error: { row: 1, column: 2, columnName: 'intensity' } });
  t.like(parseStepTable('1,200,3,1.2,150.5', 'cycling', 'metric'), { error: { row: 1, column: 5, columnName: 'heart rate' } });
  const rows = (n: number) => Array.from({ length: n }, (_, i) => `${i + 1},${100 + i},3,1.2`).join('\n');
  t.true('steps' in parseStepTable(rows(100), 'cycling', 'metric'));
  t.like(parseStepTable(rows(101), 'cycling', 'metric'), { error: { row: 101, column: 1 } });
});

test('creating a test from the form stores it and one trace per step at start + the durations so far, linked to it', async (t) => {
  const { user, web, token } = await athlete();
  const res = await web.postForm('/tests', FORM);
  t.is(res.status, 303);
  const [stored] = await storedTests(user);
  t.truthy(stored);
  t.is(res.headers.get('location'), `/tests/${stored!.id}?created=1`);
  t.is(stored!.title, 'Ramp <lab>');
  t.is(stored!.sport, 'cycling');
  t.deepEqual(stored!.tags, ['lab', 'spring']);
  t.is(stored!.start_time.toISOString(), '2026-05-18T07:00:00.000Z', 'the local time on the browser’s offset');
  t.is(stored!.utc_offset_seconds, 7200);
  t.is(stored!.end_time.toISOString(), '2026-05-18T07:15:30.000Z', 'ends with the last step');
  t.is(stored!.created_by, null);

  const traces = await storedTraces(user);
  t.deepEqual(
    traces.map((tr) => [tr.time.toISOString().slice(11, 19), tr.power, tr.speed, tr.lactate, tr.heart_rate, tr.test_id, tr.sport]),
    [
      ['07:00:00', 0, null, 1.1, 78, stored!.id, 'cycling'],
      ['07:04:00', 100, null, 1.2, 118, stored!.id, 'cycling'],
      ['07:08:00', 150, null, 1.5, 134, stored!.id, 'cycling'],
      ['07:11:30', 200, null, 2.4, 151, stored!.id, 'cycling'],
      ['07:15:30', 250, null, 4.8, null, stored!.id, 'cycling'],
    ],
  );
  t.true(traces.every((tr) => tr.utc_offset_seconds === 7200));

  // The API sees the same: the test with its five linked traces.
  const details = await api(service, token, 'GET', `/api/v1/tests/${stored!.id}?traces=linked`);
  t.is(details.status, 200);
  t.is(details.body.traces.length, 5);

  // The test page shows it; the list links it; the Data page links each trace to it.
  const pageText = await (await web.get(`/tests/${stored!.id}?created=1`)).text();
  t.regex(pageText, /<h1 id="test-title">Ramp &lt;lab&gt;<\/h1>/);
  t.regex(pageText, /<p class="notice" role="status">Test created\.<\/p>/);
  t.is([...pageText.matchAll(/<tr data-trace-id=/g)].length, 5);
  t.regex(pageText, /<section id="lactate-analysis"[^>]*data-test-id="[0-9a-f-]{36}"/);
  t.regex(pageText, /<script type="module" src="\/static\/test-analysis\.js">/);
  const list = await (await web.get('/tests')).text();
  t.regex(list, new RegExp(`<tr data-test-id="${stored!.id}">[\\s\\S]*?<a href="/tests/${stored!.id}">`));
  t.regex(list, /<header class="site">[\s\S]*<a href="\/tests">Tests<\/a>[\s\S]*<\/header>/);
  const data = await (await web.get('/data')).text();
  t.is(
    [
      ...data.matchAll(
        new RegExp(`<span class="trace-test" data-match="explicit">Test <a href="/tests/${stored!.id}">Ramp &lt;lab&gt;</a>`, 'g'),
      ),
    ].length,
    5,
  );
});

test('running steps are paces in the user’s unit; a test without a title is named by its sport and date', async (t) => {
  const { user, web } = await athlete();
  const res = await web.postForm('/tests', {
    sport: 'running',
    start: '2026-05-19T07:30',
    steps: 'step;speed;duration;lactate\n1;10,8;3;1,0\n2;12,6;3;1,4',
  });
  t.is(res.status, 303);
  const traces = await storedTraces(user);
  t.deepEqual(
    traces.map((tr) => tr.power),
    [null, null],
  );
  // A number is a pace in minutes per km for running: 10,8 is 10:48 /km, 12,6 is 12:36 /km.
  t.deepEqual(
    traces.map((tr) => Math.round(tr.speed! * 1000)),
    [Math.round((1000 / 648) * 1000), Math.round((1000 / 756) * 1000)],
  );
  const [stored] = await storedTests(user);
  t.is(stored!.start_time.toISOString(), '2026-05-19T07:30:00.000Z', 'without an offset: UTC');
  const pageText = await (await web.get(`/tests/${stored!.id}`)).text();
  t.regex(pageText, /<h1 id="test-title">Running test, 2026-05-19 07:30<\/h1>/);
});

test('a bad row answers the form again naming its row and column, keeping what was typed, storing nothing', async (t) => {
  const { user, web } = await athlete();
  const steps = `${TABLE}\n5\t300\t4:00\thigh\t170`;
  const res = await web.postForm('/tests', { ...FORM, steps });
  t.is(res.status, 422);
  const text = await res.text();
  t.regex(text, /<p class="field-error" id="steps-error">Row 7, column 4 \(lactate\): “high” is not a lactate in mmol\/L\.<\/p>/);
  t.regex(text, /<textarea id="steps" name="steps"[^>]*aria-invalid="true"[^>]*>Step\tPower \(W\)/);
  t.regex(text, /<input id="title" name="title" type="text" value="Ramp &lt;lab&gt;"/);
  t.is((await storedTests(user)).length, 0);
  t.is((await storedTraces(user)).length, 0);

  const noSport = await web.postForm('/tests', { ...FORM, sport: 'not a sport!' });
  t.is(noSport.status, 422);
  t.regex(await noSport.text(), /id="sport-error">Choose a sport/);
  const noStart = await web.postForm('/tests', { ...FORM, start: '' });
  t.is(noStart.status, 422);
  t.regex(await noStart.text(), /id="start-error">Give the date and time the test started\./);
  t.is((await storedTests(user)).length, 0);
  t.is((await storedTraces(user)).length, 0);
});

test("another user's test and unknown ids are the 404 page; their delete too, deleting nothing", async (t) => {
  const owner = await athlete();
  const other = await athlete();
  t.is((await owner.web.postForm('/tests', FORM)).status, 303);
  const [stored] = await storedTests(owner.user);
  for (const path of [`/tests/${stored!.id}`, '/tests/00000000-0000-4000-8000-000000000000', '/tests/not-an-id']) {
    const res = await other.web.get(path);
    t.is(res.status, 404, path);
    t.regex(await res.text(), /Test not found/);
  }
  t.is((await other.web.postForm(`/tests/${stored!.id}/delete`, {})).status, 404);
  t.is((await storedTests(owner.user)).length, 1);
  t.false((await (await other.web.get('/tests')).text()).includes(stored!.id), 'not in the other user’s list');
});

test('the forms check the Origin: a cross-site post creates and deletes nothing', async (t) => {
  const { user, web } = await athlete();
  const cross = await web.postForm('/tests', FORM, { origin: 'https://evil.example' });
  t.is(cross.status, 403);
  const none = await web.postForm('/tests', FORM, { origin: null });
  t.is(none.status, 403);
  t.is((await storedTests(user)).length, 0);
  t.is((await web.postForm('/tests', FORM)).status, 303);
  const [stored] = await storedTests(user);
  t.is((await web.postForm(`/tests/${stored!.id}/delete`, {}, { origin: 'https://evil.example' })).status, 403);
  t.is((await storedTests(user)).length, 1);
  const del = await web.postForm(`/tests/${stored!.id}/delete`, {});
  t.is(del.status, 303);
  t.is(del.headers.get('location'), '/tests?deleted=1');
  t.is((await storedTests(user)).length, 0);
  t.is((await storedTraces(user)).length, 5, 'the traces stay, unlinked');
  t.true((await storedTraces(user)).every((tr) => tr.test_id === null));
});

test('signed out, the pages and forms send you to sign in', async (t) => {
  const anon = new WebClient(service.url);
  const res = await anon.get('/tests');
  t.is(res.status, 303);
  t.is(res.headers.get('location'), `/signin?next=${encodeURIComponent('/tests')}`);
  const post = await anon.postForm('/tests', FORM);
  t.is(post.status, 303);
  t.is(post.headers.get('location'), `/signin?next=${encodeURIComponent('/tests')}`);
});

test('an activity’s page links the tests overlapping it, and the test’s page links the activity', async (t) => {
  const { token, web } = await athlete();
  const bytes = new Uint8Array(readFileSync(`${fixturesDir()}/fit/2016-05-23_18-14-30_4_25.fit`));
  const [source] = await uploadAndWait(service, token, [{ name: 'ride.fit', bytes }]);
  const activityId: string = source.activity_ids[0];
  const activity = (await api(service, token, 'GET', `/api/v1/activities/${activityId}`)).body;
  const inside = await api(service, token, 'POST', '/api/v1/tests/', { sport: 'cycling', start: activity.start, title: 'Field test' });
  const elsewhere = await api(service, token, 'POST', '/api/v1/tests/', { sport: 'cycling', start: '2001-01-01T10:00:00Z' });
  t.is(inside.status, 201);
  const pageText = await (await web.get(`/activities/${activityId}`)).text();
  t.regex(
    pageText,
    new RegExp(
      `<ul id="activity-tests" class="test-links"><li data-test-id="${inside.body.id}"><a href="/tests/${inside.body.id}">Field test</a></li></ul>`,
    ),
  );
  t.false(pageText.includes(elsewhere.body.id));
  const testText = await (await web.get(`/tests/${inside.body.id}`)).text();
  t.regex(testText, new RegExp(`<ul id="test-activities" class="test-links"><li><a href="/activities/${activityId}">`));
});

test('createTestWithTraces stores all or nothing: a trace the database refuses leaves no test behind', async (t) => {
  const { user } = await athlete();
  const start = new Date('2026-05-18T07:00:00Z');
  const fields = {
    sport: 'cycling',
    start_time: start,
    utc_offset_seconds: 0,
    end_time: start,
    end_utc_offset_seconds: 0,
    title: null,
    tags: [],
    results: null,
  };
  const trace = {
    time: start,
    utc_offset_seconds: 0,
    lactate: 1,
    power: 100,
    speed: null,
    heart_rate: null,
    rpe: null,
    vo2: null,
    notes: null,
    tags: [],
    sport: 'cycling',
  };
  await t.throwsAsync(
    createTestWithTraces(
      service.deps.db,
      user.id,
      fields,
      [trace, { ...trace, heart_rate: 'not a number' as unknown as number }],
      null,
      new Date(),
    ),
  );
  t.is((await storedTests(user)).length, 0);
  t.is((await storedTraces(user)).length, 0);
});
