import test from 'ava';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestUser, tokenFor } from './helpers/users.ts';
import { api } from './helpers/activities.ts';

/**
 * GET /api/v1/profile/intensity-duration-model's `test`: the user's newest test (of `sport` when given,
 * started on or before `date`'s local day) whose results hold the metric's critical value, with its
 * work capacity and whether it is newer than the model's 90-day window; and its ETag, which follows
 * the tests although a test's change bumps no data version.
 */

let service: TestService;
test.before(async () => {
  service = await startTestService();
});
test.after.always(() => service?.close());

const MODEL = '/api/v1/profile/intensity-duration-model';

async function athlete() {
  const user = await createTestUser(service);
  return { user, token: await tokenFor(service, user, ['data:read', 'data:write']) };
}

async function createTest(token: string, body: Record<string, unknown>): Promise<{ id: string; start: string }> {
  const res = await api(service, token, 'POST', '/api/v1/tests/', { tags: [], ...body });
  if (res.status !== 201) throw new Error(`POST test: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

const testOf = async (token: string, query: string) => {
  const res = await api(service, token, 'GET', `${MODEL}?${query}`);
  if (res.status !== 200) throw new Error(`${query}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.test;
};

test('null without a test holding the critical value; the newest one on or before date is chosen, its W′ null when missing', async (t) => {
  const { token } = await athlete();
  t.is(await testOf(token, 'date=2026-05-10'), null, 'no test at all');
  await createTest(token, {
    sport: 'cycling',
    start: '2026-02-20T09:00:00Z',
    title: 'Lactate',
    results: { vo2max: 60, lt1: { power: 200 } },
  });
  t.is(await testOf(token, 'date=2026-05-10'), null, 'a test without critical_power is not one');
  const a = await createTest(token, {
    sport: 'cycling',
    start: '2026-03-01T09:00:00+01:00',
    title: 'CP test',
    results: { critical_power: 280, w_prime: 18000 },
  });
  const b = await createTest(token, {
    sport: 'cycling.road',
    start: '2026-04-01T09:00:00Z',
    title: null,
    results: { critical_power: 300 },
  });
  await createTest(token, { sport: 'cycling', start: '2026-05-01T09:00:00Z', title: 'Ramp', results: { vo2max: 62, critical_speed: 12 } });

  const res = await api(service, token, 'GET', `${MODEL}?date=2026-05-10`);
  t.is(res.status, 200);
  t.deepEqual(res.body, {
    curve: [],
    parameters: null,
    test: { id: b.id, start: '2026-04-01T09:00:00Z', title: null, critical_intensity: 300, work_capacity: null, newer_than_window: true },
  });
  t.deepEqual(await testOf(token, 'date=2026-03-31'), {
    id: a.id,
    start: '2026-03-01T08:00:00Z',
    title: 'CP test',
    critical_intensity: 280,
    work_capacity: 18000,
    newer_than_window: true,
  });
  t.is(await testOf(token, 'date=2026-02-28'), null, 'tests after `date` are not looked at');
  t.is((await testOf(token, 'date=2026-05-10&sport=cycling')).id, b.id, 'a sport matches its sub-sports');
  t.is((await testOf(token, 'date=2026-05-10&sport=cycling.road')).id, b.id);
  t.is(await testOf(token, 'date=2026-05-10&sport=cycling.mountain'), null);
  t.is(await testOf(token, 'date=2026-05-10&sport=running'), null);
});

test('speed uses critical_speed and d_prime; the sport filter picks among sports', async (t) => {
  const { token } = await athlete();
  const run = await createTest(token, {
    sport: 'running',
    start: '2026-04-10T07:00:00Z',
    title: '3/9 min',
    results: { critical_speed: 4.5, d_prime: 210 },
  });
  const ride = await createTest(token, {
    sport: 'cycling',
    start: '2026-04-20T07:00:00Z',
    title: 'Ride',
    results: { critical_power: 310, w_prime: 20000, critical_speed: 11 },
  });
  t.deepEqual(await testOf(token, 'date=2026-05-01&metric=speed&sport=running'), {
    id: run.id,
    start: '2026-04-10T07:00:00Z',
    title: '3/9 min',
    critical_intensity: 4.5,
    work_capacity: 210,
    newer_than_window: true,
  });
  t.like(await testOf(token, 'date=2026-05-01&metric=speed'), { id: ride.id, critical_intensity: 11, work_capacity: null });
  t.like(await testOf(token, 'date=2026-05-01&metric=power'), { id: ride.id, critical_intensity: 310, work_capacity: 20000 });
  t.is(await testOf(token, 'date=2026-05-01&metric=power&sport=running'), null, 'the run holds no critical power');
});

test("another user's test is never shown", async (t) => {
  const alice = await athlete();
  const bob = await athlete();
  const mine = await createTest(alice.token, { sport: 'cycling', start: '2026-04-01T09:00:00Z', results: { critical_power: 250 } });
  const his = await createTest(bob.token, { sport: 'cycling', start: '2026-04-05T09:00:00Z', results: { critical_power: 400 } });
  t.is((await testOf(alice.token, 'date=2026-05-01')).id, mine.id);
  t.is((await testOf(bob.token, 'date=2026-05-01')).id, his.id);
  const carol = await athlete();
  t.is(await testOf(carol.token, 'date=2026-05-01'), null);
});

test("newer_than_window: the test's local start day after the window's first day (date − 89 days); both read on the test's own offset", async (t) => {
  const { token } = await athlete();
  // Local day 2026-04-01 (UTC day 2026-04-02).
  const late = await createTest(token, {
    sport: 'cycling',
    start: '2026-04-01T23:30:00-05:00',
    results: { critical_power: 290, w_prime: 15000 },
  });
  t.like(
    await testOf(token, 'date=2026-04-01'),
    { id: late.id, start: '2026-04-02T04:30:00Z', newer_than_window: true },
    'its local day is `date`',
  );
  t.is(await testOf(token, 'date=2026-03-31'), null);
  // The window of date 2026-06-29 starts on 2026-04-01, the test's day: not newer. A day earlier it is.
  t.like(await testOf(token, 'date=2026-06-28'), { id: late.id, newer_than_window: true });
  t.like(await testOf(token, 'date=2026-06-29'), { id: late.id, newer_than_window: false });
  t.like(await testOf(token, 'date=2027-01-01'), { id: late.id, newer_than_window: false }, 'an old test is still the newest one');
});

test('the ETag follows the tests: a new, replaced or deleted test that changes `test` is a 200 after a 304, one that does not stays 304', async (t) => {
  const { token } = await athlete();
  const get = (etag?: string) =>
    fetch(`${service.url}${MODEL}?date=2026-05-10`, {
      headers: { authorization: `Bearer ${token}`, ...(etag ? { 'if-none-match': etag } : {}) },
    });
  const first = await get();
  const etag0 = first.headers.get('etag')!;
  t.truthy(etag0);
  t.is(((await first.json()) as any).test, null);
  t.is((await get(etag0)).status, 304);

  const created = await createTest(token, {
    sport: 'cycling',
    start: '2026-04-01T09:00:00Z',
    title: 'CP',
    results: { critical_power: 300 },
  });
  const afterCreate = await get(etag0);
  t.is(afterCreate.status, 200, 'a new test: not 304');
  const etag1 = afterCreate.headers.get('etag')!;
  t.not(etag1, etag0);
  t.is(((await afterCreate.json()) as any).test.id, created.id);
  t.is((await get(etag1)).status, 304);

  // An older test, and one without critical power, change nothing the answer shows.
  await createTest(token, { sport: 'cycling', start: '2026-03-01T09:00:00Z', results: { critical_power: 270 } });
  await createTest(token, { sport: 'cycling', start: '2026-04-20T09:00:00Z', results: { vo2max: 60 } });
  t.is((await get(etag1)).status, 304, 'tests that are not chosen leave the answer and its tag alone');

  const put = await api(service, token, 'PUT', `/api/v1/tests/${created.id}`, {
    sport: 'cycling',
    start: '2026-04-01T09:00:00Z',
    title: 'CP',
    results: { critical_power: 305, w_prime: 21000 },
    tags: [],
  });
  t.is(put.status, 200);
  const afterReplace = await get(etag1);
  t.is(afterReplace.status, 200, 'a replaced test: not 304');
  const etag2 = afterReplace.headers.get('etag')!;
  t.like(((await afterReplace.json()) as any).test, { id: created.id, critical_intensity: 305, work_capacity: 21000 });

  t.is((await api(service, token, 'DELETE', `/api/v1/tests/${created.id}`)).status, 204);
  const afterDelete = await get(etag2);
  t.is(afterDelete.status, 200, 'a deleted test: not 304');
  t.like(((await afterDelete.json()) as any).test, { critical_intensity: 270 }, 'the older test is now the newest');
});

test('the OpenAPI document describes `test`', async (t) => {
  const doc = (await (await fetch(`${service.url}/openapi.json`)).json()) as any;
  const op = doc.paths[MODEL].get;
  for (const part of ['newer_than_window', 'critical_speed', 'd_prime', '89 days', 'ETag']) t.true(op.description.includes(part), part);
  const schema = op.responses['200'].content['application/json'].schema;
  const body = schema.$ref ? doc.components.schemas[schema.$ref.split('/').at(-1)] : schema;
  const member = JSON.stringify(body.properties.test);
  for (const part of ['critical_intensity', 'work_capacity', 'newer_than_window', 'w_prime']) t.true(member.includes(part), part);
});
