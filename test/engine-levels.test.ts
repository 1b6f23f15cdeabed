import test from 'ava';
import fc from 'fast-check';
import { LEVEL_STEP, levelOf, levelValue } from '../engine/curves/levels.ts';

test('the level steps of the API: 1 W, 0.01 m/s, 1 bpm', (t) => {
  t.deepEqual({ ...LEVEL_STEP }, { power: 1, speed: 0.01, heart_rate: 1 });
});

test('decimal speeds land on their own level despite float error', (t) => {
  t.true(0.57 / 0.01 < 57 && 4.35 / 0.01 < 435, 'the float error this guards against is real');
  t.is(levelOf(2.35, 0.01), 235);
  t.is(levelOf(0.57, 0.01), 57);
  t.is(levelOf(4.35, 0.01), 435);
  t.is(levelOf(0.29, 0.01), 29);
  t.is(levelOf(2.3499, 0.01), 234);
  t.is(levelOf(250, 1), 250);
  t.is(levelOf(250.999, 1), 250);
});

test('every decimal value k / 100 is level k at 0.01 m/s, and just below it is level k − 1', (t) => {
  fc.assert(
    fc.property(fc.integer({ min: -100_000, max: 100_000 }), (k) => {
      const x = k / 100; // the double nearest to the decimal k·0.01
      return levelOf(x, 0.01) === k && levelOf(x - 0.001, 0.01) === k - 1 && levelOf(x + 0.009, 0.01) === k;
    }),
    { numRuns: 2000 },
  );
  t.pass();
});

test('levelValue maps back to its level, as the nearest double to the decimal value', (t) => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 100_000 }), fc.constantFrom(1, 0.01), (k, step) => {
      const v = levelValue(k, step);
      return levelOf(v, step) === k && v === (step === 1 ? k : Number((k / 100).toFixed(2)));
    }),
    { numRuns: 2000 },
  );
  t.is(levelValue(57, 0.01), 0.57);
  t.pass();
});

test('below the first level, negative values and NaN', (t) => {
  t.is(levelOf(0, 1), 0);
  t.is(levelOf(0.5, 1), 0);
  t.is(levelOf(0.009, 0.01), 0);
  t.true(levelOf(-0.5, 1) < 1);
  t.is(levelOf(-3, 1), -3);
  t.is(levelOf(Number.NaN, 1), -1);
  t.is(levelOf(Number.NaN, 0.01), -1);
});
