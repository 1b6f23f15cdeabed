import test from 'ava';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestUser, tokenFor } from './helpers/users.ts';
import { api, uploadAndWait } from './helpers/activities.ts';
import { buildActivityFit } from './helpers/fit-builder.ts';
import { rmSync } from 'node:fs';
import { sampleKey } from '../lib/object-store.ts';
import { objectFile } from '../lib/object-store-local.ts';
import { agrees, DEMO, DEMO_POWER_PRINTED, demoPower, LTP1_TOLERANCE, README, tolerance } from './helpers/lab-demos.ts';

/**
 * GET /api/v1/tests/{id}/analysis and its accept, end to end: traces and a FIT ride stored through the
 * API, the analysis compared with the published outputs of lactater and cyclingtools on their own demo
 * data (test/helpers/lab-demos.ts names the sources), and the chosen values kept in the test's results.
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

async function newTest(token: string, body: Record<string, unknown>) {
  const res = await api(service, token, 'POST', '/api/v1/tests/', body);
  if (res.status !== 201) throw new Error(`create test: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as string;
}

async function trace(token: string, body: Record<string, unknown>) {
  const res = await api(service, token, 'POST', '/api/v1/traces/', body);
  if (res.status !== 201) throw new Error(`create trace: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as string;
}

const at = (start: string, minutes: number) => new Date(Date.parse(start) + minutes * 60_000).toISOString();

/** lactater's demo test as an athlete writes it: one trace per step, 3 minutes apart, plus a mid-step sample and a recovery sample. */
async function lactateDemoTest(token: string) {
  const start = '2026-04-01T09:00:00Z';
  const id = await newTest(token, { sport: 'cycling.road', start, end: at(start, 90), title: 'Step test' });
  const early = await trace(token, { timestamp: at(start, 7.5), lactate: 1.6, power: 100, heart_rate: 150 });
  const stepIds: string[] = [];
  for (const [i, s] of DEMO.entries())
    stepIds.push(await trace(token, { timestamp: at(start, 3 * i), lactate: s.lactate, power: s.intensity, heart_rate: s.heartRate }));
  const recovery = await trace(token, { timestamp: at(start, 30), lactate: 7.9, power: 50, heart_rate: 150 });
  return { id, early, stepIds, recovery };
}

test("a lactate step test: the steps chosen from the traces, every method as lactater's README prints it", async (t) => {
  const { token } = await athlete();
  const demo = await lactateDemoTest(token);
  const res = await api(service, token, 'GET', `/api/v1/tests/${demo.id}/analysis?include_baseline=true&heart_rate=regression`);
  t.is(res.status, 200, JSON.stringify(res.body));
  const a = res.body;
  t.is(a.metric, 'power');
  t.deepEqual(a.options, { fit: '3rd degree polynomial', include_baseline: true, loglog_restrainer: 1, heart_rate: 'regression' });
  t.deepEqual(
    a.steps.map((s: { trace_id: string; intensity: number; resting: boolean }) => [s.trace_id, s.intensity, s.resting]),
    DEMO.map((s, i) => [demo.stepIds[i], s.intensity, i === 0]),
  );
  t.deepEqual(a.ignored, [
    { trace_id: demo.early, reason: 'a later sample at the same intensity replaces it' },
    { trace_id: demo.recovery, reason: 'power below the step before it (a recovery or cool-down sample)' },
  ]);
  t.deepEqual(
    a.lactate.map((m: { method: string }) => m.method),
    README.map(([m]) => m),
  );
  for (const [method, intensity, lactate, heartRate] of README) {
    const m = a.lactate.find((x: { method: string }) => x.method === method);
    t.is(m.reason, null, method);
    const tol = method === 'LTP1' ? LTP1_TOLERANCE : tolerance(intensity);
    t.true(Math.abs(m.marker.power - Number(intensity)) <= tol, `${method} power ${m.marker.power} vs ${intensity}`);
    t.true(Math.abs(m.marker.lactate - Number(lactate)) <= tolerance(lactate), `${method} lactate ${m.marker.lactate} vs ${lactate}`);
    t.is(m.marker.heart_rate, heartRate, method);
  }
  t.deepEqual(a.efforts, []);
  t.true(a.critical.every((c: { reason: string | null }) => c.reason?.includes('found none')));
  t.deepEqual(a.maxima, { heart_rate_max: { value: 198, reason: null }, vo2max: { value: null, reason: 'no trace of the test has vo2' } });

  // Without the options: the fit leaves the resting sample out; every method still applies.
  const plain = await api(service, token, 'GET', `/api/v1/tests/${demo.id}/analysis`);
  t.is(plain.status, 200);
  t.true(plain.body.lactate.every((m: { reason: string | null }) => m.reason === null));
});

/** cyclingtools' demo efforts ridden in one activity: a warm-up, then each effort as a lap with 300 s at 100 W between them. */
function criticalPowerRide(start: Date) {
  const segments: [number, number][] = [[300, 100]];
  demoPower.tte.forEach((duration, i) => segments.push([duration, demoPower.po[i]!], [300, 100]));
  const lapStarts: number[] = [];
  const power: number[] = [];
  for (const [duration, watts] of segments) {
    lapStarts.push(power.length);
    for (let s = 0; s < duration; s++) power.push(watts);
  }
  const hardest = power.length - 300 - 45; // 45 s at 185 bpm at the end of the last effort
  const bytes = buildActivityFit({
    sessions: [
      {
        sport: 'cycling',
        subSport: 'road',
        start,
        seconds: power.length,
        lapStarts,
        record: (i) => ({
          power: power[i]!,
          heartRate: i >= hardest && i < hardest + 45 ? 185 : 140,
          cadence: 90,
          speed: 9,
          distance: i * 9,
        }),
      },
    ],
    utcOffsetSeconds: 3600,
  });
  return { bytes, seconds: power.length };
}

test("critical power from a test's laps: the five efforts found, the four models as cyclingtools' README prints them; accepted into results", async (t) => {
  const { token } = await athlete();
  const start = new Date('2026-04-08T08:00:00Z');
  const ride = criticalPowerRide(start);
  const [source] = await uploadAndWait(service, token, [{ name: 'cp.fit', bytes: ride.bytes }]);
  const activityId = source!.activity_ids[0];
  const id = await newTest(token, {
    sport: 'cycling',
    start: '2026-04-08T07:59:00Z',
    end: at(start.toISOString(), ride.seconds / 60 + 1),
    results: { vo2max: 61 },
  });
  const res = await api(service, token, 'GET', `/api/v1/tests/${id}/analysis`);
  t.is(res.status, 200, JSON.stringify(res.body));
  t.deepEqual(
    res.body.efforts.map((e: { activity_id: string; duration: number; value: number }) => [e.activity_id, e.duration, e.value]),
    demoPower.tte.map((d, i) => [activityId, d, demoPower.po[i]]),
  );
  t.is(res.body.efforts[0].start, '2026-04-08T08:05:00Z');
  const fits = res.body.critical.map((c: Record<string, number | null>) => ({
    model: c.model,
    cp: c.critical_intensity,
    cpSe: c.critical_intensity_se,
    wPrime: c.work_capacity,
    wPrimeSe: c.work_capacity_se,
    pmax: c.max_intensity,
    pmaxSe: c.max_intensity_se,
    r2: c.r2,
    see: c.see,
  }));
  t.deepEqual(
    fits.flatMap((f: Parameters<typeof agrees>[0], i: number) => agrees(f, DEMO_POWER_PRINTED[i]!, 1)),
    [],
  );
  t.deepEqual(res.body.maxima.heart_rate_max, { value: 185, reason: null });

  // The same efforts by naming their durations.
  const named = await api(service, token, 'GET', `/api/v1/tests/${id}/analysis?durations=1361,100,172,434,857`);
  t.deepEqual(
    named.body.efforts.map((e: { duration: number; value: number }) => [e.duration, e.value]),
    demoPower.tte.map((d, i) => [d, demoPower.po[i]]),
  );

  const accepted = await api(service, token, 'POST', `/api/v1/tests/${id}/analysis/accept`, {
    critical_power: 'three-parameter',
    w_prime: 'three-parameter',
    heart_rate_max: 'highest',
  });
  t.is(accepted.status, 200, JSON.stringify(accepted.body));
  const three = res.body.critical[0];
  t.deepEqual(accepted.body.results, {
    vo2max: 61,
    critical_power: three.critical_intensity,
    w_prime: three.work_capacity,
    heart_rate_max: 185,
  });

  // A method that does not apply names its member, and nothing is written.
  const refused = await api(service, token, 'POST', `/api/v1/tests/${id}/analysis/accept`, { lt1: 'LTP1', critical_speed: 'hyperbolic' });
  t.is(refused.status, 422);
  const problems = refused.body.detail.map((d: { loc: string[]; msg: string }) => [d.loc.join('.'), d.msg]);
  t.deepEqual(problems, [
    ['body.lt1', 'LTP1 does not apply: the 3rd degree polynomial fit needs at least 4 steps, got 0'],
    ['body.critical_speed', "the test's efforts are of power, not speed"],
  ]);
  const read = await api(service, token, 'GET', `/api/v1/tests/${id}`);
  t.deepEqual(read.body.results, accepted.body.results);
});

test('a lactate threshold accepted as a Marker; the test_updated event written; other members kept', async (t) => {
  const { user, token } = await athlete();
  const demo = await lactateDemoTest(token);
  const res = await api(service, token, 'POST', `/api/v1/tests/${demo.id}/analysis/accept?include_baseline=true`, {
    lt1: 'LTP1',
    lt2: 'OBLA 4.0',
  });
  t.is(res.status, 200, JSON.stringify(res.body));
  const analysis = await api(service, token, 'GET', `/api/v1/tests/${demo.id}/analysis?include_baseline=true`);
  const marker = (method: string) => {
    const m = analysis.body.lactate.find((x: { method: string }) => x.method === method).marker;
    return { power: m.power, lactate: m.lactate, heart_rate: m.heart_rate };
  };
  t.deepEqual(res.body.results, { lt1: marker('LTP1'), lt2: marker('OBLA 4.0') });
  t.is(res.body.results.lt2.lactate, 4);
  const events = await service.deps.db
    .selectFrom('events')
    .select(['type', 'resource_id'])
    .where('user_id', '=', user.id)
    .where('type', '=', 'test_updated')
    .execute();
  t.deepEqual(events, [{ type: 'test_updated', resource_id: demo.id }]);
});

test('analysis refusals: bad options are 422 naming them, another user’s test is 404, a read-only token cannot accept, a bad choice is 422', async (t) => {
  const { user, token } = await athlete();
  const demo = await lactateDemoTest(token);
  const path = `/api/v1/tests/${demo.id}/analysis`;
  for (const [query, name] of [
    ['loglog_restrainer=1e308', 'loglog_restrainer'],
    ['loglog_restrainer=2', 'loglog_restrainer'],
    ['loglog_restrainer=NaN', 'loglog_restrainer'],
    ['loglog_restrainer=0x1', 'loglog_restrainer'],
    ['loglog_restrainer=-0', 'loglog_restrainer'],
    ['fit=cubic', 'fit'],
    ['include_baseline=yes', 'include_baseline'],
    ['durations=99999999999999999999', 'durations'],
    ['durations=5', 'durations'],
    [`durations=${Array.from({ length: 21 }, (_, i) => 60 + i).join(',')}`, 'durations'],
  ] as const) {
    const res = await api(service, token, 'GET', `${path}?${query}`);
    t.is(res.status, 422, query);
    t.deepEqual(res.body.detail[0].loc, ['query', name], query);
  }
  const other = await athlete();
  t.is((await api(service, other.token, 'GET', path)).status, 404);
  t.is((await api(service, other.token, 'POST', `${path}/accept`, { lt1: 'LTP1' })).status, 404);
  t.is((await api(service, token, 'GET', '/api/v1/tests/not-a-uuid/analysis')).status, 404);
  const readOnly = await tokenFor(service, user, ['data:read']);
  t.is((await api(service, readOnly, 'POST', `${path}/accept`, { lt1: 'LTP1' })).status, 403);
  for (const body of [{}, { lt1: 'LTP9' }, { vo3max: 'highest' }, { heart_rate_max: 'lowest' }, { lt1: 1e308 }]) {
    const res = await api(service, token, 'POST', `${path}/accept`, body);
    t.is(res.status, 422, JSON.stringify(body));
  }
  t.is((await api(service, token, 'GET', `/api/v1/tests/${demo.id}`)).body.results, null);
});

test('a test links at most 1,000 traces (the next is 422 naming test_id); beyond 1,000 traces the analysis says why it has no steps', async (t) => {
  const { user, token } = await athlete();
  const start = '2026-06-01T08:00:00Z';
  const id = await newTest(token, { sport: 'running', start, end: at(start, 60) });
  const rows = Array.from({ length: 1000 }, (_, i) => ({
    user_id: user.id,
    time: new Date(Date.parse('2026-05-01T00:00:00Z') + i * 1000),
    utc_offset_seconds: 0,
    test_id: id,
    lactate: 1 + i / 1000,
    speed: 3 + i / 1000,
  }));
  await service.deps.db.insertInto('traces').values(rows).execute();
  const full = await api(service, token, 'POST', '/api/v1/traces/', { timestamp: at(start, 5), lactate: 2, test_id: id });
  t.is(full.status, 422);
  t.deepEqual(full.body.detail[0].loc, ['body', 'test_id']);
  t.regex(full.body.detail[0].msg, /1000 traces/);
  const ok = await api(service, token, 'GET', `/api/v1/tests/${id}/analysis`);
  t.is(ok.status, 200);
  t.is(ok.body.metric, 'speed');
  t.true(ok.body.lactate.every((m: { reason: string }) => m.reason.startsWith('more than 100 steps (1000)')));
  await trace(token, { timestamp: at(start, 5), lactate: 2, speed: 4 }); // in the window: the 1,001st
  const over = await api(service, token, 'GET', `/api/v1/tests/${id}/analysis`);
  t.deepEqual(over.body.steps, []);
  t.true(
    over.body.lactate.every((m: { reason: string }) => m.reason === 'the test holds more than 1000 traces; a step test has one per step'),
  );
});

test('an activity whose samples are gone is left out of the efforts, not a 500', async (t) => {
  const { user, token } = await athlete();
  const start = new Date('2026-04-15T08:00:00Z');
  const ride = criticalPowerRide(start);
  const [source] = await uploadAndWait(service, token, [{ name: 'cp.fit', bytes: ride.bytes }]);
  const id = await newTest(token, { sport: 'cycling', start: '2026-04-15T07:59:00Z', end: at(start.toISOString(), ride.seconds / 60 + 1) });
  t.is((await api(service, token, 'GET', `/api/v1/tests/${id}/analysis`)).body.efforts.length, 5);
  rmSync(objectFile(service.config.DATA_DIR, sampleKey(user.id, source!.activity_ids[0])));
  const res = await api(service, token, 'GET', `/api/v1/tests/${id}/analysis`);
  t.is(res.status, 200);
  t.deepEqual(res.body.efforts, []);
  t.is(res.body.maxima.heart_rate_max.value, null);
});
