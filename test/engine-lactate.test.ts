import test from 'ava';
import fc from 'fast-check';
import { heartRateAt, prepareLactate } from '../engine/tests/lactate-data.ts';
import { fitPolynomial } from '../engine/tests/lactate-fits.ts';
import { type LactateStep, type LactateThreshold, lactateThresholds } from '../engine/tests/lactate.ts';
import { DEMO, LTP1_TOLERANCE, README, tolerance } from './helpers/lab-demos.ts';

function byMethod(results: LactateThreshold[], method: string): LactateThreshold {
  const r = results.find((x) => x.method === method);
  if (!r) throw new Error(`no ${method}`);
  return r;
}

test("every method on lactater's demo data agrees with lactater's README output", (t) => {
  const results = lactateThresholds(DEMO, { includeBaseline: true, sport: 'cycling', heartRate: 'regression' });
  t.deepEqual(
    results.map((r) => r.method),
    README.map(([m]) => m),
  );
  for (const [method, intensity, lactate, heartRate] of README) {
    const r = byMethod(results, method);
    t.is(r.reason, undefined, method);
    const tol = method === 'LTP1' ? LTP1_TOLERANCE : tolerance(intensity);
    t.true(Math.abs((r.intensity as number) - Number(intensity)) <= tol, `${method} intensity ${r.intensity} vs ${intensity}`);
    t.true(Math.abs((r.lactate as number) - Number(lactate)) <= tolerance(lactate), `${method} lactate ${r.lactate} vs ${lactate}`);
    t.is(r.heartRate, heartRate, `${method} heart rate`);
  }
});

test("the 3rd degree polynomial without baseline matches lactater's lactate_curve() print", (t) => {
  // README.md (same commit): lactate_curve(fit = "3rd degree polynomial", include_baseline = FALSE), first rows
  const printed = [0.957, 0.959, 0.96, 0.961, 0.963, 0.964, 0.965, 0.966, 0.968, 0.969];
  const ex = DEMO.slice(1);
  const fit = fitPolynomial(
    ex.map((s) => s.intensity),
    ex.map((s) => s.lactate),
    3,
  );
  printed.forEach((v, i) => t.true(Math.abs(fit.predict(50 + i * 0.1) - v) <= 0.0005 + 1e-9, `${50 + i * 0.1} W`));
});

test('heart rate is interpolated linearly between steps by default', (t) => {
  const results = lactateThresholds(DEMO, { includeBaseline: true });
  for (const r of results) {
    const x = r.intensity as number;
    t.true(x > 50 && x < 191, r.method);
    const i = DEMO.findIndex((s) => s.intensity >= x);
    const [a, b] = [DEMO[i - 1], DEMO[i]];
    const want =
      (a!.heartRate as number) +
      (((b!.heartRate as number) - (a!.heartRate as number)) * (x - a!.intensity)) / (b!.intensity - a!.intensity);
    t.true(Math.abs((r.heartRate as number) - want) < 1e-9, r.method);
  }
  // outside the exercise steps no heart rate is extrapolated; lactater's regression mode gives its line
  const data = prepareLactate(DEMO, {});
  t.is(heartRateAt(data, 62.5), 124);
  t.is(heartRateAt(data, 40), undefined);
  t.is(heartRateAt(data, 200), undefined);
  t.is(heartRateAt(prepareLactate(DEMO, { heartRate: 'regression' }), 50), 120); // README: lactate_curve's 120. at 50 W
});

test('without heart rate, no heart rate; without a resting sample, Bsln+ gives a reason', (t) => {
  const noHr = DEMO.map(({ intensity, lactate }) => ({ intensity, lactate }));
  t.true(lactateThresholds(noHr).every((r) => r.heartRate === undefined && r.reason === undefined));
  const results = lactateThresholds(DEMO.slice(1));
  for (const r of results) {
    if (r.category === 'Bsln+') t.regex(r.reason ?? '', /resting/);
    else t.is(r.reason, undefined, r.method);
  }
});

test('a level the curve never reaches, and too few steps, give reasons, never guesses', (t) => {
  // rest and four steps up to 2.8 mmol/L: the cubic through them reaches OBLA 2.0 and 2.5 only
  const lowResults = lactateThresholds(DEMO.slice(0, 5));
  for (const r of lowResults.filter((x) => x.category === 'OBLA')) {
    if ((r.lactate as number) <= 2.5) t.is(r.reason, undefined, r.method);
    else t.true(r.intensity === undefined && /does not reach/.test(r.reason ?? ''), r.method);
  }
  const flat = DEMO.map((s, i) => ({ ...s, lactate: 1 + i * 0.05 }));
  const flatResults = lactateThresholds(flat);
  for (const r of flatResults.filter((x) => x.category === 'OBLA')) t.regex(r.reason ?? '', /does not reach/);
  t.regex(byMethod(flatResults, 'ModDmax').reason ?? '', /0\.4/);
  const few = lactateThresholds(DEMO.slice(0, 3));
  t.is(few.length, README.length);
  for (const r of few) {
    t.truthy(r.reason, r.method);
    t.is(r.intensity, undefined, r.method);
  }
});

test('4th degree polynomial and B-spline fits read OBLA where their curve is at the level', (t) => {
  for (const fit of ['4th degree polynomial', 'B-spline'] as const) {
    const results = lactateThresholds(DEMO, { fit });
    const obla = results.filter((r) => r.category === 'OBLA');
    t.is(obla.length, 5);
    let last = 0;
    for (const r of obla) {
      t.is(r.reason, undefined, `${fit} ${r.method}`);
      t.true((r.intensity as number) > last && (r.intensity as number) <= 191, `${fit} ${r.method}`);
      last = r.intensity as number;
    }
    t.true(obla.every((r) => r.fitting === `${fit} (user-defined)`));
  }
});

test('steps must increase in intensity', (t) => {
  t.throws(() => lactateThresholds([DEMO[0]!, DEMO[2]!, DEMO[1]!]), { instanceOf: RangeError });
});

test('on any increasing steps every method gives a finite point or a reason, never both', (t) => {
  const steps = fc
    .record({
      rest: fc.double({ min: 0.5, max: 2, noNaN: true }),
      start: fc.integer({ min: 25, max: 150 }),
      inc: fc.integer({ min: 10, max: 50 }),
      rises: fc.array(fc.double({ min: -0.3, max: 3, noNaN: true }), { minLength: 0, maxLength: 9 }),
      withHr: fc.boolean(),
    })
    .map(({ rest, start, inc, rises, withHr }) => {
      const out: LactateStep[] = [{ intensity: 0, lactate: rest, heartRate: 80 }];
      let lactate = rest;
      rises.forEach((r, i) => {
        lactate = Math.max(0.3, lactate + r);
        out.push({ intensity: start + i * inc, lactate, ...(withHr ? { heartRate: 100 + 8 * i } : {}) });
      });
      return out;
    });
  fc.assert(
    fc.property(
      steps,
      fc.boolean(),
      fc.constantFrom('3rd degree polynomial', '4th degree polynomial', 'B-spline' as const),
      (s, includeBaseline, fit) => {
        const results = lactateThresholds(s, { includeBaseline, fit });
        if (results.length !== README.length) return false;
        return results.every((r) =>
          r.reason === undefined
            ? Number.isFinite(r.intensity) && Number.isFinite(r.lactate)
            : r.reason.length > 0 && r.intensity === undefined,
        );
      },
    ),
    { numRuns: 40 },
  );
  t.pass();
});
