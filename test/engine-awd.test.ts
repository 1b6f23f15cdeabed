import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import fc from 'fast-check';
import { MAX_LEVEL, accumulatedWorkDuration, awdPercentiles, sumAwd } from '../engine/curves/awd.ts';
import { parseFit } from '../engine/ingest/fit.ts';
import { levelOf } from '../engine/curves/levels.ts';
import { resample } from '../engine/ingest/resample.ts';
import { fixturesDir } from './helpers/fixtures.ts';

/** The definition: for k = 1..K (K = the highest level of a sample), the samples at level ≥ k. */
function plainAwd(x: number[], step: number): number[] {
  let top = 0;
  for (const v of x) if (Number.isFinite(v)) top = Math.max(top, levelOf(v, step));
  const out: number[] = [];
  for (let k = 1; k <= top; k++) out.push(x.filter((v) => Number.isFinite(v) && levelOf(v, step) >= k).length);
  return out;
}

/** numpy's default ("linear") quantile, written out: h = (N − 1)·q between order statistics. */
function plainQuantile(values: number[], q: number): number {
  const v = [...values].sort((a, b) => a - b);
  const h = (v.length - 1) * q;
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, v.length - 1);
  return v[lo]! + (h - lo) * (v[hi]! - v[lo]!);
}

const awd = (x: number[], step = 1) => [...accumulatedWorkDuration(Float64Array.from(x), step)];

const sample = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: -50, max: 600 }) },
  { weight: 2, arbitrary: fc.double({ min: -10, max: 400, noNaN: true }) },
  { weight: 1, arbitrary: fc.constant(Number.NaN) },
  { weight: 2, arbitrary: fc.constant(0) },
);

test('AWD matches the definition on random series (NaN, negatives, fractions, pauses)', (t) => {
  fc.assert(
    fc.property(fc.array(sample, { maxLength: 300 }), fc.constantFrom(1, 0.01, 5), (x, step) => {
      return awd(x, step).join() === plainAwd(x, step).join();
    }),
    { numRuns: 500 },
  );
  t.pass();
});

test('AWD of whole watts is the count of samples ≥ k W, without levelOf', (t) => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: -20, max: 300 }), { maxLength: 200 }), (x) => {
      const got = awd(x);
      const top = Math.max(0, ...x);
      if (got.length !== top) return false;
      for (let k = 1; k <= top; k++) if (got[k - 1] !== x.filter((v) => v >= k).length) return false;
      return true;
    }),
    { numRuns: 300 },
  );
  t.pass();
});

test('AWD edge cases: empty, one sample, NaN only, below level 1, a long pause, decimal speeds', (t) => {
  t.deepEqual(awd([]), []);
  t.deepEqual(awd([3]), [1, 1, 1]);
  t.deepEqual(awd([Number.NaN, Number.NaN]), []);
  t.deepEqual(awd([0, -5, 0.5, -Infinity]), []);
  t.deepEqual(awd([2, Number.NaN, -300, 1, 0, Infinity, 2]), [3, 2], 'NaN, negatives and ±Infinity count nowhere');
  const pause = [...new Array<number>(3600).fill(Number.NaN), 5, 5, ...new Array<number>(7200).fill(0), 3];
  t.deepEqual(awd(pause), [3, 3, 3, 2, 2]);
  t.deepEqual(awd([2.35, 0.57, 0.01, 0.009], 0.01).length, 235);
  const speeds = awd([2.35, 0.57, 0.01, 0.009], 0.01);
  t.is(speeds[0], 3);
  t.is(speeds[56], 2, '0.57 m/s is at level 57');
  t.is(speeds[57], 1);
  t.is(speeds[234], 1);
  t.throws(() => awd([200, 1e12]), { instanceOf: RangeError });
  t.is(awd([MAX_LEVEL]).length, MAX_LEVEL);
});

test('AWD of a real ride matches the definition; a day sums its activities', async (t) => {
  const [rec] = await parseFit(readFileSync(join(fixturesDir(), 'fit', '4078723797.fit')));
  const power = resample(rec!).channels.power!;
  const x = [...power];
  const got = awd(x);
  t.deepEqual(got, plainAwd(x, 1));
  t.true(got.length > 500);
  const half = Math.floor(x.length / 2);
  const parts = [accumulatedWorkDuration(power.slice(0, half), 1), accumulatedWorkDuration(power.slice(half), 1)];
  t.deepEqual([...sumAwd(parts)], got, 'counts add: the AWD of two halves sums to the whole');
});

test('sumAwd: elementwise sum of arrays of different lengths', (t) => {
  t.deepEqual([...sumAwd([])], []);
  t.deepEqual([...sumAwd([Int32Array.of(5, 3, 1), Int32Array.of(2), new Int32Array(0), Int32Array.of(1, 1, 1, 1)])], [8, 4, 2, 1]);
  fc.assert(
    fc.property(fc.array(fc.array(sample, { maxLength: 60 }), { maxLength: 6 }), (days) => {
      const summed = sumAwd(days.map((x) => accumulatedWorkDuration(Float64Array.from(x), 1)));
      return [...summed].join() === plainAwd(days.flat(), 1).join();
    }),
  );
});

test('awdPercentiles agrees with numpy on fixed data', (t) => {
  // numpy.percentile(values, [50, 75, 90]) for each level's column of daily values.
  const days = [Int32Array.of(1, 0, 7, 3), Int32Array.of(2, 0, 7, 3), Int32Array.of(3, 10, 7), Int32Array.of(4)];
  const r = awdPercentiles(days, [0.5, 0.75, 0.9]);
  t.deepEqual([...r.max], [4, 10, 7, 3]);
  t.deepEqual([...r.quantiles[0]!], [2.5, 0, 7, 1.5]); // level 1: [1,2,3,4]; level 2: [0,0,10,0]
  t.deepEqual([...r.quantiles[1]!], [3.25, 2.5, 7, 3]);
  t.deepEqual(
    [...r.quantiles[2]!].map((v) => Number(v.toFixed(10))),
    [3.7, 7, 7, 3],
  );
  const seven = awdPercentiles(
    [0, 3, 3, 5, 120, 600, 2].map((v) => Int32Array.of(v)),
    [0.5, 0.75, 0.9],
  );
  t.deepEqual(
    seven.quantiles.map((q) => Number(q[0]!.toFixed(10))),
    [3, 62.5, 312],
  ); // numpy: [3., 62.5, 312.]
  const one = awdPercentiles([Int32Array.of(7)], [0, 0.5, 0.9, 1]);
  t.deepEqual(
    one.quantiles.map((q) => q[0]),
    [7, 7, 7, 7],
  );
});

test('awdPercentiles matches the plain quantile on random days (missing levels count 0)', (t) => {
  const day = fc.array(fc.integer({ min: 0, max: 5000 }), { maxLength: 40 }).map((v) => Int32Array.from(v.sort((a, b) => b - a)));
  fc.assert(
    fc.property(fc.array(day, { maxLength: 30 }), fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 4 }), (days, qs) => {
      const r = awdPercentiles(days, qs);
      const top = Math.max(0, ...days.map((d) => d.length));
      if (r.max.length !== top || r.quantiles.length !== qs.length) return false;
      for (let k = 0; k < top; k++) {
        const column = days.map((d) => (k < d.length ? d[k]! : 0));
        if (r.max[k] !== Math.max(...column)) return false;
        for (let j = 0; j < qs.length; j++) {
          const want = plainQuantile(column, qs[j]!);
          if (Math.abs(r.quantiles[j]![k]! - want) > 1e-9 * Math.max(1, want)) return false;
        }
      }
      return true;
    }),
    { numRuns: 300 },
  );
  t.deepEqual(awdPercentiles([], [0.9]), { max: new Int32Array(0), quantiles: [new Float64Array(0)] });
  t.throws(() => awdPercentiles([Int32Array.of(1)], [1.5]), { instanceOf: RangeError });
  t.throws(() => awdPercentiles([Int32Array.of(1)], [Number.NaN]), { instanceOf: RangeError });
});
