/**
 * The profile endpoints (tags, sports, template week, app metadata) as a client sees them, and the
 * template week's pure aggregation. Activities are uploaded as small CSV files (one row per second,
 * so an activity of N rows lasts N seconds); traces are inserted straight into the database. The
 * test clock is moved to noon UTC, so "today" cannot change while the file runs.
 */
import test from 'ava';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestApplication, createTestUser, tokenFor } from './helpers/users.ts';
import { api, uploadAndWait } from './helpers/activities.ts';
import { templateWeek, WEEKDAYS, type TemplateWeek } from '../api/rest/routes/profile/template-week.ts';
import type { TrainingDayRow } from '../db/profile.ts';
import type { User } from '../db/database.ts';

const DAY_MS = 86_400_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const msOf = (day: string) => Date.parse(`${day}T00:00:00Z`);
const plus = (day: string, days: number) => dayOf(msOf(day) + days * DAY_MS);

/** A CSV activity of `seconds` rows starting at local `day`T`time` on the clock `offset` (`+03:00`, `Z`). */
function csvActivity(day: string, time: string, offset: string, seconds: number): Uint8Array {
  const localStart = Date.parse(`${day}T${time}Z`);
  const lines = Array.from({ length: seconds }, (_, i) => `${new Date(localStart + i * 1000).toISOString().slice(0, 19)}${offset},200`);
  return new TextEncoder().encode(`timestamp,power\n${lines.join('\n')}\n`);
}

let service: TestService;
/** Today (UTC) on the service's clock, and the window of the template week. */
let today: string;
let windowStart: string;
/** The most recent Mondays and Wednesdays before today: M[1] is the latest, M[2] a week earlier, … */
const M: string[] = [];
const W: string[] = [];

interface Athlete {
  user: User;
  token: string;
}
let alice: Athlete;
let bob: Athlete;

async function athlete(): Promise<Athlete> {
  const user = await createTestUser(service);
  return { user, token: await tokenFor(service, user, ['data:read', 'data:write']) };
}

async function activity(who: Athlete, day: string, time: string, offset: string, seconds: number, sport: string, tags: string[] = []) {
  const [source] = await uploadAndWait(
    service,
    who.token,
    [{ name: `${day}-${time.replaceAll(':', '')}.csv`, bytes: csvActivity(day, time, offset, seconds) }],
    {
      sport,
      ...(tags.length ? { tags } : {}),
    },
  );
  if (source.status !== 'processed') throw new Error(`${day} ${sport}: ${JSON.stringify(source)}`);
}

async function trace(who: Athlete, time: string, sport: string | null, tags: string[]) {
  await service.deps.db.insertInto('traces').values({ user_id: who.user.id, time, utc_offset_seconds: 0, sport, tags }).execute();
}

test.before(async () => {
  service = await startTestService({ workers: true });
  // Noon UTC, at most a day ahead: the date stays the same for the next twelve hours.
  const now = Date.now();
  const noon = msOf(dayOf(now)) + DAY_MS / 2;
  service.clock.advance((noon >= now ? noon : noon + DAY_MS) - now);
  today = dayOf(service.clock.now().getTime());
  windowStart = plus(today, -84);
  for (let d = plus(today, -1); d >= windowStart; d = plus(d, -1)) {
    const weekday = new Date(msOf(d)).getUTCDay();
    if (weekday === 1) M.push(d);
    if (weekday === 3) W.push(d);
  }
  M.unshift(''); // 1-based: M[1] is the latest Monday
  W.unshift('');

  alice = await athlete();
  bob = await athlete();
  await Promise.all([
    // 85 days ago: just before the window (and Alice's first activity, so every weekday counts 12 days).
    activity(alice, plus(today, -85), '12:00:00', 'Z', 600, 'swimming'),
    // Today: not in the window.
    activity(alice, today, '06:00:00', 'Z', 600, 'rowing', ['today-tag']),
    // Mondays: totals 1800, 1800, 900, 300 and eight rest days.
    activity(alice, M[1]!, '07:00:00', '+02:00', 1800, 'cycling.road', ['race', 'hills']),
    activity(alice, M[2]!, '07:00:00', 'Z', 1200, 'cycling.road'),
    activity(alice, M[2]!, '18:00:00', 'Z', 600, 'running'),
    activity(alice, M[3]!, '07:00:00', '-05:00', 900, 'running'),
    // 01:00 on Monday at UTC+3 is 22:00 on Sunday in UTC: it counts on Monday, its local date.
    activity(alice, M[4]!, '01:00:00', '+03:00', 300, 'running'),
    // Wednesdays: four one-day sports; totals 600, 900, 600, 600 and eight rest days.
    activity(alice, W[1]!, '07:00:00', 'Z', 600, 'cycling+stationary'),
    activity(alice, W[2]!, '07:00:00', 'Z', 900, 'running.trail', ['race', 'Zone2']),
    activity(alice, W[3]!, '07:00:00', 'Z', 600, 'walking'),
    activity(alice, W[4]!, '07:00:00', 'Z', 600, 'hiking'),
    // Bob started four weeks ago, on a Monday at 01:00 local (Sunday in UTC); Mondays: 300, 1800, rest, 1200.
    activity(bob, M[4]!, '01:00:00', '+03:00', 300, 'running', ['secret']),
    activity(bob, M[3]!, '07:00:00', 'Z', 1800, 'running'),
    activity(bob, M[1]!, '07:00:00', 'Z', 900, 'running'),
    activity(bob, M[1]!, '17:00:00', 'Z', 300, 'cycling'),
  ]);
  await trace(alice, `${M[1]}T06:00:00Z`, 'running.road', ['lactate', 'race']);
  await trace(alice, `${W[1]}T06:00:00Z`, null, ['hills', 'test:ramp']);
  await trace(alice, `${W[2]}T06:00:00Z`, 'cycling.road+virtual', []);
  await trace(bob, `${M[1]}T06:00:00Z`, 'skating', ['bobs-trace']);
});
test.after.always(() => service?.close());

const get = (who: Athlete | string, path: string) => api(service, typeof who === 'string' ? who : who.token, 'GET', path);

test("tags: the sorted union of the tags of activities and traces, each once, only the caller's", async (t) => {
  const res = await get(alice, '/api/v1/profile/tags/');
  t.is(res.status, 200);
  // Code-point order: upper case before lower case.
  t.deepEqual(res.body, ['Zone2', 'hills', 'lactate', 'race', 'test:ramp', 'today-tag']);
  t.deepEqual((await get(alice, '/api/v1/profile/tags')).body, res.body, 'the path without the trailing slash answers the same');
  t.deepEqual((await get(bob, '/api/v1/profile/tags/')).body, ['bobs-trace', 'secret']);
  const newcomer = await athlete();
  const empty = await get(newcomer, '/api/v1/profile/tags/');
  t.is(empty.status, 200);
  t.deepEqual(empty.body, []);
});

test('sports: every sport of activities and traces, sorted and unique, traces without a sport skipped; only_root gives root codes', async (t) => {
  const all = await get(alice, '/api/v1/profile/sports/');
  t.is(all.status, 200);
  t.deepEqual(all.body, [
    'cycling+stationary',
    'cycling.road',
    'cycling.road+virtual',
    'hiking',
    'rowing',
    'running',
    'running.road',
    'running.trail',
    'swimming',
    'walking',
  ]);
  t.deepEqual((await get(alice, '/api/v1/profile/sports/?only_root=false')).body, all.body);
  const roots = await get(alice, '/api/v1/profile/sports/?only_root=true');
  t.is(roots.status, 200);
  t.deepEqual(roots.body, ['cycling', 'hiking', 'rowing', 'running', 'swimming', 'walking']);
  t.deepEqual((await get(alice, '/api/v1/profile/sports?only_root=1')).body, roots.body);
  t.deepEqual((await get(bob, '/api/v1/profile/sports/')).body, ['cycling', 'running', 'skating']);
  t.deepEqual((await get(bob, '/api/v1/profile/sports/?only_root=true')).body, ['cycling', 'running', 'skating']);
  const newcomer = await athlete();
  t.deepEqual((await get(newcomer, '/api/v1/profile/sports/')).body, []);
  t.deepEqual((await get(newcomer, '/api/v1/profile/sports/?only_root=true')).body, []);
  const bad = await get(alice, '/api/v1/profile/sports/?only_root=maybe');
  t.is(bad.status, 422);
  t.deepEqual(bad.body.detail[0].loc, ['query', 'only_root']);
});

const REST = { sports: [], avg_training_duration: 'PT0S', typical_training_duration: 'PT0S' };

test('template week: per weekday the sports by frequency, the mean and median daily totals of the 12 weeks before today', async (t) => {
  const res = await get(alice, '/api/v1/profile/template-week');
  t.is(res.status, 200);
  t.deepEqual(Object.keys(res.body), [...WEEKDAYS]);
  // Mondays: running on 3 days (600 + 900 + 300 s), cycling.road on 2 (1800 + 1200 s); totals 1800, 1800, 900, 300 and 8 × 0:
  // mean 4800 / 12 = 400 s; median of twelve with eight zeros = 0.
  t.deepEqual(res.body.monday, {
    sports: ['running', 'cycling.road'],
    avg_training_duration: 'PT6M40S',
    typical_training_duration: 'PT0S',
  });
  // Wednesdays: each sport on one day; running.trail is longest, the three of 600 s alphabetical. Totals 600 + 900 + 600 + 600 = 2700: mean 225 s.
  t.deepEqual(res.body.wednesday, {
    sports: ['running.trail', 'cycling+stationary', 'hiking', 'walking'],
    avg_training_duration: 'PT3M45S',
    typical_training_duration: 'PT0S',
  });
  // The swim of 85 days ago and today's row are outside the window; the Monday at 01:00+03:00 is not on Sunday.
  for (const day of ['tuesday', 'thursday', 'friday', 'saturday', 'sunday']) t.deepEqual(res.body[day], REST, day);
});

test("template week: a new user's weekdays count only the days since their first activity (an even count: the median is the mean of the middle two)", async (t) => {
  const res = await get(bob, '/api/v1/profile/template-week');
  t.is(res.status, 200);
  // Bob's first activity is on M[4] (local date): four Mondays count, totals 300, 1800, 0, 1200 → mean 3300 / 4 = 825 s,
  // median (300 + 1200) / 2 = 750 s. Running on three Mondays, cycling on one.
  t.deepEqual(res.body.monday, {
    sports: ['running', 'cycling'],
    avg_training_duration: 'PT13M45S',
    typical_training_duration: 'PT12M30S',
  });
  for (const day of WEEKDAYS.filter((d) => d !== 'monday')) t.deepEqual(res.body[day], REST, day);
  const newcomer = await athlete();
  const empty = await get(newcomer, '/api/v1/profile/template-week');
  t.is(empty.status, 200);
  t.deepEqual(empty.body, Object.fromEntries(WEEKDAYS.map((d) => [d, REST])));
});

// The pure aggregation. The window 2026-01-05 (a Monday) … 2026-03-29 (a Sunday) holds 84 days, 12 of each weekday.
const WINDOW = { fromDay: '2026-01-05', toDay: '2026-03-29' };
const row = (day: string, sport: string, seconds: number): TrainingDayRow => ({ day, sport, seconds });
const restWeek = (): TemplateWeek =>
  Object.fromEntries(WEEKDAYS.map((d) => [d, { ...REST, sports: [] as string[] }])) as unknown as TemplateWeek;

test('templateWeek: nothing at all gives every weekday [] and PT0S', (t) => {
  t.deepEqual(templateWeek([], WINDOW, null), restWeek());
  t.deepEqual(templateWeek([], WINDOW, '2025-12-01'), restWeek());
});

test('templateWeek: an odd count of days since the first activity; the median is the middle value', (t) => {
  // First activity on Monday 2026-03-09: Mondays 03-09, 03-16, 03-23 count (100, rest, 400).
  const week = templateWeek([row('2026-03-09', 'running', 100), row('2026-03-23', 'running', 400)], WINDOW, '2026-03-09');
  t.deepEqual(
    week.monday,
    { sports: ['running'], avg_training_duration: 'PT2M47S', typical_training_duration: 'PT1M40S' },
    'mean 500 / 3 = 166.7 → 167 s',
  );
  t.deepEqual(week.tuesday, REST);
});

test('templateWeek: an even count; the median is the mean of the two middle values; fractions round to whole seconds', (t) => {
  // All twelve Mondays count: seven with 10…70 s, five rest days. Sorted: 0 ×5, 10, 20, … → middle (10 + 20) / 2 = 15; mean 280 / 12 = 23.3.
  const mondays = [0, 1, 2, 3, 4, 5, 6].map((i) => row(plus('2026-01-05', 7 * i), 'cycling', 10 * (i + 1)));
  const week = templateWeek(mondays, WINDOW, '2025-06-01');
  t.deepEqual(week.monday, { sports: ['cycling'], avg_training_duration: 'PT23S', typical_training_duration: 'PT15S' });
  // A day's total sums its sports; 0.4 s rounds down, 0.6 s up.
  const fractions = templateWeek([row('2026-03-24', 'a', 5.2), row('2026-03-24', 'b', 6.2)], WINDOW, '2026-03-24');
  t.deepEqual(fractions.tuesday, { sports: ['b', 'a'], avg_training_duration: 'PT11S', typical_training_duration: 'PT11S' });
  const up = templateWeek([row('2026-03-24', 'a', 10.6)], WINDOW, '2026-03-24');
  t.is(up.tuesday.avg_training_duration, 'PT11S');
});

test('templateWeek: sports by number of days, then total duration, then alphabetically', (t) => {
  const wednesdays = ['2026-01-07', '2026-01-14', '2026-01-21', '2026-01-28'];
  const week = templateWeek(
    [
      row(wednesdays[0]!, 'cycling', 50),
      row(wednesdays[1]!, 'cycling', 50),
      row(wednesdays[0]!, 'running', 150),
      row(wednesdays[2]!, 'running', 150),
      row(wednesdays[3]!, 'hiking', 1000),
      row(wednesdays[3]!, 'cycling.road', 1000),
      row(wednesdays[2]!, 'yoga', 2000),
    ],
    WINDOW,
    '2026-01-01',
  );
  // running and cycling: 2 days each (300 s before 100 s); yoga, cycling.road, hiking: 1 day each (2000 s first, then alphabetical).
  t.deepEqual(week.wednesday.sports, ['running', 'cycling', 'yoga', 'cycling.road', 'hiking']);
  // Totals 200, 50, 2150, 2000 and eight rest days: mean 4400 / 12 = 366.7 → 367 s.
  t.is(week.wednesday.avg_training_duration, 'PT6M7S');
  t.is(week.wednesday.typical_training_duration, 'PT0S');
});

test('templateWeek: rows outside the window are ignored; a row before the given first day moves it back', (t) => {
  const week = templateWeek([row('2026-01-04', 'swimming', 999), row('2026-03-30', 'rowing', 999)], WINDOW, '2025-01-01');
  t.deepEqual(week, restWeek());
  // First day given as Monday 03-23, but there is training on Sunday 03-22: Sundays 03-22 and 03-29 count.
  const moved = templateWeek([row('2026-03-22', 'running', 60), row('2026-03-23', 'running', 30)], WINDOW, '2026-03-23');
  t.deepEqual(moved.sunday, { sports: ['running'], avg_training_duration: 'PT30S', typical_training_duration: 'PT30S' });
  t.deepEqual(
    moved.monday,
    { sports: ['running'], avg_training_duration: 'PT30S', typical_training_duration: 'PT30S' },
    'only Monday 03-23 counts',
  );
});

test('profile reads need a token and data:read', async (t) => {
  const writeOnly = await tokenFor(service, alice.user, ['data:write']);
  for (const path of ['/api/v1/profile/tags/', '/api/v1/profile/sports/', '/api/v1/profile/template-week']) {
    const none = await api(service, undefined, 'GET', path);
    t.is(none.status, 401, path);
    t.regex(none.headers.get('www-authenticate') ?? '', /invalid_token/);
    const res = await get(writeOnly, path);
    t.is(res.status, 403, path);
    t.regex(res.headers.get('www-authenticate') ?? '', /insufficient_scope/);
  }
});

test('the OpenAPI document describes the profile endpoints and the template-week rule', async (t) => {
  const doc = (await (await fetch(`${service.url}/openapi.json`)).json()) as any;
  for (const path of [
    '/api/v1/profile/tags/',
    '/api/v1/profile/sports/',
    '/api/v1/profile/template-week',
    '/api/v1/profile/intensity-duration-model',
  ]) {
    t.truthy(doc.paths[path]?.get, path);
  }
  const appMetadata = doc.paths['/api/v1/profile/app-metadata'];
  t.truthy(appMetadata.get && appMetadata.put && appMetadata.delete);
  t.deepEqual(appMetadata.put.security, [{ bearer: ['data:write'] }, { oauth2: ['data:write'] }]);
  t.truthy(appMetadata.put.responses['413']);
  const description: string = doc.paths['/api/v1/profile/template-week'].get.description;
  for (const part of ['84', 'local date', 'first activity', 'median', 'mean', 'distinct days', 'alphabetically', 'PT0S'])
    t.true(description.includes(part), part);
  t.deepEqual(doc.components.schemas.TemplateWeekResponse.required, [...WEEKDAYS]);
});

test('profile app metadata: an application sets, reads and deletes only its own object; limits; first-party credentials get 403', async (t) => {
  const owner = await createTestUser(service);
  const appA = await createTestApplication(service, owner);
  const appB = await createTestApplication(service, owner);
  const user = await athlete();
  const a = await tokenFor(service, user.user, ['data:read', 'data:write'], appA.id);
  const b = await tokenFor(service, user.user, ['data:read', 'data:write'], appB.id);
  const path = '/api/v1/profile/app-metadata';

  const nothing = await fetch(`${service.url}${path}`, { headers: { authorization: `Bearer ${a}` } });
  t.is(nothing.status, 200);
  t.regex(nothing.headers.get('content-type') ?? '', /application\/json/);
  t.is(await nothing.text(), 'null');

  const object = { zones: [100, 200, { ftp: 280 }], units: 'metric' };
  const put = await api(service, a, 'PUT', path, object);
  t.is(put.status, 200);
  t.deepEqual(put.body, object);
  t.deepEqual((await api(service, a, 'GET', path)).body, object);
  t.is((await api(service, b, 'GET', path)).body, null, "B does not see A's object");
  t.deepEqual((await api(service, a, 'PUT', path, { replaced: true })).body, { replaced: true }, 'PUT replaces');
  t.deepEqual((await api(service, a, 'GET', path)).body, { replaced: true });
  t.is((await api(service, b, 'PUT', path, { mine: 'B' })).status, 200);

  // Another user's profile under the same application is another object.
  const other = await athlete();
  const otherA = await tokenFor(service, other.user, ['data:read', 'data:write'], appA.id);
  t.is((await api(service, otherA, 'GET', path)).body, null);
  t.is((await api(service, otherA, 'PUT', path, { other: 1 })).status, 200);
  t.deepEqual((await api(service, a, 'GET', path)).body, { replaced: true });

  // Limits: 4 KB serialised (exactly 4096 bytes passes), 32 levels, objects only.
  t.is((await api(service, a, 'PUT', path, { blob: 'x'.repeat(3000) })).status, 200, 'about 3 KB');
  t.is((await api(service, a, 'PUT', path, { b: 'x'.repeat(4088) })).status, 200, 'exactly 4096 bytes');
  const tooBig = await api(service, a, 'PUT', path, { blob: 'x'.repeat(5000) });
  t.is(tooBig.status, 413);
  t.is(typeof tooBig.body.detail, 'string');
  t.is((await api(service, a, 'PUT', path, { b: 'x'.repeat(4089) })).status, 413, '4097 bytes');
  t.is((await api(service, a, 'GET', path)).body.b.length, 4088, 'a refused PUT leaves the stored object');
  let deep: unknown = 1;
  for (let i = 0; i < 32; i++) deep = { d: deep };
  t.is((await api(service, a, 'PUT', path, deep)).status, 200, '32 levels');
  deep = { d: deep };
  const tooDeep = await api(service, a, 'PUT', path, deep);
  t.is(tooDeep.status, 422, '33 levels');
  t.deepEqual(tooDeep.body.detail[0].loc, ['body']);
  for (const body of [[1, 2], '"text"', '42', 'null']) t.is((await api(service, a, 'PUT', path, body)).status, 422, JSON.stringify(body));

  // Credentials: a personal token is not an application; scopes per method.
  for (const method of ['GET', 'PUT', 'DELETE']) {
    t.is(
      (await api(service, user.token, method, path, method === 'PUT' ? { x: 1 } : undefined)).status,
      403,
      `${method} with a personal token`,
    );
    t.is((await api(service, undefined, method, path, method === 'PUT' ? { x: 1 } : undefined)).status, 401, `${method} without a token`);
  }
  const readOnlyApp = await tokenFor(service, user.user, ['data:read'], appA.id);
  t.is((await api(service, readOnlyApp, 'PUT', path, { x: 1 })).status, 403);
  t.is((await api(service, readOnlyApp, 'DELETE', path)).status, 403);
  const writeOnlyApp = await tokenFor(service, user.user, ['data:write'], appA.id);
  t.is((await api(service, writeOnlyApp, 'GET', path)).status, 403);

  // DELETE removes A's object only.
  t.is((await api(service, a, 'DELETE', path)).status, 204);
  t.is((await api(service, a, 'GET', path)).body, null);
  t.deepEqual((await api(service, b, 'GET', path)).body, { mine: 'B' }, "A's DELETE leaves B's object");
  t.deepEqual((await api(service, otherA, 'GET', path)).body, { other: 1 }, "and the other user's");
  t.is((await api(service, a, 'DELETE', path)).status, 204, 'deleting again is still 204');
});
