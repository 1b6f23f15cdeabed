import test from 'ava';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestUser, tokenFor } from './helpers/users.ts';
import { api } from './helpers/activities.ts';
import { addDays, dailyRange, dailySeries, linearEstimate } from '../api/services/dailies/model.ts';
import { todayUtc } from '../api/services/curves/range.ts';
import { listDailies } from '../db/dailies.ts';
import type { User } from '../db/database.ts';

let service: TestService;
test.before(async () => {
  service = await startTestService();
});
test.after.always(() => service?.close());

/** A fresh user (tests run concurrently: each works on its own data) with a read+write token. */
async function someone(): Promise<{ user: User; token: string }> {
  const user = await createTestUser(service);
  return { user, token: await tokenFor(service, user, ['data:read', 'data:write']) };
}

const post = (token: string | undefined, measure: string, body: unknown) => api(service, token, 'POST', `/api/v1/dailies/${measure}`, body);
const get = (token: string | undefined, measure: string, query = '') => api(service, token, 'GET', `/api/v1/dailies/${measure}${query}`);
const del = (token: string | undefined, measure: string, query: string) =>
  api(service, token, 'DELETE', `/api/v1/dailies/${measure}${query}`);

async function store(token: string, measure: string, values: Record<string, number>) {
  for (const [date, value] of Object.entries(values)) {
    const res = await post(token, measure, { date, value });
    if (res.status !== 200) throw new Error(`POST ${measure} ${date}: ${res.status} ${JSON.stringify(res.body)}`);
  }
}

const missing = (date: string) => ({ date, value: null, status: 'missing', source: null });
const stored = (date: string, value: number) => ({ date, value, status: 'stored', source: 'manual' });
const estimated = (date: string, value: number) => ({ date, value, status: 'estimated', source: null });

const rowsOf = (user: User, measure: string) =>
  service.deps.db.selectFrom('dailies').selectAll().where('user_id', '=', user.id).where('measure', '=', measure).orderBy('day').execute();

test('POST stores the value and answers 200 with it; a second POST for the same date replaces it', async (t) => {
  const { user, token } = await someone();
  const res = await post(token, 'body_mass', { date: '2026-03-10', value: 71.4 });
  t.is(res.status, 200);
  t.deepEqual(res.body, { date: '2026-03-10', value: 71.4, status: 'stored', source: 'manual' });
  const [row] = await rowsOf(user, 'body_mass');
  t.like(row, { user_id: user.id, measure: 'body_mass', day: '2026-03-10', value: 71.4, source: 'manual' });

  const again = await post(token, 'body_mass', { date: '2026-03-10', value: 70.9 });
  t.is(again.status, 200);
  t.deepEqual(again.body, stored('2026-03-10', 70.9));
  const rows = await rowsOf(user, 'body_mass');
  t.is(rows.length, 1);
  t.like(rows[0], { day: '2026-03-10', value: 70.9 });
  t.true(rows[0]!.updated_at >= rows[0]!.created_at);

  // Measures are separate: the same date of another measure is another value.
  t.is((await post(token, 'hrv', { date: '2026-03-10', value: 55 })).status, 200);
  t.is((await rowsOf(user, 'body_mass')).length, 1);
  t.deepEqual((await get(token, 'hrv', '?start=2026-03-10&end=2026-03-10')).body, [stored('2026-03-10', 55)]);
  t.deepEqual((await get(token, 'body_mass', '?start=2026-03-10&end=2026-03-10')).body, [stored('2026-03-10', 70.9)]);
});

test('POST validation: unknown measure, values outside the range (inclusive bounds), non-numbers, missing fields, invalid dates', async (t) => {
  const { user, token } = await someone();
  const unknown = await post(token, 'weight', { date: '2026-03-10', value: 70 });
  t.is(unknown.status, 422);
  t.deepEqual(
    unknown.body.detail.map((d: { loc: unknown }) => d.loc),
    [['path', 'measure']],
  );

  const cases: [string, unknown, RegExp][] = [
    ['body_mass', -0.1, /0 and 500 kg/],
    ['body_mass', 500.01, /0 and 500 kg/],
    ['sleep_duration', -1, /0 and 86400 s/],
    ['sleep_duration', 86401, /0 and 86400 s/],
    ['resting_hr', 251, /0 and 250 bpm/],
  ];
  for (const [measure, value, msg] of cases) {
    const res = await post(token, measure, { date: '2026-03-10', value });
    t.is(res.status, 422, `${measure} ${value}`);
    t.is(res.body.detail.length, 1);
    t.deepEqual(res.body.detail[0].loc, ['body', 'value']);
    t.regex(res.body.detail[0].msg, msg);
    t.regex(res.body.detail[0].msg, new RegExp(measure));
  }
  // The bounds themselves are allowed.
  for (const [measure, value] of [
    ['body_mass', 0],
    ['body_mass', 500],
    ['sleep_duration', 86400],
    ['menstrual_cycle_day', 100],
  ] as const) {
    t.is((await post(token, measure, { date: '2026-03-11', value })).status, 200, `${measure} ${value}`);
  }

  const bodies: [unknown, (string | number)[]][] = [
    [{ date: '2026-03-10', value: '70' }, ['body', 'value']],
    [{ date: '2026-03-10', value: null }, ['body', 'value']],
    [{ date: '2026-03-10' }, ['body', 'value']],
    [{ value: 70 }, ['body', 'date']],
    [{ date: '2026-02-30', value: 70 }, ['body', 'date']],
    [{ date: '2026-3-1', value: 70 }, ['body', 'date']],
    [{ date: '2026-03-10T08:00:00Z', value: 70 }, ['body', 'date']],
    [{ date: 20260310, value: 70 }, ['body', 'date']],
    [{ date: '1899-12-31', value: 70 }, ['body', 'date']],
  ];
  for (const [body, loc] of bodies) {
    const res = await post(token, 'body_mass', body);
    t.is(res.status, 422, JSON.stringify(body));
    t.deepEqual(
      res.body.detail.map((d: { loc: unknown }) => d.loc),
      [loc],
      JSON.stringify(body),
    );
  }
  t.is((await post(token, 'body_mass', '[1,2]')).status, 422);
  t.is((await post(token, 'body_mass', '{"date":"2026-03-10","value":1e999}')).status, 422, 'not finite');
  t.is((await rowsOf(user, 'body_mass')).filter((r) => r.day === '2026-03-10').length, 0, 'nothing stored by a rejected request');
});

test('GET without a range answers the last 30 days, ending today (UTC), oldest first', async (t) => {
  const { token } = await someone();
  const before = todayUtc(service.clock.now());
  const res = await get(token, 'resting_hr');
  const after = todayUtc(service.clock.now());
  t.is(res.status, 200);
  t.is(res.body.length, 30);
  const today = res.body[29].date;
  t.true(today === before || today === after);
  t.is(res.body[0].date, addDays(today, -29));
  t.deepEqual(
    res.body,
    Array.from({ length: 30 }, (_, i) => missing(addDays(today, i - 29))),
  );

  // Only `end`: the 30 days up to it; only `start`: up to today.
  const toEnd = await get(token, 'resting_hr', '?end=2026-03-31');
  t.is(toEnd.body.length, 30);
  t.is(toEnd.body[0].date, '2026-03-02');
  t.is(toEnd.body[29].date, '2026-03-31');
  const fromStart = await get(token, 'resting_hr', `?start=${addDays(before, -4)}`);
  t.is(fromStart.status, 200);
  t.true(fromStart.body.length === 5 || fromStart.body.length === 6);
  t.is(fromStart.body[0].date, addDays(before, -4));
});

test('GET over a range: stored values with their source, missing days in between; other measures and dates outside stay out', async (t) => {
  const { token } = await someone();
  await store(token, 'body_fat_pct', { '2026-04-01': 15.5, '2026-04-03': 15.1, '2026-04-10': 14 });
  await store(token, 'hrv', { '2026-04-02': 80 });
  const res = await get(token, 'body_fat_pct', '?start=2026-04-01&end=2026-04-05');
  t.is(res.status, 200);
  t.deepEqual(res.body, [
    stored('2026-04-01', 15.5),
    missing('2026-04-02'),
    stored('2026-04-03', 15.1),
    missing('2026-04-04'),
    missing('2026-04-05'),
  ]);
  t.deepEqual((await get(token, 'body_fat_pct', '?start=2026-04-01&end=2026-04-05&interpolate=false')).body, res.body);
  t.deepEqual((await get(token, 'body_fat_pct', '?start=2026-04-10&end=2026-04-10')).body, [stored('2026-04-10', 14)]);
});

test('interpolate=true: days between two stored values get the exact linear estimate', async (t) => {
  const { token } = await someone();
  await store(token, 'body_mass', { '2026-05-01': 70, '2026-05-05': 72, '2026-05-08': 69 });
  const res = await get(token, 'body_mass', '?start=2026-05-01&end=2026-05-08&interpolate=true');
  t.is(res.status, 200);
  t.deepEqual(res.body, [
    stored('2026-05-01', 70),
    estimated('2026-05-02', 70.5),
    estimated('2026-05-03', 71),
    estimated('2026-05-04', 71.5),
    stored('2026-05-05', 72),
    estimated('2026-05-06', 71),
    estimated('2026-05-07', 70),
    stored('2026-05-08', 69),
  ]);
  t.deepEqual((await get(token, 'body_mass', '?start=2026-05-02&end=2026-05-02&interpolate=1')).body, [estimated('2026-05-02', 70.5)]);
  const bad = await get(token, 'body_mass', '?interpolate=yes');
  t.is(bad.status, 422);
  t.deepEqual(bad.body.detail[0].loc, ['query', 'interpolate']);
});

test('interpolate=true with a single stored value estimates nothing', async (t) => {
  const { token } = await someone();
  await store(token, 'hrv', { '2026-06-10': 62 });
  const res = await get(token, 'hrv', '?start=2026-06-08&end=2026-06-12&interpolate=true');
  t.deepEqual(res.body, [
    missing('2026-06-08'),
    missing('2026-06-09'),
    stored('2026-06-10', 62),
    missing('2026-06-11'),
    missing('2026-06-12'),
  ]);
});

test('interpolate=true at the range edges: stored values outside the range count; after the last stored value days stay missing', async (t) => {
  const { token } = await someone();
  await store(token, 'sleep_duration', { '2026-07-01': 25200, '2026-07-11': 28800 }); // 7 h, 8 h: 360 s a day
  // Both neighbours lie outside the range: every day is an estimate, at both edges.
  t.deepEqual((await get(token, 'sleep_duration', '?start=2026-07-04&end=2026-07-07&interpolate=true')).body, [
    estimated('2026-07-04', 26280),
    estimated('2026-07-05', 26640),
    estimated('2026-07-06', 27000),
    estimated('2026-07-07', 27360),
  ]);
  // Across the last stored value: estimates before it, missing after it.
  t.deepEqual((await get(token, 'sleep_duration', '?start=2026-07-09&end=2026-07-13&interpolate=true')).body, [
    estimated('2026-07-09', 28080),
    estimated('2026-07-10', 28440),
    stored('2026-07-11', 28800),
    missing('2026-07-12'),
    missing('2026-07-13'),
  ]);
  // Before the first stored value: missing.
  t.deepEqual((await get(token, 'sleep_duration', '?start=2026-06-29&end=2026-07-02&interpolate=true')).body, [
    missing('2026-06-29'),
    missing('2026-06-30'),
    stored('2026-07-01', 25200),
    estimated('2026-07-02', 25560),
  ]);
  // Without interpolate the same range is all missing.
  t.deepEqual((await get(token, 'sleep_duration', '?start=2026-07-04&end=2026-07-05')).body, [
    missing('2026-07-04'),
    missing('2026-07-05'),
  ]);
});

test('GET range validation: start after end, more than 3660 days, invalid dates', async (t) => {
  const { token } = await someone();
  const reversed = await get(token, 'hrv', '?start=2026-03-02&end=2026-03-01');
  t.is(reversed.status, 422);
  t.deepEqual(reversed.body.detail[0].loc, ['query', 'start']);
  const future = await get(token, 'hrv', `?start=${addDays(todayUtc(service.clock.now()), 2)}`);
  t.is(future.status, 422, 'a start after today without end');
  t.deepEqual(future.body.detail[0].loc, ['query', 'start']);

  const longest = await get(token, 'hrv', `?start=2016-01-01&end=${addDays('2016-01-01', 3659)}`);
  t.is(longest.status, 200);
  t.is(longest.body.length, 3660);
  const tooLong = await get(token, 'hrv', `?start=2016-01-01&end=${addDays('2016-01-01', 3660)}`);
  t.is(tooLong.status, 422);
  t.deepEqual(tooLong.body.detail[0].loc, ['query', 'start']);
  t.regex(tooLong.body.detail[0].msg, /3660/);

  for (const [query, loc] of [
    ['?start=2026-02-30', ['query', 'start']],
    ['?end=yesterday', ['query', 'end']],
    ['?start=2026-03-01T00:00:00', ['query', 'start']],
  ] as const) {
    const res = await get(token, 'hrv', query);
    t.is(res.status, 422, query);
    t.deepEqual(res.body.detail[0].loc, loc, query);
  }
  const unknown = await get(token, 'vo2max');
  t.is(unknown.status, 422);
  t.deepEqual(unknown.body.detail[0].loc, ['path', 'measure']);
});

test('DELETE removes the value (204), then 404; the date is required and validated', async (t) => {
  const { user, token } = await someone();
  await store(token, 'sleep_altitude', { '2026-08-01': 1800, '2026-08-02': 1850 });
  const res = await del(token, 'sleep_altitude', '?date=2026-08-01');
  t.is(res.status, 204);
  t.is(res.body, undefined);
  t.deepEqual(
    (await rowsOf(user, 'sleep_altitude')).map((r) => r.day),
    ['2026-08-02'],
  );
  t.deepEqual((await get(token, 'sleep_altitude', '?start=2026-08-01&end=2026-08-01')).body, [missing('2026-08-01')]);

  const again = await del(token, 'sleep_altitude', '?date=2026-08-01');
  t.is(again.status, 404);
  t.is(typeof again.body.detail, 'string');
  t.is((await del(token, 'body_mass', '?date=2026-08-02')).status, 404, 'another measure has no value on that date');

  for (const query of ['', '?date=', '?date=2026-13-01', '?date=tomorrow', '?date=0000-01-01']) {
    const bad = await del(token, 'sleep_altitude', query);
    t.is(bad.status, 422, query);
    t.deepEqual(bad.body.detail[0].loc, ['query', 'date'], query);
  }
  t.deepEqual((await del(token, 'nope', '?date=2026-08-02')).body.detail[0].loc, ['path', 'measure']);
  t.is((await rowsOf(user, 'sleep_altitude')).length, 1);
});

test('scopes: no token is 401; data:write alone can POST and DELETE but not GET; data:read alone cannot write', async (t) => {
  const { user } = await someone();
  for (const res of [
    await post(undefined, 'hrv', { date: '2026-09-01', value: 50 }),
    await get(undefined, 'hrv'),
    await del(undefined, 'hrv', '?date=2026-09-01'),
  ]) {
    t.is(res.status, 401);
    t.regex(res.headers.get('www-authenticate') ?? '', /invalid_token/);
  }

  const writer = await tokenFor(service, user, ['data:write']);
  t.is((await post(writer, 'hrv', { date: '2026-09-01', value: 50 })).status, 200);
  t.is((await post(writer, 'hrv', { date: '2026-09-02', value: 52 })).status, 200);
  const forbidden = await get(writer, 'hrv');
  t.is(forbidden.status, 403);
  t.regex(forbidden.headers.get('www-authenticate') ?? '', /insufficient_scope/);
  t.is((await del(writer, 'hrv', '?date=2026-09-01')).status, 204);

  const reader = await tokenFor(service, user, ['data:read']);
  t.is((await post(reader, 'hrv', { date: '2026-09-03', value: 50 })).status, 403);
  t.is((await del(reader, 'hrv', '?date=2026-09-02')).status, 403);
  t.deepEqual((await get(reader, 'hrv', '?start=2026-09-01&end=2026-09-03')).body, [
    missing('2026-09-01'),
    stored('2026-09-02', 52),
    missing('2026-09-03'),
  ]);
});

test("another user's values are invisible and cannot be deleted", async (t) => {
  const alice = await someone();
  const bob = await someone();
  await store(alice.token, 'menstrual_cycle_day', { '2026-10-01': 1, '2026-10-05': 5 });
  t.deepEqual((await get(bob.token, 'menstrual_cycle_day', '?start=2026-10-01&end=2026-10-02&interpolate=true')).body, [
    missing('2026-10-01'),
    missing('2026-10-02'),
  ]);
  const res = await del(bob.token, 'menstrual_cycle_day', '?date=2026-10-01');
  t.is(res.status, 404);
  // Bob's own value on the same date is his alone.
  await store(bob.token, 'menstrual_cycle_day', { '2026-10-01': 20 });
  t.deepEqual((await get(alice.token, 'menstrual_cycle_day', '?start=2026-10-01&end=2026-10-02&interpolate=true')).body, [
    stored('2026-10-01', 1),
    estimated('2026-10-02', 2),
  ]);
  t.deepEqual((await get(bob.token, 'menstrual_cycle_day', '?start=2026-10-01&end=2026-10-01')).body, [stored('2026-10-01', 20)]);
});

test("listDailies: a user's stored values newest first, optionally of one measure, paged", async (t) => {
  const { user, token } = await someone();
  await store(token, 'hrv', { '2026-01-02': 60, '2026-01-04': 64 });
  await store(token, 'body_mass', { '2026-01-03': 70, '2026-01-04': 71 });
  await store((await someone()).token, 'hrv', { '2026-01-05': 1 });
  const { db } = service.deps;
  const all = await listDailies(db, user.id, undefined, { limit: 10, offset: 0 });
  t.deepEqual(
    all.map((r) => [r.day, r.measure, r.value]),
    [
      ['2026-01-04', 'body_mass', 71],
      ['2026-01-04', 'hrv', 64],
      ['2026-01-03', 'body_mass', 70],
      ['2026-01-02', 'hrv', 60],
    ],
  );
  t.deepEqual(
    (await listDailies(db, user.id, 'hrv', { limit: 10, offset: 0 })).map((r) => r.day),
    ['2026-01-04', '2026-01-02'],
  );
  t.deepEqual(
    (await listDailies(db, user.id, undefined, { limit: 2, offset: 1 })).map((r) => r.day),
    ['2026-01-04', '2026-01-03'],
  );
});

test('the pure parts: linear estimates, the series and the default range', (t) => {
  t.is(linearEstimate({ day: '2026-01-01', value: 10 }, { day: '2026-01-04', value: 16 }, '2026-01-02'), 12);
  t.is(linearEstimate({ day: '2026-01-01', value: 10 }, { day: '2026-01-04', value: 16 }, '2026-01-03'), 14);
  t.is(
    linearEstimate({ day: '2026-02-27', value: 0 }, { day: '2026-03-02', value: 3 }, '2026-03-01'),
    2,
    'across a month end (no leap day in 2026)',
  );
  t.is(linearEstimate({ day: '2028-02-28', value: 0 }, { day: '2028-03-01', value: 2 }, '2028-02-29'), 1, 'across a leap day');
  t.deepEqual(
    dailySeries(
      '2026-01-02',
      '2026-01-04',
      { rows: [{ day: '2026-01-03', value: 5, source: 'garmin_connect' }], before: { day: '2025-12-31', value: 2, source: 'manual' } },
      true,
    ),
    [estimated('2026-01-02', 4), { date: '2026-01-03', value: 5, status: 'stored', source: 'garmin_connect' }, missing('2026-01-04')],
  );
  t.deepEqual(dailyRange({}, '2026-03-31'), { start: '2026-03-02', end: '2026-03-31' });
  t.deepEqual(dailyRange({ start: '2026-03-30' }, '2026-03-31'), { start: '2026-03-30', end: '2026-03-31' });
  t.deepEqual(dailyRange({ end: '2026-01-10' }, '2026-03-31'), { start: '2025-12-12', end: '2026-01-10' });
  t.throws(() => dailyRange({ start: '2026-04-01' }, '2026-03-31'));
});

test('the OpenAPI document lists the three dailies operations', async (t) => {
  const doc = (await (await fetch(`${service.url}/openapi.json`)).json()) as any;
  const path = doc.paths['/api/v1/dailies/{measure}'];
  t.deepEqual(Object.keys(path).sort(), ['delete', 'get', 'post']);
  t.is(path.post.operationId, 'upsert_daily');
  t.is(path.get.operationId, 'get_dailies');
  t.is(path.delete.operationId, 'delete_daily');
  for (const op of [path.post, path.get, path.delete]) t.deepEqual(op.tags, ['dailies']);
  t.deepEqual(path.post.security[0], { bearer: ['data:write'] });
  t.deepEqual(path.get.security[0], { bearer: ['data:read'] });
  t.deepEqual(path.delete.security[0], { bearer: ['data:write'] });
  t.truthy(path.post.responses['200']);
  t.truthy(path.delete.responses['204'] && path.delete.responses['404']);
  t.deepEqual(
    path.get.parameters.map((p: { name: string }) => p.name),
    ['measure', 'start', 'end', 'interpolate'],
  );
  t.deepEqual(doc.components.schemas.DailyMeasure.enum, [
    'body_mass',
    'body_fat_pct',
    'resting_hr',
    'hrv',
    'sleep_duration',
    'sleep_altitude',
    'menstrual_cycle_day',
  ]);
  t.regex(doc.components.schemas.DailyMeasure.description, /body_mass` \(kg, 0–500\)/);
  t.deepEqual(doc.components.schemas.DailyResponse.required.sort(), ['date', 'source', 'status', 'value']);
});
