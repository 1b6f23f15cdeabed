import test from 'ava';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestApplication, createTestUser, tokenFor } from './helpers/users.ts';
import { api, uploadAndWait } from './helpers/activities.ts';
import { buildActivityFit } from './helpers/fit-builder.ts';
import { sql, type RawBuilder } from 'kysely';
import type { User } from '../db/database.ts';
import { activitiesContainingQuery, tracesWithinQuery } from '../db/traces.ts';

let service: TestService;

test.before(async () => {
  service = await startTestService({ workers: true });
});
test.after.always(async () => {
  await service?.close();
});

async function athlete() {
  const user = await createTestUser(service);
  return { user, token: await tokenFor(service, user, ['data:read', 'data:write']) };
}

const storedTraces = (user: User) => service.deps.db.selectFrom('traces').selectAll().where('user_id', '=', user.id).execute();

/** A 10-minute road ride with 3 laps of 200 s each, recorded at UTC+02:00. */
async function rideWithLaps(token: string, start: Date) {
  const bytes = buildActivityFit({
    sessions: [{ sport: 'cycling', subSport: 'road', start, seconds: 600, laps: 3 }],
    utcOffsetSeconds: 7200,
  });
  const [source] = await uploadAndWait(service, token, [{ name: `ride-${start.getTime()}.fit`, bytes }]);
  const activity = await api(service, token, 'GET', `/api/v1/activities/${source.activity_ids[0]}`);
  if (activity.status !== 200) throw new Error(`activity: ${activity.status}`);
  return activity.body;
}

test('POST creates a trace: 201 with every field, the UTC timestamp and the local time of the written offset; what is stored', async (t) => {
  const { user, token } = await athlete();
  const stepTest = await api(service, token, 'POST', '/api/v1/tests/', {
    sport: 'cycling',
    start: '2026-05-18T09:00:00+02:00',
    title: 'Step test',
  });
  t.is(stepTest.status, 201);
  const res = await api(service, token, 'POST', '/api/v1/traces/', {
    timestamp: '2026-05-18T17:32:10.5+02:00',
    test_id: stepTest.body.id,
    lactate: 2.4,
    rpe: 7,
    notes: 'Step 4',
    power: 260,
    speed: 9.5,
    heart_rate: 158,
    vo2: 48.2,
    tags: ['lab', 'step', 'lab'],
    sport: 'cycling.trainer',
  });
  t.is(res.status, 201);
  t.deepEqual(res.body, {
    id: res.body.id,
    timestamp: '2026-05-18T15:32:10.500Z',
    timestamp_local: '2026-05-18T17:32:10.500',
    test_id: stepTest.body.id,
    lactate: 2.4,
    rpe: 7,
    notes: 'Step 4',
    power: 260,
    speed: 9.5,
    heart_rate: 158,
    vo2: 48.2,
    tags: ['lab', 'step'],
    sport: 'cycling+stationary',
    lap: null,
    activity: null,
    test: stepTest.body,
    test_match: 'explicit',
    app_metadata: null,
  });
  const [row] = await storedTraces(user);
  t.is(row!.id, res.body.id);
  t.is(row!.time.toISOString(), '2026-05-18T15:32:10.500Z');
  t.is(row!.utc_offset_seconds, 7200);
  t.deepEqual(row!.tags, ['lab', 'step']);

  const minimal = await api(service, token, 'POST', '/api/v1/traces', { timestamp: '2026-05-18T06:00:00-04:30' });
  t.is(minimal.status, 201);
  t.like(minimal.body, {
    timestamp: '2026-05-18T10:30:00Z',
    timestamp_local: '2026-05-18T06:00:00',
    test_id: null,
    lactate: null,
    rpe: null,
    notes: null,
    power: null,
    tags: [],
    sport: null,
    test_match: null,
  });
  t.deepEqual((await api(service, token, 'GET', `/api/v1/traces/${minimal.body.id}`)).body, minimal.body);
});

test('validation: each rule answers 422 naming the field, and nothing is stored', async (t) => {
  const { user, token } = await athlete();
  const ok = { timestamp: '2026-05-18T10:00:00Z' };
  const cases: [Record<string, unknown>, (string | number)[], RegExp?][] = [
    [{ timestamp: '2026-05-18T10:00:00' }, ['body', 'timestamp'], /UTC offset/],
    [{ timestamp: '2026-02-30T10:00:00Z' }, ['body', 'timestamp']],
    [{ timestamp: 'yesterday' }, ['body', 'timestamp']],
    [{ timestamp: '0000-05-18T10:00:00Z' }, ['body', 'timestamp'], /0001–9999/],
    [{ timestamp: '9999-12-31T23:59:59-14:00' }, ['body', 'timestamp'], /0001–9999/],
    [{}, ['body', 'timestamp']],
    [{ ...ok, power: -1 }, ['body', 'power']],
    [{ ...ok, power: 250.5 }, ['body', 'power']],
    [{ ...ok, power: 3e10 }, ['body', 'power']],
    [{ ...ok, speed: -0.1 }, ['body', 'speed']],
    [{ ...ok, heart_rate: -5 }, ['body', 'heart_rate']],
    [{ ...ok, heart_rate: 150.2 }, ['body', 'heart_rate']],
    [{ ...ok, vo2: -1 }, ['body', 'vo2']],
    [{ ...ok, rpe: 6.5 }, ['body', 'rpe']],
    [{ ...ok, lactate: '2.1' }, ['body', 'lactate']],
    [{ ...ok, sport: 'Cycling Road!' }, ['body', 'sport']],
    [{ ...ok, tags: 'lab' }, ['body', 'tags']],
    [{ ...ok, tags: [''] }, ['body', 'tags', 0]],
    [{ ...ok, notes: 12 }, ['body', 'notes']],
    // Bounded by what an athlete can produce (the edges themselves are stored: the next test).
    [{ ...ok, power: 3001 }, ['body', 'power']],
    [{ ...ok, heart_rate: 251 }, ['body', 'heart_rate']],
    [{ ...ok, speed: 100.5 }, ['body', 'speed']],
    [{ ...ok, lactate: 50.1 }, ['body', 'lactate']],
    [{ ...ok, lactate: -0.1 }, ['body', 'lactate']],
    [{ ...ok, vo2: 150.1 }, ['body', 'vo2']],
    [{ ...ok, rpe: -1 }, ['body', 'rpe']],
    [{ ...ok, rpe: 121 }, ['body', 'rpe']],
    [{ ...ok, rpe: 1e300 }, ['body', 'rpe']],
  ];
  for (const [body, loc, msg] of cases) {
    const res = await api(service, token, 'POST', '/api/v1/traces/', body);
    t.is(res.status, 422, JSON.stringify(body));
    t.deepEqual(res.body.detail[0].loc, loc, JSON.stringify(body));
    if (msg) t.regex(res.body.detail[0].msg, msg);
  }
  const naive = await api(service, token, 'POST', '/api/v1/traces/', { timestamp: '2026-05-18T10:00:00' });
  t.is(naive.body.detail[0].type, 'value_error.datetime.naive');
  t.is((await api(service, token, 'POST', '/api/v1/traces/', 'not json')).status, 422);
  t.is((await api(service, token, 'POST', '/api/v1/traces/', [ok])).status, 422);
  t.is((await storedTraces(user)).length, 0);
});

test('the bounds of each measurement are inclusive: the largest values are stored as sent', async (t) => {
  const { token } = await athlete();
  const top = { power: 3000, heart_rate: 250, speed: 100, lactate: 50, vo2: 150, rpe: 120 };
  const res = await api(service, token, 'POST', '/api/v1/traces/', { timestamp: '2026-05-18T10:00:00Z', ...top });
  t.is(res.status, 201, JSON.stringify(res.body));
  const read = await api(service, token, 'GET', `/api/v1/traces/${res.body.id}`);
  for (const [field, value] of Object.entries(top)) t.is(read.body[field], value, field);
});

test('list: newest first, 100 by default, limit/offset, start/end as dates (local) or instants, sports with sub-sports, tags', async (t) => {
  const { token } = await athlete();
  const post = async (body: Record<string, unknown>) => {
    const res = await api(service, token, 'POST', '/api/v1/traces/', body);
    if (res.status !== 201) throw new Error(JSON.stringify(res.body));
    return res.body.id as string;
  };
  const road = await post({ timestamp: '2026-04-01T10:00:00Z', sport: 'cycling.road', tags: ['lab'] });
  const trainer = await post({ timestamp: '2026-04-02T23:30:00-05:00', sport: 'cycling+stationary+virtual', tags: ['home'] }); // local 04-02, UTC 04-03
  const run = await post({ timestamp: '2026-04-03T07:00:00+02:00', sport: 'running.trail', tags: ['lab', 'hills'] });
  const none = await post({ timestamp: '2026-04-04T12:00:00Z' });
  for (let i = 0; i < 101; i++) await post({ timestamp: new Date(Date.UTC(2025, 0, 1) + i * 60_000).toISOString() });

  const ids = async (query: string) => {
    const res = await api(service, token, 'GET', `/api/v1/traces/${query}`);
    t.is(res.status, 200, query);
    return res.body.map((x: { id: string }) => x.id);
  };
  const first = await api(service, token, 'GET', '/api/v1/traces/');
  t.is(first.body.length, 100);
  t.deepEqual(
    first.body.slice(0, 4).map((x: { id: string }) => x.id),
    [none, run, trainer, road],
  );
  t.is((await ids('?limit=1000')).length, 105);
  t.deepEqual(await ids('?limit=2&offset=1'), [run, trainer]);
  t.deepEqual(await ids('?start=2026-04-02&end=2026-04-03'), [run, trainer]);
  t.deepEqual(await ids('?start=2026-04-03T00:00:00Z&end=2026-04-03T23:59:59Z'), [run, trainer]);
  t.deepEqual(await ids('?sport=cycling'), [trainer, road]);
  t.deepEqual(await ids('?sport=cycling%2Bstationary'), [trainer]);
  t.deepEqual(await ids('?sport=running&sport=cycling.road'), [run, road]);
  t.deepEqual(await ids('?sports=running'), [run]);
  t.deepEqual(await ids('?tags=lab'), [run, road]);
  t.deepEqual(await ids('?tags=home,hills'), [run, trainer]);
  for (const bad of [
    '?limit=1001',
    '?limit=0',
    '?offset=-1',
    '?sport=Bad!',
    '?start=2026-13-01',
    '?start=0000-01-01',
    '?end=9999-12-31T23:00:00-14:00',
  ]) {
    t.is((await api(service, token, 'GET', `/api/v1/traces/${bad}`)).status, 422, bad);
  }
});

test('PUT replaces every field (omitted ones become null) and keeps app metadata; DELETE answers 204, then 404', async (t) => {
  const { user, token } = await athlete();
  const app = await createTestApplication(service, user);
  const appToken = await tokenFor(service, user, ['data:read', 'data:write'], app.id);
  const created = await api(service, token, 'POST', '/api/v1/traces/', {
    timestamp: '2026-05-18T10:00:00Z',
    lactate: 1.1,
    power: 150,
    tags: ['a'],
    sport: 'running',
    test_id: (await api(service, token, 'POST', '/api/v1/tests/', { sport: 'running', start: '2026-05-17T09:00:00Z' })).body.id,
  });
  const id = created.body.id;
  t.is((await api(service, appToken, 'PUT', `/api/v1/traces/${id}/app-metadata`, { step: 1 })).status, 200);

  const replaced = await api(service, appToken, 'PUT', `/api/v1/traces/${id}`, { timestamp: '2026-05-18T12:00:00+01:00', heart_rate: 140 });
  t.is(replaced.status, 200);
  t.like(replaced.body, {
    id,
    timestamp: '2026-05-18T11:00:00Z',
    timestamp_local: '2026-05-18T12:00:00',
    lactate: null,
    power: null,
    heart_rate: 140,
    tags: [],
    sport: null,
    test_id: null,
    test_match: null,
    app_metadata: { step: 1 },
  });
  const [row] = await storedTraces(user);
  t.is(row!.lactate, null);
  t.is(row!.heart_rate, 140);
  t.true(row!.updated_at.getTime() >= row!.created_at.getTime());

  const invalid = await api(service, token, 'PUT', `/api/v1/traces/${id}`, { timestamp: '2026-05-18T12:00:00', heart_rate: 140 });
  t.is(invalid.status, 422);
  t.is((await storedTraces(user))[0]!.time.toISOString(), '2026-05-18T11:00:00.000Z', 'a refused PUT changes nothing');

  for (const missing of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
    t.is((await api(service, token, 'PUT', `/api/v1/traces/${missing}`, { timestamp: '2026-05-18T12:00:00Z' })).status, 404);
    t.is((await api(service, token, 'GET', `/api/v1/traces/${missing}`)).status, 404);
    t.is((await api(service, token, 'DELETE', `/api/v1/traces/${missing}`)).status, 404);
  }

  const deleted = await api(service, token, 'DELETE', `/api/v1/traces/${id}`);
  t.is(deleted.status, 204);
  t.is(deleted.body, undefined);
  t.is((await api(service, token, 'GET', `/api/v1/traces/${id}`)).status, 404);
  t.is((await api(service, token, 'DELETE', `/api/v1/traces/${id}`)).status, 404);
  t.is((await storedTraces(user)).length, 0);
  t.is((await service.deps.db.selectFrom('trace_app_metadata').selectAll().where('trace_id', '=', id).execute()).length, 0);
});

test('a trace within an activity carries it and the lap containing it; the activity lists its traces; edges and other users', async (t) => {
  const { user, token } = await athlete();
  const start = new Date('2026-06-01T08:00:00Z');
  const ride = await rideWithLaps(token, start);
  t.is(ride.laps.length, 3);
  t.deepEqual(ride.traces, []);
  const at = (s: number) => new Date(start.getTime() + s * 1000).toISOString();
  const post = async (timestamp: string, extra: Record<string, unknown> = {}) =>
    (await api(service, token, 'POST', '/api/v1/traces/', { timestamp, ...extra })).body;

  const before = await post(at(-1));
  const atStart = await post(at(0), { lactate: 1.0 });
  const inLap2 = await post(at(300), { lactate: 2.0 });
  const onBoundary = await post(at(400)); // lap 2 ends and lap 3 starts here: it belongs to lap 3
  const atEnd = await post(at(600));
  const after = await post(at(601));

  const { laps, traces: _traces, ...summaryFields } = ride;
  for (const [trace, lap] of [
    [atStart, 0],
    [inLap2, 1],
    [onBoundary, 2],
    [atEnd, 2],
  ] as const) {
    t.is(trace.activity?.id, ride.id);
    t.deepEqual(trace.lap, laps[lap], `lap of ${trace.timestamp}`);
    // ActivitySummary inside a trace: the details-only fields are absent.
    const detailsOnly = {
      distance: undefined,
      devices: undefined,
      implausible_samples: undefined,
      timer_duration: undefined,
      moving_duration: undefined,
      device_summary: undefined,
      device_checks: undefined,
      dropped_records: undefined,
      ingest_version: undefined,
      time_in_zones: undefined,
      w_prime_balance_min: undefined,
    };
    // Training stress is read for lists and details, not for the activity inside a trace.
    t.like(trace.activity, { ...summaryFields, ...detailsOnly, laps: null, traces: null, training_stress: null });
  }
  for (const trace of [before, after]) {
    t.is(trace.activity, null);
    t.is(trace.lap, null);
  }

  const read = await api(service, token, 'GET', `/api/v1/activities/${ride.id}`);
  t.deepEqual(
    read.body.traces.map((x: { id: string }) => x.id),
    [atStart.id, inLap2.id, onBoundary.id, atEnd.id],
    'oldest first, edges included',
  );
  t.like(read.body.traces[1], { id: inLap2.id, lactate: 2, lap: laps[1], activity: { id: ride.id, traces: null } });
  const listed = await api(service, token, 'GET', '/api/v1/activities/');
  t.deepEqual(
    listed.body[0].traces.map((x: { id: string }) => x.id),
    [atStart.id, inLap2.id, onBoundary.id, atEnd.id],
  );
  t.deepEqual((await api(service, token, 'GET', '/api/v1/traces/?limit=1&offset=3')).body[0], inLap2);

  // Moving a trace out of the span unlinks it.
  const moved = await api(service, token, 'PUT', `/api/v1/traces/${inLap2.id}`, { timestamp: at(-3600) });
  t.is(moved.body.activity, null);
  t.is((await api(service, token, 'GET', `/api/v1/activities/${ride.id}`)).body.traces.length, 3);

  // Overlapping activities (a second device): the trace carries the later one; each activity lists it.
  const later = await rideWithLaps(token, new Date(start.getTime() + 100_000));
  const overlap = (await api(service, token, 'GET', `/api/v1/traces/${onBoundary.id}`)).body;
  t.is(overlap.activity.id, later.id);
  t.deepEqual(overlap.lap, later.laps[1]);
  t.true(
    (await api(service, token, 'GET', `/api/v1/activities/${ride.id}`)).body.traces.some((x: { id: string }) => x.id === onBoundary.id),
  );

  // Another user's trace at the same instant is not linked to this user's activity, nor listed in it.
  const other = await athlete();
  const theirs = await api(service, other.token, 'POST', '/api/v1/traces/', { timestamp: at(300) });
  t.is(theirs.body.activity, null);
  t.false(
    (await api(service, token, 'GET', `/api/v1/activities/${ride.id}`)).body.traces.some((x: { id: string }) => x.id === theirs.body.id),
  );

  // Deleting the activity unlinks the trace; the trace stays.
  t.is((await api(service, token, 'DELETE', `/api/v1/activities/${later.id}`)).status, 204);
  t.is((await api(service, token, 'GET', `/api/v1/traces/${onBoundary.id}`)).body.activity.id, ride.id);
  t.is((await storedTraces(user)).length, 6);
});

test("auth: no token 401; data:write alone writes but cannot read; data:read alone cannot write; another user's trace is 404", async (t) => {
  const { user, token } = await athlete();
  const writeOnly = await tokenFor(service, user, ['data:write']);
  const readOnly = await tokenFor(service, user, ['data:read']);
  const mine = (await api(service, token, 'POST', '/api/v1/traces/', { timestamp: '2026-05-18T10:00:00Z' })).body.id;

  t.is((await api(service, undefined, 'GET', '/api/v1/traces/')).status, 401);
  t.is((await api(service, undefined, 'POST', '/api/v1/traces/', { timestamp: '2026-05-18T10:00:00Z' })).status, 401);

  const written = await api(service, writeOnly, 'POST', '/api/v1/traces/', { timestamp: '2026-05-18T11:00:00Z' });
  t.is(written.status, 201);
  t.is((await api(service, writeOnly, 'PUT', `/api/v1/traces/${mine}`, { timestamp: '2026-05-18T10:30:00Z' })).status, 200);
  const denied = await api(service, writeOnly, 'GET', '/api/v1/traces/');
  t.is(denied.status, 403);
  t.regex(denied.headers.get('www-authenticate') ?? '', /insufficient_scope/);
  t.is((await api(service, writeOnly, 'GET', `/api/v1/traces/${mine}`)).status, 403);
  t.is((await api(service, writeOnly, 'DELETE', `/api/v1/traces/${written.body.id}`)).status, 204);

  t.is((await api(service, readOnly, 'POST', '/api/v1/traces/', { timestamp: '2026-05-18T12:00:00Z' })).status, 403);
  t.is((await api(service, readOnly, 'DELETE', `/api/v1/traces/${mine}`)).status, 403);
  t.is((await api(service, readOnly, 'GET', `/api/v1/traces/${mine}`)).status, 200);

  const other = await athlete();
  t.is((await api(service, other.token, 'GET', `/api/v1/traces/${mine}`)).status, 404);
  t.is((await api(service, other.token, 'PUT', `/api/v1/traces/${mine}`, { timestamp: '2026-05-18T10:00:00Z', power: 1 })).status, 404);
  t.is((await api(service, other.token, 'DELETE', `/api/v1/traces/${mine}`)).status, 404);
  t.deepEqual((await api(service, other.token, 'GET', '/api/v1/traces/')).body, []);
  t.is((await storedTraces(user)).length, 1);
  t.is((await storedTraces(user))[0]!.power, null, "another user's PUT changed nothing");
});

test('app metadata: an app token with data:write; each application sees only its own object, on the trace and inside activities', async (t) => {
  const { user, token } = await athlete();
  const [appA, appB] = [
    await createTestApplication(service, user, { name: 'A' }),
    await createTestApplication(service, user, { name: 'B' }),
  ];
  const tokenA = await tokenFor(service, user, ['data:read', 'data:write'], appA.id);
  const tokenB = await tokenFor(service, user, ['data:read', 'data:write'], appB.id);
  const start = new Date('2026-07-01T08:00:00Z');
  const ride = await rideWithLaps(token, start);
  const id = (await api(service, token, 'POST', '/api/v1/traces/', { timestamp: '2026-07-01T08:05:00Z' })).body.id;
  const path = `/api/v1/traces/${id}/app-metadata`;

  const put = await api(service, tokenA, 'PUT', path, { device: 'lactate-pro', nested: { ok: true } });
  t.is(put.status, 200);
  t.deepEqual(put.body, { device: 'lactate-pro', nested: { ok: true } });
  t.is((await api(service, tokenB, 'PUT', path, { b: 1 })).status, 200);

  t.deepEqual((await api(service, tokenA, 'GET', `/api/v1/traces/${id}`)).body.app_metadata, {
    device: 'lactate-pro',
    nested: { ok: true },
  });
  t.deepEqual((await api(service, tokenB, 'GET', '/api/v1/traces/')).body[0].app_metadata, { b: 1 });
  t.is((await api(service, token, 'GET', `/api/v1/traces/${id}`)).body.app_metadata, null, 'first-party credentials see none');
  t.deepEqual((await api(service, tokenA, 'GET', `/api/v1/activities/${ride.id}`)).body.traces[0].app_metadata, {
    device: 'lactate-pro',
    nested: { ok: true },
  });

  // Activity metadata shows on the trace's `activity` for the same application only.
  t.is((await api(service, tokenA, 'PUT', `/api/v1/activities/${ride.id}/app-metadata`, { ride: 'A' })).status, 200);
  t.deepEqual((await api(service, tokenA, 'GET', `/api/v1/traces/${id}`)).body.activity.app_metadata, { ride: 'A' });
  t.is((await api(service, tokenB, 'GET', `/api/v1/traces/${id}`)).body.activity.app_metadata, null);

  t.is((await api(service, token, 'PUT', path, { x: 1 })).status, 403, 'a personal token is not an application');
  t.is((await api(service, await tokenFor(service, user, ['data:read'], appA.id), 'PUT', path, { x: 1 })).status, 403);
  t.is((await api(service, tokenA, 'PUT', path, { blob: 'x'.repeat(1100) })).status, 413);
  t.is((await api(service, tokenA, 'PUT', path, [1, 2])).status, 422);
  t.deepEqual(
    (await api(service, tokenA, 'GET', `/api/v1/traces/${id}`)).body.app_metadata,
    { device: 'lactate-pro', nested: { ok: true } },
    'refused writes change nothing',
  );

  t.is((await api(service, tokenA, 'DELETE', path)).status, 204);
  t.is((await api(service, tokenA, 'GET', `/api/v1/traces/${id}`)).body.app_metadata, null);
  t.deepEqual((await api(service, tokenB, 'GET', `/api/v1/traces/${id}`)).body.app_metadata, { b: 1 }, "A's delete leaves B's");

  const other = await athlete();
  const otherApp = await tokenFor(service, other.user, ['data:read', 'data:write'], appA.id);
  t.is((await api(service, otherApp, 'PUT', path, { x: 1 })).status, 404);
  t.is((await api(service, otherApp, 'DELETE', path)).status, 404);
});

test('the traces of a page of activities, and the activity of each trace of a page, are looked up by key: no table is read in full, however much other users and the application hold', async (t) => {
  const { db } = service.deps;
  const { user, token } = await athlete();
  const app = await createTestApplication(service, user, { name: 'Coach of many' });
  const ride = await rideWithLaps(token, new Date('2026-08-01T08:00:00Z'));
  const traceId = (await api(service, token, 'POST', '/api/v1/traces/', { timestamp: '2026-08-01T08:05:00Z' })).body.id;
  const appToken = await tokenFor(service, user, ['data:read', 'data:write'], app.id);
  t.is((await api(service, appToken, 'PUT', `/api/v1/traces/${traceId}/app-metadata`, { mine: true })).status, 200);

  // Another athlete of the same application: 2,000 activities and 2,000 traces, each with the application's metadata.
  const other = await createTestUser(service);
  await sql`
    WITH s AS (INSERT INTO sources (user_id, type, origin, filename, content_sha256, size_bytes, status)
               VALUES (${other.id}, 'fit', 'manual_upload', 'many.fit', md5(${other.id}), 1, 'processed') RETURNING id)
    INSERT INTO activities (id, user_id, source_id, session_index, sport, start_time, end_time, utc_offset_seconds, metrics, samples)
    SELECT gen_random_uuid(), ${other.id}, s.id, g, 'cycling', timestamptz '2020-01-01' + g * interval '1 day',
           timestamptz '2020-01-01' + g * interval '1 day' + interval '1 hour', 0, '{}', 3600
    FROM s, generate_series(1, 2000) g`.execute(db);
  await sql`
    WITH t AS (INSERT INTO traces (user_id, time, utc_offset_seconds)
               SELECT ${other.id}, timestamptz '2020-01-01' + g * interval '1 day' + interval '10 minutes', 0 FROM generate_series(1, 2000) g RETURNING id)
    INSERT INTO trace_app_metadata (trace_id, application_id, data) SELECT id, ${app.id}, '{"theirs": true}' FROM t`.execute(db);
  // The user's own history: 500 earlier traces with the application's metadata, and a page of 50
  // activities: the ride and the 49 days before it.
  await sql`
    WITH t AS (INSERT INTO traces (user_id, time, utc_offset_seconds)
               SELECT ${user.id}, timestamptz '2024-01-01' + g * interval '1 day', 0 FROM generate_series(1, 500) g RETURNING id)
    INSERT INTO trace_app_metadata (trace_id, application_id, data) SELECT id, ${app.id}, '{"earlier": true}' FROM t`.execute(db);
  await sql`
    INSERT INTO activities (id, user_id, source_id, session_index, sport, start_time, end_time, utc_offset_seconds, metrics, samples)
    SELECT gen_random_uuid(), ${user.id}, source_id, g, sport, start_time - g * interval '1 day', end_time - g * interval '1 day', 0, '{}', 600
    FROM activities, generate_series(1, 49) g WHERE id = ${ride.id}`.execute(db);
  // (the traces of 2024 lie within none of them)
  await sql`ANALYZE activities, traces, trace_app_metadata`.execute(db);

  const page = await db.selectFrom('activities').select(['id', 'start_time', 'end_time']).where('user_id', '=', user.id).execute();
  t.is(page.length, 50);
  const fullScans = (await planNodes(tracesWithinQuery(user.id, app.id, page)))
    .filter((node) => node['Node Type'] === 'Seq Scan' || (/Index/.test(node['Node Type']) && !node['Index Cond']))
    .map((node) => `${node['Node Type']} on ${node['Relation Name']}`);
  t.deepEqual(fullScans, [], 'every table is read by key');

  // A page of the trace list: each trace's containing activity, bounded by the user's longest one,
  // which is one step down its index rather than a read of every activity the user has.
  const traces = await db
    .selectFrom('traces')
    .select(['id', 'time'])
    .where('user_id', '=', user.id)
    .orderBy('time', 'desc')
    .limit(100)
    .execute();
  const nodes = await planNodes(activitiesContainingQuery(user.id, traces));
  t.deepEqual(
    nodes
      .filter((n) => n['Relation Name'] === 'activities')
      .map((n) => n['Index Name'] ?? n['Node Type'])
      .sort(),
    ['activities_user_span_idx', 'activities_user_start_idx'],
    "the longest activity from its index; each trace's activity from a range of (user_id, start_time)",
  );

  // What the application reads: its own metadata on the trace inside the activity, nothing of the other athlete.
  const list = await api(service, appToken, 'GET', '/api/v1/activities/?limit=50');
  t.is(list.status, 200);
  const traced = list.body.filter((a: { traces: unknown[] }) => a.traces.length);
  t.is(list.body.length, 50);
  t.deepEqual(
    traced.map((a: { id: string; traces: { id: string; app_metadata: unknown }[] }) => [a.id, a.traces.map((x) => [x.id, x.app_metadata])]),
    [[ride.id, [[traceId, { mine: true }]]]],
  );
});

/** Every node of the plan PostgreSQL chooses for `query`. */
async function planNodes(query: RawBuilder<unknown>): Promise<PlanNode[]> {
  const { rows } = await sql<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>`EXPLAIN (FORMAT JSON) ${query}`.execute(service.deps.db);
  const nodes: PlanNode[] = [];
  const walk = (node: PlanNode) => {
    nodes.push(node);
    for (const child of node.Plans ?? []) walk(child);
  };
  walk(rows[0]!['QUERY PLAN'][0].Plan);
  return nodes;
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Plans?: PlanNode[];
}

test('OpenAPI lists every trace operation with TraceDetails and TraceCreateOrUpdate', async (t) => {
  const doc: any = await (await fetch(`${service.url}/openapi.json`)).json();
  for (const [path, methods] of [
    ['/api/v1/traces/', ['get', 'post']],
    ['/api/v1/traces/{trace_id}', ['get', 'put', 'delete']],
    ['/api/v1/traces/{trace_id}/app-metadata', ['put', 'delete']],
  ] as const) {
    for (const method of methods) t.truthy(doc.paths[path]?.[method], `${method} ${path}`);
  }
  t.truthy(doc.components.schemas.TraceDetails);
  t.truthy(doc.components.schemas.TraceCreateOrUpdate);
  t.is(doc.paths['/api/v1/traces/'].post.responses['201'].content['application/json'].schema.$ref, '#/components/schemas/TraceDetails');
  t.regex(JSON.stringify(doc.components.schemas.ActivitySummary.properties.traces), /TraceDetails/);
});
