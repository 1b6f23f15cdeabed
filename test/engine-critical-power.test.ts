import test from 'ava';
import {
  type CriticalPowerEstimate,
  type CriticalPowerResult,
  fitCriticalPowerModels,
  fitHyperbolic,
  fitLinearInverseTime,
  fitLinearWorkTime,
  fitThreeParameter,
} from '../engine/tests/critical-power.ts';
import { agrees, DEMO_POWER_PRINTED, demoPower, demoSpeed, type Row } from './helpers/lab-demos.ts';

function estimate(result: CriticalPowerResult): CriticalPowerEstimate {
  if (!result.ok) throw new Error(`${result.model}: ${result.reason}`);
  return result;
}

test('demo_critical_power, all five efforts: the four models agree with cyclingtools README', (t) => {
  const results = fitCriticalPowerModels(demoPower.tte, demoPower.po);
  const printed = DEMO_POWER_PRINTED;
  t.deepEqual(
    results.map((r) => r.model),
    ['three-parameter', 'hyperbolic', 'linear-work-time', 'linear-inverse-time'],
  );
  t.deepEqual(
    results.flatMap((r, i) => agrees(estimate(r), printed[i]!, 1)),
    [],
  );
  t.is(estimate(results[1]!).pmax, null);
});

test('demo_critical_power, combinations of four efforts: agree with cyclingtools README (all_combinations rows 5–10)', (t) => {
  // README rows 5–8 are trials [1,2,3,4], rows 9–10 trials [1,2,3,5] (the printed index is cut
  // after "[1,2"; these are the first two 4-trial combinations in the order combn() makes them).
  const pick = (rows: number[]) => [rows.map((i) => demoPower.tte[i]!), rows.map((i) => demoPower.po[i]!)] as const;
  const [t4, p4] = pick([0, 1, 2, 3]);
  const first: Row[] = [
    ['246.', '6.2', '42699.', '7655', '595.', '70.2', null, null],
    ['261.', '4.7', '24814.', '3691.', null, null, null, null],
    ['269.', '5.9', '19977.', '2877.', null, null, null, null],
    ['278.', '7.9', '17194.', '1339.', null, null, null, null],
  ];
  t.deepEqual(
    fitCriticalPowerModels(t4, p4).flatMap((r, i) => agrees(estimate(r), first[i]!, 1)),
    [],
  );
  const [t5, p5] = pick([0, 1, 2, 4]);
  t.deepEqual(agrees(estimate(fitThreeParameter(t5, p5)), ['255', '1.9', '36462.', '3328.', '627.', '63.7', null, null], 1), []);
  t.deepEqual(agrees(estimate(fitHyperbolic(t5, p5)), ['262.', '2.2', '24940.', '2882.', null, null, null, null], 1), []);
});

test('demo_critical_speed: critical speed and D′ agree with cyclingtools README; 3-parameter needs 4 efforts', (t) => {
  const speed = demoSpeed.distance.map((d, i) => d / demoSpeed.tte[i]!);
  const results = fitCriticalPowerModels(demoSpeed.tte, speed);
  const three = results[0]!;
  t.false(three.ok);
  if (!three.ok) t.is(three.reason, 'needs at least 4 efforts');
  const printed: Row[] = [
    ['4.52', '0', '143.', '0.94', null, null, '1.00', '1.43'],
    ['4.52', '0', '142.', '1', null, null, '1', '0.86'],
    ['4.53', '0', '142.', '1.02', null, null, '1.00', '0'],
  ];
  t.deepEqual(
    results.slice(1).flatMap((r, i) => agrees(estimate(r), printed[i]!, 2)),
    [],
  );
});

test('exact hyperbolic and 3-parameter data are recovered exactly, with zero residual', (t) => {
  const durations = [60, 180, 300, 600, 1200];
  const hyper = durations.map((d) => 250 + 20_000 / d);
  const h = estimate(fitHyperbolic(durations, hyper));
  t.true(Math.abs(h.cp - 250) < 1e-6 && Math.abs(h.wPrime - 20_000) < 1e-3, JSON.stringify(h));
  const w = estimate(fitLinearWorkTime(durations, hyper));
  t.true(Math.abs(w.cp - 250) < 1e-9 && Math.abs(w.wPrime - 20_000) < 1e-6 && w.r2 === 1);
  const i = estimate(fitLinearInverseTime(durations, hyper));
  t.true(Math.abs(i.cp - 250) < 1e-9 && Math.abs(i.wPrime - 20_000) < 1e-6);
  // t = W′/(P − CP) − W′/(Pmax − CP), solved for P at each duration.
  const [cp, wPrime, pmax] = [250, 20_000, 900];
  const morton = durations.map((d) => cp + wPrime / (d + wPrime / (pmax - cp)));
  const m = estimate(fitThreeParameter(durations, morton));
  t.true(Math.abs(m.cp - cp) < 1e-4 && Math.abs(m.wPrime - wPrime) < 1e-2 && Math.abs(m.pmax! - pmax) < 1e-2, JSON.stringify(m));
  t.true(m.see! < 1e-6);
});

test('models that cannot apply give a reason, not numbers', (t) => {
  const reasons = (r: CriticalPowerResult) => (r.ok ? 'fitted' : r.reason);
  t.is(reasons(fitLinearWorkTime([300], [300])), 'needs at least 2 efforts');
  t.is(reasons(fitLinearInverseTime([300, 300], [310, 300])), 'needs at least 2 distinct durations');
  t.is(reasons(fitHyperbolic([180, 600], [350, 300])), 'needs at least 3 efforts');
  t.is(reasons(fitThreeParameter([180, 600, 1200], [350, 300, 280])), 'needs at least 4 efforts');
  // Values rising with duration: no positive W′.
  t.is(reasons(fitLinearInverseTime([180, 600, 1200], [250, 280, 300])), "the fitted W' is not positive");
  t.false(fitHyperbolic([180, 600, 1200], [250, 280, 300]).ok);
  // Exact 2-parameter data: the 3-parameter fit sends Pmax to infinity.
  const durations = [60, 180, 300, 600, 1200];
  t.is(
    reasons(
      fitThreeParameter(
        durations,
        durations.map((d) => 250 + 20_000 / d),
      ),
    ),
    'the fitted Pmax runs to infinity: the efforts follow the 2-parameter model',
  );
  // Non-finite or non-positive efforts are not used.
  const kept = fitLinearWorkTime([180, Number.NaN, 600, 0, 1200], [350, 300, 300, 400, 280]);
  t.is(kept.efforts, 3);
});

test('two efforts: the linear models pass through both, with no standard errors', (t) => {
  const two = estimate(fitLinearWorkTime([180, 720], [400, 300]));
  // W = W′ + CP·t through (180, 72,000) and (720, 216,000): CP = 266.67, W′ = 24,000.
  t.true(Math.abs(two.cp - 800 / 3) < 1e-9 && Math.abs(two.wPrime - 24_000) < 1e-6);
  t.is(two.cpSe, null);
  t.is(two.see, null);
  t.is(two.r2, 1);
});
