import test from 'ava';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestApplication, createTestUser, tokenFor } from './helpers/users.ts';
import { api, uploadAndWait } from './helpers/activities.ts';
import { buildActivityFit } from './helpers/fit-builder.ts';
import { createTrace, type TraceFields } from '../db/traces.ts';

/**
 * /api/v1/tests… as SweatStack's Python client calls it (`client.tests`: list, retrieve, create,
 * replace, delete, app_metadata): its bodies carry every field, `None` as null, and `results` as a
 * model dump (every member, unset ones null); traces carry their test both ways.
 */

let service: TestService;
test.before(async () => {
  service = await startTestService({ workers: true });
});
test.after.always(() => service?.close());

async function athlete() {
  const user = await createTestUser(service);
  return { user, token: await tokenFor(service, user, ['data:read', 'data:write']) };
}

const EMPTY_TRACE: TraceFields = {
  time: new Date(0),
  utc_offset_seconds: 0,
  test_id: null,
  lactate: null,
  rpe: null,
  notes: null,
  power: null,
  speed: null,
  heart_rate: null,
  vo2: null,
  tags: [],
  sport: null,
};

const NULL_MARKER = { heart_rate: null, lactate: null, power: null, speed: null, vo2: null };
/** TestResults as pydantic's model_dump writes it: every member, the unset ones null. */
function dumpedResults(set: Record<string, unknown>) {
  const members = ['critical_power', 'critical_speed', 'd_prime', 'economy', 'efficiency', 'fatmax', 'first_threshold', 'heart_rate_max'];
  const more = ['lt1', 'lt2', 'mlss', 'second_threshold', 'vlamax', 'vo2max', 'vo2peak', 'vt1', 'vt2', 'w_prime'];
  return { ...Object.fromEntries([...members, ...more].map((m) => [m, null])), ...set };
}

/** The client's `_body`: every field, None as null. */
const clientBody = (b: Record<string, unknown>) => ({ title: null, end: null, results: null, tags: null, ...b });

test('create as the client sends it: 201 TestSummary, end defaulting to start + 3 h, results as written; read back, listed', async (t) => {
  const { token } = await athlete();
  const results = dumpedResults({
    lt1: { ...NULL_MARKER, power: 210 },
    lt2: { ...NULL_MARKER, power: 285, heart_rate: 172 },
    vo2max: 61.5,
  });
  const res = await api(
    service,
    token,
    'POST',
    '/api/v1/tests/',
    clientBody({ sport: 'cycling', start: '2026-05-01T09:00:00+02:00', title: 'Lactate step test', results }),
  );
  t.is(res.status, 201);
  t.deepEqual(res.body, {
    id: res.body.id,
    sport: 'cycling',
    start: '2026-05-01T07:00:00Z',
    start_local: '2026-05-01T09:00:00',
    end: '2026-05-01T10:00:00Z',
    end_local: '2026-05-01T12:00:00',
    tags: [],
    title: 'Lactate step test',
    created_by: null,
    app_metadata: null,
    results: { lt1: { ...NULL_MARKER, power: 210 }, lt2: { ...NULL_MARKER, power: 285, heart_rate: 172 }, vo2max: 61.5 },
  });
  const read = await api(service, token, 'GET', `/api/v1/tests/${res.body.id}`);
  t.is(read.status, 200);
  t.deepEqual(read.body, { ...res.body, traces: [], activities: [] });
  const list = await api(service, token, 'GET', '/api/v1/tests/?limit=50&offset=0');
  t.deepEqual(list.body, [res.body]);
});

test('the list: newest first, sport (any), tags (all), created_by, dates, pages of at most 50; only the caller’s', async (t) => {
  const { user, token } = await athlete();
  const app = await createTestApplication(service, user);
  const appToken = await tokenFor(service, user, ['data:read', 'data:write'], app.id);
  const post = async (tok: string, b: Record<string, unknown>) => (await api(service, tok, 'POST', '/api/v1/tests/', clientBody(b))).body;
  const a = await post(token, { sport: 'cycling', start: '2026-03-01T09:00:00Z', tags: ['lab', 'spring'] });
  const b = await post(appToken, { sport: 'running', start: '2026-04-01T09:00:00Z', tags: ['lab'] });
  const c = await post(token, { sport: 'cycling.road', start: '2026-05-01T09:00:00Z' });
  const other = await athlete();
  await post(other.token, { sport: 'cycling', start: '2026-05-02T09:00:00Z' });
  t.is(b.created_by, app.id, "created_by is the creating application's client id");

  const ids = async (q: string) => ((await api(service, token, 'GET', `/api/v1/tests/${q}`)).body as { id: string }[]).map((x) => x.id);
  t.deepEqual(await ids(''), [c.id, b.id, a.id]);
  t.deepEqual(await ids('?sport=cycling'), [c.id, a.id], 'a sport matches its sub-sports');
  t.deepEqual(await ids('?sport=running&sport=cycling.road'), [c.id, b.id]);
  t.deepEqual(await ids('?tags=lab&tags=spring'), [a.id], 'every tag required');
  t.deepEqual(await ids('?tags=lab'), [b.id, a.id]);
  t.deepEqual(await ids(`?created_by=${app.id}`), [b.id]);
  t.deepEqual(await ids('?start=2026-03-15&end=2026-04-30'), [b.id]);
  t.deepEqual(await ids('?limit=1&offset=1'), [b.id]);
  t.is((await api(service, token, 'GET', '/api/v1/tests/?limit=51')).status, 422);
});

test('traces belong to a test both ways: explicit by test_id, window by time; auto and linked; the activities it overlaps', async (t) => {
  const { token } = await athlete();
  const start = new Date('2026-05-18T08:00:00Z');
  const bytes = buildActivityFit({
    sessions: [{ sport: 'cycling', subSport: 'road', start, seconds: 600, laps: 1 }],
    utcOffsetSeconds: 7200,
  });
  const [source] = await uploadAndWait(service, token, [{ name: 'ride.fit', bytes }]);
  const made = await api(
    service,
    token,
    'POST',
    '/api/v1/tests/',
    clientBody({ sport: 'cycling', start: '2026-05-18T10:00:00+02:00', end: '2026-05-18T11:00:00+02:00' }),
  );
  const testId = made.body.id;
  const trace = async (b: Record<string, unknown>) => (await api(service, token, 'POST', '/api/v1/traces/', b)).body;
  const inWindow = await trace({ timestamp: '2026-05-18T08:05:00Z', lactate: 1.4, power: 150 });
  const linkedElsewhere = await trace({ timestamp: '2026-05-17T08:00:00Z', lactate: 0.9, test_id: testId });
  const outside = await trace({ timestamp: '2026-05-18T12:00:00Z', lactate: 1.1 });
  t.is(inWindow.test_match, 'window');
  t.is(inWindow.test.id, testId);
  t.is(linkedElsewhere.test_match, 'explicit');
  t.is(outside.test, null);
  t.is(outside.test_match, null);

  const auto = await api(service, token, 'GET', `/api/v1/tests/${testId}`);
  t.deepEqual(
    auto.body.traces.map((x: { id: string }) => x.id),
    [linkedElsewhere.id, inWindow.id],
  );
  t.deepEqual(
    auto.body.activities.map((x: { id: string }) => x.id),
    source.activity_ids,
  );
  const linked = await api(service, token, 'GET', `/api/v1/tests/${testId}?traces=linked`);
  t.deepEqual(
    linked.body.traces.map((x: { id: string }) => x.id),
    [linkedElsewhere.id],
  );
  const activity = await api(service, token, 'GET', `/api/v1/activities/${source.activity_ids[0]}`);
  t.is(activity.body.traces[0].test.id, testId, "an activity's traces carry their test too");
  t.is((await api(service, token, 'GET', `/api/v1/tests/${testId}?traces=all`)).status, 422);
});

test('replace clears what the body omits, keeps the creator; delete unlinks the traces; another user’s test is a 404 everywhere', async (t) => {
  const { token } = await athlete();
  const made = await api(
    service,
    token,
    'POST',
    '/api/v1/tests/',
    clientBody({ sport: 'cycling', start: '2026-06-01T09:00:00Z', title: 'Ramp', tags: ['x'], results: { vo2max: 60 } }),
  );
  const id = made.body.id;
  const trace = await api(service, token, 'POST', '/api/v1/traces/', { timestamp: '2026-01-01T00:00:00Z', lactate: 2, test_id: id });

  const other = await athlete();
  for (const [method, body] of [['GET'], ['PUT', clientBody({ sport: 'running', start: '2026-06-01T09:00:00Z' })], ['DELETE']] as const)
    t.is((await api(service, other.token, method, `/api/v1/tests/${id}`, body)).status, 404, `${method} of another user's test`);
  t.is((await api(service, other.token, 'POST', '/api/v1/traces/', { timestamp: '2026-01-01T00:00:00Z', test_id: id })).status, 422);
  t.is((await api(service, token, 'GET', '/api/v1/tests/not-a-uuid')).status, 404);

  const replaced = await api(service, token, 'PUT', `/api/v1/tests/${id}`, clientBody({ sport: 'running', start: '2026-06-01T09:00:00Z' }));
  t.is(replaced.status, 200);
  t.like(replaced.body, { id, sport: 'running', title: null, tags: [], results: null, end: '2026-06-01T12:00:00Z', created_by: null });

  t.is((await api(service, token, 'DELETE', `/api/v1/tests/${id}`)).status, 204);
  t.is((await api(service, token, 'GET', `/api/v1/tests/${id}`)).status, 404);
  t.is((await api(service, token, 'DELETE', `/api/v1/tests/${id}`)).status, 404);
  const kept = await api(service, token, 'GET', `/api/v1/traces/${trace.body.id}`);
  t.like(kept.body, { test_id: null, test: null, test_match: null, lactate: 2 });
});

test('bad input: 422 naming the field, and nothing stored', async (t) => {
  const { user, token } = await athlete();
  const ok = { sport: 'cycling', start: '2026-05-01T09:00:00Z' };
  const cases: [Record<string, unknown>, (string | number)[]][] = [
    [{ ...ok, end: '2026-05-01T08:00:00Z' }, ['body', 'end']],
    [{ ...ok, sport: 'underwater-hockey-on-mars' }, ['body', 'sport']],
    [{ ...ok, start: '2026-05-01T09:00:00' }, ['body', 'start']],
    [{ sport: 'cycling' }, ['body', 'start']],
    [{ ...ok, results: { lt1: 210 } }, ['body', 'results', 'lt1']],
    [{ ...ok, results: { vo2max: { power: 1 } } }, ['body', 'results', 'vo2max']],
    [{ ...ok, results: { lt1: { lactate: -1 } } }, ['body', 'results', 'lt1', 'lactate']],
    [{ ...ok, results: { lt2: { lactate: 1e308 } } }, ['body', 'results', 'lt2', 'lactate']],
    [{ ...ok, results: { lt3: { power: 1 } } }, ['body', 'results']],
    [{ ...ok, title: 'x'.repeat(201) }, ['body', 'title']],
    [{ ...ok, tags: Array.from({ length: 51 }, (_, i) => `t${i}`) }, ['body', 'tags']],
  ];
  for (const [body, loc] of cases) {
    const res = await api(service, token, 'POST', '/api/v1/tests/', body);
    t.is(res.status, 422, JSON.stringify(body).slice(0, 80));
    t.true(
      (res.body.detail as { loc: unknown[] }[]).some((d) => JSON.stringify(d.loc) === JSON.stringify(loc)),
      `${JSON.stringify(loc)} in ${JSON.stringify(res.body.detail)}`,
    );
  }
  const stored = await service.deps.db.selectFrom('tests').select('id').where('user_id', '=', user.id).execute();
  t.deepEqual(stored, []);
});

test('app metadata on a test: per application, in its reads; first-party tokens have none', async (t) => {
  const { user, token } = await athlete();
  const app = await createTestApplication(service, user);
  const appToken = await tokenFor(service, user, ['data:read', 'data:write'], app.id);
  const id = (await api(service, token, 'POST', '/api/v1/tests/', clientBody({ sport: 'cycling', start: '2026-05-01T09:00:00Z' }))).body.id;
  const put = await api(service, appToken, 'PUT', `/api/v1/tests/${id}/app-metadata`, { zone_model: 'lt' });
  t.is(put.status, 200);
  t.deepEqual((await api(service, appToken, 'GET', `/api/v1/tests/${id}`)).body.app_metadata, { zone_model: 'lt' });
  t.deepEqual((await api(service, appToken, 'GET', '/api/v1/tests/')).body[0].app_metadata, { zone_model: 'lt' });
  t.is((await api(service, token, 'GET', `/api/v1/tests/${id}`)).body.app_metadata, null);
  t.is((await api(service, appToken, 'DELETE', `/api/v1/tests/${id}/app-metadata`)).status, 204);
  t.is((await api(service, appToken, 'GET', `/api/v1/tests/${id}`)).body.app_metadata, null);
});

test('a test_id written before tests were stored stays: it names no test, and a replace sending it back keeps it; a new one is 422', async (t) => {
  const { user, token } = await athlete();
  const legacy = await createTrace(
    service.deps.db,
    user.id,
    { ...EMPTY_TRACE, time: new Date('2026-02-01T10:00:00Z'), test_id: 'lab-2025' },
    new Date(),
  );
  const read = await api(service, token, 'GET', `/api/v1/traces/${legacy.id}`);
  t.like(read.body, { test_id: 'lab-2025', test: null, test_match: null });
  const replaced = await api(service, token, 'PUT', `/api/v1/traces/${legacy.id}`, {
    timestamp: '2026-02-01T10:00:00Z',
    lactate: 3,
    test_id: 'lab-2025',
  });
  t.is(replaced.status, 200);
  t.like(replaced.body, { test_id: 'lab-2025', lactate: 3, test: null });
  const renamed = await api(service, token, 'PUT', `/api/v1/traces/${legacy.id}`, {
    timestamp: '2026-02-01T10:00:00Z',
    test_id: 'lab-2026',
  });
  t.is(renamed.status, 422);
  t.is((await api(service, token, 'POST', '/api/v1/traces/', { timestamp: '2026-02-01T10:00:00Z', test_id: 'lab-2025' })).status, 422);
  t.is((await api(service, token, 'PUT', '/api/v1/traces/not-a-uuid', { timestamp: '2026-02-01T10:00:00Z' })).status, 404);
});
