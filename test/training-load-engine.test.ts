import test from 'ava';
import { performanceManagement } from '../engine/load/pmc.ts';
import { skibaTau, wPrimeBalance } from '../engine/load/w-prime-balance.ts';
import { trainingStress, trimp } from '../engine/load/stress.ts';
import { normalisedMean } from '../engine/normalised-mean.ts';
import { defaultZoneModel, timeInZones, zoneBounds } from '../engine/load/zones.ts';
import { orderEntries, resolveThresholds, type ThresholdEntry } from '../engine/load/thresholds.ts';
import { activityLoad } from '../engine/load/activity-load.ts';

/**
 * The training-load kernels held to independent computations written here from the published
 * definitions, and to published test values:
 *
 * - W′ balance: sweatpy's own test values (GoldenCheetah/sweatpy, tests/pdm/test_w_prime_balance.py:
 *   power = 0, 1, …, 99 W, CP 25 W, W′ 2000 J), whose τ is not rounded;
 * - the chart: GoldenCheetah's src/Metrics/PMCData.cpp recurrences, written out by day;
 * - stress: Coggan's TSS, TrainingPeaks' rTSS and sTSS, Banister's TRIMP as GoldenCheetah's TRIMP100 scales it.
 */

const ramp = Float64Array.from({ length: 100 }, (_, i) => i);

test('sweatpy: τ of 0…99 W at CP 25 W is 795.44010528262652, and 772.05753543055448 over the first 15 s', (t) => {
  t.true(Math.abs(skibaTau(ramp, 25) - 795.44010528262652) < 1e-9);
  t.true(Math.abs(skibaTau(ramp.subarray(0, 15), 25) - 772.05753543055448) < 1e-9);
});

test("sweatpy: Skiba's W′ balance at t = 75 is 750.77417744392892 J, at t = 50 1678.2431086242659 J; τ = 100 gives 909.61894732869769", (t) => {
  const tau = skibaTau(ramp, 25);
  const balance = wPrimeBalance(ramp, 25, 2000, tau);
  t.true(Math.abs(balance[75]! - 750.77417744392892) < 1e-9, String(balance[75]));
  t.true(Math.abs(balance[50]! - 1678.2431086242659) < 1e-9, String(balance[50]));
  t.true(Math.abs(wPrimeBalance(ramp, 25, 2000, 100)[75]! - 909.61894732869769) < 1e-9);
  t.true(Math.abs(wPrimeBalance(ramp, 25, 2000, 500)[50]! - 1680.1356439412966) < 1e-9);
});

test('W′ balance: the recurrence equals the integral’s sum over a 10-hour ride (where e^(t/τ) would overflow a double)', (t) => {
  let seed = 7;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const power = Float64Array.from({ length: 36_000 }, (_, i) => (i % 600 < 60 ? 420 : 180 + 40 * rnd()));
  power[5000] = Number.NaN; // a gap counts as 0 W
  const balance = wPrimeBalance(power, 260, 22_000, 400);
  for (const at of [59, 1000, 20_000, 35_999]) {
    let spent = 0;
    for (let u = Math.max(0, at - 40_000); u <= at; u++) {
      const p = Number.isNaN(power[u]!) ? 0 : power[u]!;
      spent += Math.max(0, p - 260) * Math.exp(-(at - u) / 400);
    }
    t.true(Math.abs(balance[at]! - (22_000 - spent)) < 1e-6, `t=${at}`);
  }
});

test('the chart: a day off, GoldenCheetah’s recurrences by hand', (t) => {
  const stress = Float64Array.from([100, 0, 50]);
  const { ctl, atl, tsb, ramp: rr } = performanceManagement(stress);
  const a = 1 - Math.exp(-1 / 42);
  const b = 1 - Math.exp(-1 / 7);
  t.is(ctl[0], 100 * a);
  t.is(atl[0], 100 * b);
  t.is(tsb[0], 0, 'form shows yesterday’s loads: 0 on the first day');
  t.is(ctl[1], ctl[0]! * (1 - a));
  t.is(tsb[1], ctl[0]! - atl[0]!);
  t.true(Math.abs(ctl[2]! - (50 * a + ctl[1]! * (1 - a))) < 1e-12);
  t.is(rr[2], ctl[2]!, 'ramp: against 0 before the first day');
});

test('a decade with one ride a year: each ride lifts fitness by 100·(1 − e^(−1/42)), which decays to e^(−365/42) of itself in a year', (t) => {
  const days = 3653;
  const stress = new Float64Array(days);
  for (let y = 0; y < 10; y++) stress[y * 365] = 100;
  const { ctl, ramp: rr } = performanceManagement(stress);
  const lift = 100 * (1 - Math.exp(-1 / 42));
  let expected = 0;
  for (let d = 0; d < days; d++) {
    expected = expected * Math.exp(-1 / 42) + (stress[d]! ? lift : 0);
    t.true(Math.abs(ctl[d]! - expected) < 1e-9);
  }
  t.true(Math.abs(ctl[364]! - lift * Math.exp(-364 / 42)) < 1e-12, 'a year later: e^(−364/42) of the lift, under 0.0005');
  t.true(ctl[364]! < 0.0005);
  t.true(Math.abs(rr[9 * 365 + 7]! - (ctl[9 * 365 + 7]! - ctl[9 * 365]!)) < 1e-12);
});

test('stress: power (TSS), pace (rTSS, sTSS), heart rate (TRIMP100), in that order, or none with the reason', (t) => {
  t.deepEqual(trainingStress({ root: 'cycling', seconds: 3600, normalizedPower: 250 }, { critical_power: 250 }), {
    score: 100,
    method: 'power',
    intensity_factor: 1,
    reason: null,
  });
  // 90 min at NP 220, CP 275: IF 0.8, 1.5 × 0.64 × 100 = 96.
  const tss = trainingStress({ root: 'cycling', seconds: 5400, normalizedPower: 220 }, { critical_power: 275 });
  t.true(Math.abs(tss.score! - 96) < 1e-9);
  // Running at a normalised 4 m/s, CS 4.44…: IF 0.9, an hour scores 81.
  const run = trainingStress({ root: 'running', seconds: 3600, normalisedSpeed: 4, meanHeartRate: 150 }, { critical_speed: 4 / 0.9 });
  t.is(run.method, 'pace');
  t.true(Math.abs(run.score! - 81) < 1e-9);
  // Swimming: IF³ — 40 min at 1.2 m/s, CSS 1.25 m/s: (2/3) × 0.96³ × 100.
  const swim = trainingStress({ root: 'swimming', seconds: 2400, meanSpeed: 1.2 }, { critical_speed: 1.25 });
  t.true(Math.abs(swim.score! - (2 / 3) * 0.96 ** 3 * 100) < 1e-9);
  // Cycling speed never scores: heart rate does.
  const hr = trainingStress(
    { root: 'cycling', seconds: 3600, normalisedSpeed: 9, meanHeartRate: 170 },
    { critical_speed: 10, threshold_heart_rate: 170, max_heart_rate: 190, resting_heart_rate: 50 },
  );
  t.is(hr.method, 'heart_rate');
  t.true(Math.abs(hr.score! - 100) < 1e-9, 'an hour at threshold heart rate is 100');
  // Banister: 30 min at r = 0.5 → 30 × 0.5 × 0.64 × e^0.96.
  t.true(Math.abs(trimp(30, 120, 50, 190) - 30 * 0.5 * 0.64 * Math.exp(0.96)) < 1e-12);
  const none = trainingStress({ root: 'cycling', seconds: 3600, normalizedPower: 200, meanHeartRate: 140 }, { max_heart_rate: 190 });
  t.is(none.score, null);
  t.is(none.reason, "No critical power, threshold heart rate, resting heart rate for this sport on the activity's day");
  t.is(trainingStress({ root: 'cycling', seconds: 3600 }, {}).reason, 'The activity has no power, pace or heart rate to score');
});

test("normalised mean: NP's algorithm (30 s rolling mean, fourth power) skipping gaps", (t) => {
  const x = Float64Array.from({ length: 120 }, (_, i) => (i < 60 ? 100 : 300));
  const rolling: number[] = [];
  for (let i = 29; i < 120; i++) {
    let s = 0;
    for (let j = i - 29; j <= i; j++) s += x[j]!;
    rolling.push(s / 30);
  }
  const np = (rolling.reduce((s, v) => s + v ** 4, 0) / rolling.length) ** 0.25;
  t.true(Math.abs(normalisedMean(x, 30)! - np) < 1e-9);
  const gapped = Float64Array.from([...x.subarray(0, 60), Number.NaN, Number.NaN, ...x.subarray(60)]);
  t.true(Math.abs(normalisedMean(gapped, 30)! - np) < 1e-9, 'a gap is skipped, not counted as 0');
  t.is(normalisedMean(new Float64Array(29).fill(200), 30), undefined);
});

test("zones: Coggan's levels at CP 250 and the seconds in each, bounds inclusive below", (t) => {
  const bounds = zoneBounds(defaultZoneModel('cycling', 'power').zones, 250);
  t.deepEqual(
    bounds.map((b) => [b.low, b.high]),
    [
      [0, 137.5],
      [137.5, 187.5],
      [187.5, 225],
      [225, 262.5],
      [262.5, 300],
      [300, 375],
      [375, null],
    ],
  );
  const seconds = timeInZones(
    Float64Array.from([0, 137.4, 137.5, 262.5, 1000, Number.NaN, -3]),
    bounds.map((b) => b.low),
  );
  t.deepEqual([...seconds], [3, 1, 0, 0, 1, 0, 1]);
  t.deepEqual(
    defaultZoneModel('swimming', 'speed').zones.map((z) => z.low),
    [0, 93, 97, 99, 102, 109],
  );
  t.is(defaultZoneModel('running', 'heart_rate').model, 'friel-running');
});

test('thresholds: per value the latest entry on or before the day; the more specific sport, then declared over a test on the same day; resting HR from the dailies', (t) => {
  const entries: ThresholdEntry[] = [
    { sport: 'cycling', valid_from: '2020-01-01', origin: 'declared', critical_power: 250, w_prime: 20000 },
    { sport: 'cycling', valid_from: '2023-01-01', origin: 'declared', critical_power: 270 },
    { sport: 'cycling.road', valid_from: '2023-01-01', origin: 'declared', critical_power: 280 },
    { sport: 'cycling', valid_from: '2024-01-01', origin: 'test', test_id: 't1', critical_power: 300 },
    { sport: 'cycling', valid_from: '2024-01-01', origin: 'declared', critical_power: 290 },
    { sport: 'running', valid_from: '2020-01-01', origin: 'declared', critical_speed: 4 },
  ];
  const ordered = orderEntries(entries);
  const at = (sport: string, day: string) =>
    resolveThresholds(ordered, sport, day, [
      ['2022-05-01', 48],
      ['2023-05-01', 45],
    ]);
  t.is(at('cycling', '2019-12-31').critical_power, undefined);
  t.like(at('cycling', '2022-06-01'), {
    critical_power: { value: 250 },
    w_prime: { value: 20000 },
    resting_heart_rate: { value: 48, origin: 'daily' },
  });
  t.is(at('cycling.mountain', '2023-06-01').critical_power!.value, 270);
  t.is(at('cycling.road', '2023-06-01').critical_power!.value, 280);
  t.like(at('cycling', '2024-02-01'), {
    critical_power: { value: 290, origin: 'declared' },
    w_prime: { value: 20000, valid_from: '2020-01-01' },
  });
  t.is(at('running', '2024-02-01').critical_power, undefined);
  t.is(at('running+treadmill', '2024-02-01').critical_speed!.value, 4);
});

test('one activity’s load: zones of every metric with a threshold, W′ balance with CP and W′ only', (t) => {
  const power = Float64Array.from({ length: 600 }, (_, i) => (i < 300 ? 200 : 350));
  const heart = Float64Array.from({ length: 600 }, () => 150);
  const zones = {
    power: defaultZoneModel('cycling', 'power'),
    heart_rate: defaultZoneModel('cycling', 'heart_rate'),
    speed: defaultZoneModel('cycling', 'speed'),
  };
  const load = activityLoad({
    channels: { power, heart_rate: heart },
    stress: { root: 'cycling', seconds: 600, normalizedPower: 290 },
    thresholds: { critical_power: 250, w_prime: 20000 },
    zones,
  });
  t.deepEqual(Object.keys(load.timeInZones), ['power']);
  t.deepEqual(
    load.timeInZones.power!.zones.map((z) => z.seconds),
    [0, 0, 300, 0, 0, 300, 0],
  );
  const tau = Math.trunc(546 * Math.exp(-0.01 * 50) + 316);
  let spent = 0;
  for (let u = 300; u < 600; u++) spent += 100 * Math.exp(-(599 - u) / tau);
  t.true(Math.abs(load.wPrimeBalanceMin! - (20000 - spent)) < 1e-6);
  const noWPrime = activityLoad({
    channels: { power },
    stress: { root: 'cycling', seconds: 600 },
    thresholds: { critical_power: 250 },
    zones,
  });
  t.is(noWPrime.wPrimeBalanceMin, null);
});
