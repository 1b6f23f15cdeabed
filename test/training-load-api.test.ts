import test from 'ava';
import { readParquet } from './helpers/curves.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestUser, testAthlete, tokenFor } from './helpers/users.ts';
import { api, uploadAndWait } from './helpers/activities.ts';
import { buildActivityFit, type RecordFields } from './helpers/fit-builder.ts';
import { trainingLoadProcessor } from '../workers/training-load.ts';
import { loadVersion } from '../db/training-load.ts';
import { yazlZip } from './helpers/zip.ts';

/**
 * Training load end to end (docs/training-load.md): thresholds with a history, each activity's stress,
 * zones and W′ balance, the performance management chart and the zones over a range, held to
 * computations written here from the published definitions:
 *
 * - training stress: hours × (NP/CP)² × 100 (Coggan's TSS; GoldenCheetah's BikeStress with CP, src/Metrics/Coggan.cpp);
 * - TRIMP100: Banister's TRIMP (0.64·e^(1.92 r)) over an hour at threshold heart rate (GoldenCheetah src/Metrics/TRIMPPoints.cpp);
 * - the chart: GoldenCheetah's src/Metrics/PMCData.cpp (42- and 7-day decays, SB shown the next day, RR over 7 days);
 * - W′ balance: Skiba 2012's integral, τ = 546·e^(−0.01·(CP − mean power below CP)) + 316, rounded down (GoldenCheetah src/Metrics/WPrime.cpp).
 */

let service: TestService;
test.before(async () => {
  service = await startTestService({ workers: true });
});
test.after.always(() => service?.close());

const athlete = () => testAthlete(service);

function ride(start: string, seconds: number, record: (i: number) => RecordFields, sport = 'cycling') {
  return { name: `${start.slice(0, 10)}.fit`, bytes: buildActivityFit({ sessions: [{ sport, start: new Date(start), seconds, record }] }) };
}

const steady =
  (power: number, heartRate = 150) =>
  (i: number) => ({ power, heartRate, cadence: 90, speed: 9, distance: i * 9 });

async function uploadOne(token: string, file: { name: string; bytes: Uint8Array }): Promise<string> {
  const [source] = await uploadAndWait(service, token, [file]);
  if (source.status !== 'processed') throw new Error(`upload failed: ${JSON.stringify(source)}`);
  return source.activity_ids[0];
}

/** The activity once its training stress is there (computed after ingest, or by the job after a change). */
async function details(token: string, id: string, until: (body: any) => boolean = (b) => b.training_stress !== null, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await api(service, token, 'GET', `/api/v1/activities/${id}`);
    if (res.status !== 200) throw new Error(`GET activity: ${res.status}`);
    if (until(res.body)) return res.body;
    if (Date.now() > deadline) throw new Error(`activity ${id} not ready: ${JSON.stringify(res.body.training_stress)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const CYCLING_250 = { sport: 'cycling', valid_from: '2020-01-01', critical_power: 250, w_prime: 20000 };

test('a constant 250 W hour at CP 250 W scores 100 at IF 1, all in the threshold zone, W′ untouched', async (t) => {
  const { token } = await athlete();
  const put = await api(service, token, 'PUT', '/api/v1/profile/thresholds', { thresholds: [CYCLING_250] });
  t.is(put.status, 200);
  t.deepEqual(put.body.thresholds, [
    {
      ...CYCLING_250,
      origin: 'declared',
      test_id: null,
      critical_speed: null,
      threshold_heart_rate: null,
      max_heart_rate: null,
      resting_heart_rate: null,
    },
  ]);
  const id = await uploadOne(token, ride('2024-03-01T08:00:00Z', 3600, steady(250)));
  const a = await details(token, id);
  const hours = a.timer_duration === 'PT1H' ? 1 : Number.NaN;
  t.is(hours, 1, `timer ${a.timer_duration}`);
  t.is(a.training_stress.method, 'power');
  t.is(a.training_stress.intensity_factor, 1);
  t.true(Math.abs(a.training_stress.score - 100) < 1e-9, String(a.training_stress.score));
  t.is(a.training_stress.reason, null);
  const power = a.time_in_zones.power;
  t.is(power.length, 7);
  t.deepEqual(
    power.map((z: any) => z.seconds),
    [0, 0, 0, 3600, 0, 0, 0],
  );
  t.deepEqual(power[3], { zone: 4, name: 'Threshold', low: 225, high: 262.5, seconds: 3600 });
  t.is(a.w_prime_balance_min, 20000);
  // The list carries the same stress.
  const list = await api(service, token, 'GET', '/api/v1/activities/');
  t.deepEqual(list.body[0].training_stress, a.training_stress);
});

test('bad thresholds are a 422 naming the field, and nothing is stored', async (t) => {
  const { token } = await athlete();
  const cases: [unknown, (string | number)[]][] = [
    [{ ...CYCLING_250, critical_power: 0 }, ['body', 'thresholds', 0, 'critical_power']],
    [{ ...CYCLING_250, critical_power: -5 }, ['body', 'thresholds', 0, 'critical_power']],
    [{ ...CYCLING_250, critical_power: 10_000 }, ['body', 'thresholds', 0, 'critical_power']],
    [{ ...CYCLING_250, valid_from: '2999-01-01' }, ['body', 'thresholds', 0, 'valid_from']],
    [{ ...CYCLING_250, sport: 'not a sport!' }, ['body', 'thresholds', 0, 'sport']],
    [{ ...CYCLING_250, critical_power: 1e308 }, ['body', 'thresholds', 0, 'critical_power']],
    [{ ...CYCLING_250, threshold_heart_rate: 190, max_heart_rate: 180 }, ['body', 'thresholds', 0, 'threshold_heart_rate']],
  ];
  for (const [entry, loc] of cases) {
    const res = await api(service, token, 'PUT', '/api/v1/profile/thresholds', { thresholds: [entry] });
    t.is(res.status, 422, JSON.stringify(entry));
    t.true(
      res.body.detail.some((d: any) => JSON.stringify(d.loc) === JSON.stringify(loc)),
      `${JSON.stringify(entry)} → ${JSON.stringify(res.body.detail)}`,
    );
  }
  const overlap = await api(service, token, 'PUT', '/api/v1/profile/thresholds', {
    thresholds: [CYCLING_250, { ...CYCLING_250, critical_power: 260 }],
  });
  t.is(overlap.status, 422);
  t.deepEqual(overlap.body.detail[0].loc, ['body', 'thresholds', 1, 'valid_from']);
  t.regex(overlap.body.detail[0].msg, /Overlapping/);
  const nul = await api(service, token, 'PUT', '/api/v1/profile/thresholds', { thresholds: [{ ...CYCLING_250, sport: 'cycling\u0000' }] });
  t.is(nul.status, 422);
  const stored = await api(service, token, 'GET', '/api/v1/profile/thresholds');
  t.deepEqual(stored.body, { thresholds: [], from_tests: [] });
});

test('without thresholds: no made-up number, the reason says what is missing; heart rate scores as TRIMP100 once known', async (t) => {
  const { token } = await athlete();
  const id = await uploadOne(token, ride('2024-05-02T07:00:00Z', 1800, steady(200, 160)));
  const a = await details(token, id);
  t.deepEqual(a.training_stress.score, null);
  t.regex(a.training_stress.reason, /critical power/);
  t.regex(a.training_stress.reason, /threshold heart rate/);
  t.deepEqual(a.time_in_zones, {});
  t.is(a.w_prime_balance_min, null);

  // Heart-rate thresholds only: TRIMP, scaled so an hour at threshold heart rate is 100.
  const put = await api(service, token, 'PUT', '/api/v1/profile/thresholds', {
    thresholds: [{ sport: 'cycling', valid_from: '2024-01-01', threshold_heart_rate: 170, max_heart_rate: 190, resting_heart_rate: 50 }],
  });
  t.is(put.status, 200);
  const b = await details(token, id, (body) => body.training_stress?.score !== null && body.training_stress !== null);
  const trimp = (minutes: number, hr: number) => {
    const r = (hr - 50) / (190 - 50);
    return minutes * r * 0.64 * Math.exp(1.92 * r);
  };
  const expected = (100 * trimp(30, 160)) / trimp(60, 170);
  t.is(b.training_stress.method, 'heart_rate');
  t.is(b.training_stress.intensity_factor, null);
  t.true(Math.abs(b.training_stress.score - expected) < 1e-9, `${b.training_stress.score} vs ${expected}`);
  // Friel's cycling zones: 160 bpm is 94.1 % of 170, zone 4 (94–99 %).
  t.is(b.time_in_zones.heart_rate.find((z: any) => z.seconds > 0).zone, 4);
});

test('a threshold change mid-history recomputes only the activities from its day on', async (t) => {
  const { token } = await athlete();
  await api(service, token, 'PUT', '/api/v1/profile/thresholds', { thresholds: [CYCLING_250] });
  const early = await uploadOne(token, ride('2023-06-01T08:00:00Z', 3600, steady(250)));
  const late = await uploadOne(token, ride('2024-06-01T08:00:00Z', 3600, steady(250)));
  const before = { early: await details(token, early), late: await details(token, late) };
  t.true(Math.abs(before.late.training_stress.score - 100) < 1e-9);
  const computedAt = async (id: string) => {
    const { rows } = await service.deps.db
      .selectFrom('activity_load')
      .select(['computed_at'])
      .where('activity_id', '=', id)
      .execute()
      .then((rows) => ({ rows }));
    return rows[0]?.computed_at?.getTime();
  };
  const earlyComputed = await computedAt(early);

  const put = await api(service, token, 'PUT', '/api/v1/profile/thresholds', {
    thresholds: [CYCLING_250, { sport: 'cycling', valid_from: '2024-01-01', critical_power: 200 }],
  });
  t.is(put.status, 200);
  const after = await details(token, late, (b) => b.training_stress !== null && b.training_stress.intensity_factor !== 1);
  // CP 200 from 2024: IF 1.25, 156.25; W′ carried over from the 2020 entry.
  t.true(Math.abs(after.training_stress.intensity_factor - 1.25) < 1e-12);
  t.true(Math.abs(after.training_stress.score - 156.25) < 1e-9);
  t.true(after.w_prime_balance_min < 20000);
  const earlyAfter = await details(token, early);
  t.deepEqual(earlyAfter.training_stress, before.early.training_stress);
  t.is(await computedAt(early), earlyComputed, 'the earlier activity was not computed again');
});

test('the chart equals GoldenCheetah’s recurrence, with days off, over the range asked; JSON and Parquet agree', async (t) => {
  const { token } = await athlete();
  await api(service, token, 'PUT', '/api/v1/profile/thresholds', { thresholds: [CYCLING_250] });
  // Two rides: 100 on 2024-01-10, then a day off, then 56.25 (187.5 W: IF 0.75) on 2024-01-12.
  const a = await uploadOne(token, ride('2024-01-10T08:00:00Z', 3600, steady(250)));
  const b = await uploadOne(token, ride('2024-01-12T08:00:00Z', 3600, steady(187.5)));
  await details(token, a);
  const bd = await details(token, b);
  const res = await api(service, token, 'GET', '/api/v1/activities/longitudinal-training-load?start=2024-01-09&end=2024-01-20&format=json');
  t.is(res.status, 200);
  const stress = [0, 100, 0, bd.training_stress.score, 0, 0, 0, 0, 0, 0, 0, 0];
  const k42 = Math.exp(-1 / 42);
  const k7 = Math.exp(-1 / 7);
  let ctl = 0;
  let atl = 0;
  const ctls: number[] = [];
  const expected = stress.map((s) => {
    const tsb = ctl - atl;
    ctl = s * (1 - k42) + ctl * k42;
    atl = s * (1 - k7) + atl * k7;
    ctls.push(ctl);
    return { stress: s, ctl, atl, tsb, ramp_rate: ctl - (ctls.length > 7 ? ctls[ctls.length - 8]! : 0) };
  });
  const body = res.body;
  t.is(body.date.length, 12);
  t.is(body.date[0], '2024-01-09T00:00:00');
  t.is(body.date[11], '2024-01-20T00:00:00');
  for (const [i, e] of expected.entries())
    for (const key of ['stress', 'ctl', 'atl', 'tsb', 'ramp_rate'] as const) t.true(Math.abs(body[key][i] - e[key]) < 1e-9, `${key}[${i}]`);
  // The same through Parquet, read by hyparquet.
  const pq = await fetch(`${service.url}/api/v1/activities/longitudinal-training-load?start=2024-01-09&end=2024-01-20`, {
    headers: { authorization: `Bearer ${token}` },
  });
  t.is(pq.status, 200);
  const frame = await readParquet(await pq.arrayBuffer());
  t.deepEqual(frame.columns, body, 'Parquet holds what the JSON does');
  // A range that starts later carries the earlier training.
  const later = await api(
    service,
    token,
    'GET',
    '/api/v1/activities/longitudinal-training-load?start=2024-01-15&end=2024-01-15&format=json',
  );
  t.true(Math.abs(later.body.ctl[0] - expected[6]!.ctl) < 1e-9);
  // start after end
  const bad = await api(service, token, 'GET', '/api/v1/activities/longitudinal-training-load?start=2024-02-01&end=2024-01-01&format=json');
  t.is(bad.status, 422);
});

test('W′ balance as a /data column equals Skiba’s integral computed here from the same power', async (t) => {
  const { token } = await athlete();
  await api(service, token, 'PUT', '/api/v1/profile/thresholds', { thresholds: [CYCLING_250] });
  // 10 min easy, 3 × (2 min at 400 W, 2 min at 150 W), 10 min easy.
  const power = (i: number) => (i >= 600 && i < 1320 && Math.floor((i - 600) / 120) % 2 === 0 ? 400 : i < 600 || i >= 1320 ? 180 : 150);
  const id = await uploadOne(
    token,
    ride('2024-02-01T08:00:00Z', 1920, (i) => ({ power: power(i), heartRate: 140, cadence: 90, speed: 9, distance: i * 9 })),
  );
  const a = await details(token, id);
  const res = await api(service, token, 'GET', `/api/v1/activities/${id}/data?metrics=power,w_prime_balance&format=json`);
  t.is(res.status, 200);
  const p: number[] = res.body.power;
  const below = p.filter((x) => x < 250);
  const tau = Math.trunc(546 * Math.exp(-0.01 * (250 - below.reduce((s, x) => s + x, 0) / below.length)) + 316);
  const expected = p.map((_, t) => {
    let spent = 0;
    for (let u = 0; u <= t; u++) spent += Math.max(0, p[u]! - 250) * Math.exp(-(t - u) / tau);
    return 20000 - spent;
  });
  const got: number[] = res.body.w_prime_balance;
  t.is(got.length, expected.length);
  t.true(
    got.every((x, i) => Math.abs(x - expected[i]!) < 1e-6),
    'every second',
  );
  t.true(Math.abs(a.w_prime_balance_min - Math.min(...expected)) < 1e-6);
  t.true(a.w_prime_balance_min < 20000 - 3 * 120 * 150 * 0.5);
});

test('zones over a range sum each activity’s time in zones; edited zones are used and recomputed', async (t) => {
  const { token } = await athlete();
  await api(service, token, 'PUT', '/api/v1/profile/thresholds', { thresholds: [CYCLING_250] });
  const a = await uploadOne(token, ride('2024-04-01T08:00:00Z', 600, steady(250)));
  const b = await uploadOne(token, ride('2024-04-03T08:00:00Z', 600, steady(100)));
  await details(token, a);
  await details(token, b);
  const res = await api(service, token, 'GET', '/api/v1/activities/longitudinal-zones?start=2024-04-01&end=2024-04-30&format=json');
  t.is(res.status, 200);
  const power = res.body.metric
    .map((m: string, i: number) => ({ m, zone: res.body.zone[i], seconds: res.body.seconds[i] }))
    .filter((r: any) => r.m === 'power');
  t.deepEqual(
    power.map((r: any) => r.seconds),
    [600, 0, 0, 600, 0, 0, 0],
  );
  const edit = await api(service, token, 'PUT', '/api/v1/profile/zones', {
    zones: [
      {
        sport: 'cycling',
        metric: 'power',
        zones: [
          { name: 'Easy', low: 0 },
          { name: 'Hard', low: 90 },
        ],
      },
    ],
  });
  t.is(edit.status, 200);
  t.deepEqual(
    edit.body.zones.find((z: any) => z.sport === 'cycling' && z.metric === 'power'),
    {
      sport: 'cycling',
      metric: 'power',
      model: 'custom',
      threshold: 'critical_power',
      zones: [
        { name: 'Easy', low: 0 },
        { name: 'Hard', low: 90 },
      ],
    },
  );
  const ad = await details(token, a, (body) => body.time_in_zones?.power?.length === 2);
  t.deepEqual(ad.time_in_zones.power, [
    { zone: 1, name: 'Easy', low: 0, high: 225, seconds: 0 },
    { zone: 2, name: 'Hard', low: 225, high: null, seconds: 600 },
  ]);
  const badZones = await api(service, token, 'PUT', '/api/v1/profile/zones', {
    zones: [
      {
        sport: 'cycling',
        metric: 'power',
        zones: [
          { name: 'Easy', low: 10 },
          { name: 'Hard', low: 5 },
        ],
      },
    ],
  });
  t.is(badZones.status, 422);
  t.deepEqual(badZones.body.detail[0].loc, ['body', 'zones', 0, 'zones', 0, 'low']);
});

test('a lab test’s critical power counts from its day; deleting the test takes it back', async (t) => {
  const { token } = await athlete();
  const id = await uploadOne(token, ride('2024-07-10T08:00:00Z', 3600, steady(300)));
  const none = await details(token, id);
  t.is(none.training_stress.score, null);
  const created = await api(service, token, 'POST', '/api/v1/tests/', {
    sport: 'cycling',
    start: '2024-07-01T09:00:00Z',
    results: { critical_power: 300, w_prime: 18000 },
  });
  t.is(created.status, 201);
  const thresholds = await api(service, token, 'GET', '/api/v1/profile/thresholds');
  t.is(thresholds.body.from_tests.length, 1);
  t.like(thresholds.body.from_tests[0], {
    origin: 'test',
    test_id: created.body.id,
    valid_from: '2024-07-01',
    critical_power: 300,
    w_prime: 18000,
  });
  const scored = await details(token, id, (b) => b.training_stress?.score != null);
  t.true(Math.abs(scored.training_stress.score - 100) < 1e-9);
  const del = await api(service, token, 'DELETE', `/api/v1/tests/${created.body.id}`);
  t.is(del.status, 204);
  const back = await details(token, id, (b) => b.training_stress !== null && b.training_stress.score === null);
  t.regex(back.training_stress.reason, /critical power/);
});

test('another user’s thresholds and charts are their own; scopes are checked', async (t) => {
  const { token } = await athlete();
  const other = await athlete();
  await api(service, token, 'PUT', '/api/v1/profile/thresholds', { thresholds: [CYCLING_250] });
  const theirs = await api(service, other.token, 'GET', '/api/v1/profile/thresholds');
  t.deepEqual(theirs.body.thresholds, []);
  const user = await createTestUser(service);
  const readOnly = await tokenFor(service, user, ['data:read']);
  const put = await api(service, readOnly, 'PUT', '/api/v1/profile/thresholds', { thresholds: [CYCLING_250] });
  t.is(put.status, 403);
  const anon = await api(service, undefined, 'GET', '/api/v1/activities/longitudinal-training-load');
  t.is(anon.status, 401);
});

test('without a declared or test CP, a ride uses the critical-power model of the 90 days before it (origin `modelled`), as the profile endpoint fits it', async (t) => {
  const { token } = await athlete();
  // Maximal efforts of 10 s to 20 min, each after 5 min at 100 W, on one ride.
  const blocks: [number, number][] = [
    [10, 900],
    [60, 520],
    [180, 400],
    [300, 360],
    [600, 320],
    [1200, 295],
  ];
  const plan: number[] = [];
  for (const [seconds, watts] of blocks) plan.push(...new Array(300).fill(100), ...new Array(seconds).fill(watts));
  await uploadOne(
    token,
    ride('2024-09-01T08:00:00Z', plan.length, (i) => ({ power: plan[i]!, heartRate: 140, cadence: 90, speed: 9, distance: i * 9 })),
  );
  const id = await uploadOne(token, ride('2024-09-20T08:00:00Z', 3600, steady(250)));
  const a = await details(token, id);
  const model = await api(service, token, 'GET', '/api/v1/profile/intensity-duration-model?date=2024-09-19&sport=cycling');
  t.is(model.status, 200);
  const cp = model.body.parameters.critical_intensity;
  t.like(a.training_stress.thresholds.critical_power, { value: cp, origin: 'modelled', valid_from: '2024-06-22' });
  t.is(a.training_stress.thresholds.w_prime.value, model.body.parameters.work_capacity);
  t.is(a.training_stress.method, 'power');
  t.true(Math.abs(a.training_stress.score - (250 / cp) ** 2 * 100) < 1e-9);
  // The W′ balance series uses the same modelled CP and W′ as the details' minimum.
  const series = await api(service, token, 'GET', `/api/v1/activities/${id}/data?metrics=w_prime_balance&format=json`);
  t.is(series.status, 200);
  t.is(Math.min(...series.body.w_prime_balance), a.w_prime_balance_min);
});

test('a run scores by pace (rTSS) with its critical speed and gets speed zones; the load job retried writes nothing twice, and an older version’s job stops', async (t) => {
  const { user, token } = await athlete();
  await api(service, token, 'PUT', '/api/v1/profile/thresholds', {
    thresholds: [{ sport: 'running', valid_from: '2024-01-01', critical_speed: 4 }],
  });
  const id = await uploadOne(
    token,
    ride('2024-03-03T07:00:00Z', 2700, (i) => ({ heartRate: 150, cadence: 85, speed: 3.6, distance: i * 3.6 }), 'running'),
  );
  const a = await details(token, id);
  t.is(a.training_stress.method, 'pace');
  t.true(Math.abs(a.training_stress.intensity_factor - 0.9) < 1e-9);
  t.true(Math.abs(a.training_stress.score - 0.75 * 0.81 * 100) < 1e-9);
  // 3.6 m/s is 90 % of 4: GoldenCheetah's running pace zone 3 (87–95 %).
  t.deepEqual(
    a.time_in_zones.speed.map((z: any) => z.seconds),
    [0, 0, 2700, 0, 0, 0],
  );

  const { deps } = service;
  const process = trainingLoadProcessor({
    db: deps.db,
    pool: deps.engine.pool,
    samples: deps.engine.samples,
    files: deps.engine.files,
    log: deps.log,
    now: deps.now,
  });
  const version = await loadVersion(deps.db, user.id);
  const job = (v: number) => ({ data: { userId: user.id, version: v }, updateProgress: async () => {} }) as never;
  const rows = () => deps.db.selectFrom('activity_load').selectAll().where('user_id', '=', user.id).execute();
  const before = await rows();
  t.deepEqual(await process(job(version)), { computed: 0 });
  // A worker killed between computing and storing: the row is missing, and the retry computes it once.
  await deps.db.deleteFrom('activity_load').where('activity_id', '=', id).execute();
  t.deepEqual(await process(job(version)), { computed: 1 });
  t.deepEqual(await process(job(version)), { computed: 0 });
  const after = await rows();
  t.is(after.length, before.length);
  t.is(after[0]!.stress, before[0]!.stress);
  t.deepEqual(await process(job(version - 1)), { superseded: version });
});

test('a history import’s activities get their load once the import completes, modelled from the whole history', async (t) => {
  const { token } = await athlete();
  // Three rides of maximal efforts from 10 s to 20 min (each after 5 min at 100 W), then a steady hour.
  const efforts: [number, number][] = [
    [10, 900],
    [60, 520],
    [180, 400],
    [300, 360],
    [600, 320],
    [1200, 295],
  ];
  const plan = efforts.flatMap(([seconds, watts]) => [...new Array(300).fill(100), ...new Array(seconds).fill(watts)]);
  const files = [0, 1, 2, 3].map((n) => ({
    name: `ride-${n}.fit`,
    data: buildActivityFit({
      sessions: [
        {
          sport: 'cycling',
          start: new Date(Date.parse('2024-10-01T08:00:00Z') + n * 7 * 86_400_000),
          seconds: n < 3 ? plan.length : 3600,
          record: (i: number) => ({ power: n < 3 ? plan[i]! - 10 * n : 250, heartRate: 140, cadence: 90, speed: 9, distance: i * 9 }),
        },
      ],
    }),
  }));
  const form = new FormData();
  form.append('archive', new Blob([(await yazlZip(files)) as Uint8Array<ArrayBuffer>], { type: 'application/zip' }), 'export.zip');
  const res = await fetch(`${service.url}/api/v1/activities/backfill`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  t.is(res.status, 202);
  await (await fetch(`${service.url}/api/v1/activities/backfill-status`, { headers: { authorization: `Bearer ${token}` } })).text();
  const list = await api(service, token, 'GET', '/api/v1/activities/?limit=10');
  t.is(list.body.length, 4);
  for (const a of list.body) {
    const d = await details(token, a.id);
    // The oldest ride has no history before it: no model, and the reason says so.
    if (d.start.startsWith('2024-10-01')) t.regex(d.training_stress.reason, /critical power/);
    else t.true(d.training_stress.score === null || d.training_stress.thresholds.critical_power.origin === 'modelled');
  }
  // The newest ride's model is fitted on the three before it, all stored before its load was computed.
  const newest = await details(token, list.body.find((a: any) => a.start.startsWith('2024-10-22')).id);
  const model = await api(service, token, 'GET', '/api/v1/profile/intensity-duration-model?date=2024-10-21&sport=cycling');
  t.truthy(model.body.parameters, 'the three earlier rides determine a fit');
  t.is(newest.training_stress.thresholds.critical_power.value, model.body.parameters.critical_intensity);
  t.is(newest.training_stress.method, 'power');
});
