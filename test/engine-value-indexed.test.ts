import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import fc from 'fast-check';
import { parseFit } from '../engine/ingest/fit.ts';
import { levelOf } from '../engine/curves/levels.ts';
import { meanMaxPlain } from '../engine/curves/mean-max-plain.ts';
import { resample } from '../engine/ingest/resample.ts';
import { type ValueIndexedCurve, mergeCurves, mergeValueIndexed, valueIndexed } from '../engine/curves/value-indexed.ts';
import { fixturesDir } from './helpers/fixtures.ts';

/** The definition: for each level k = 1..K, scan every duration for the longest one at level ≥ k. */
function plainValueIndexed(best: number[], start: number[], step: number) {
  const levels = best.map((v) => (Number.isNaN(v) ? -1 : levelOf(v, step)));
  const top = Math.max(0, ...levels);
  const duration: number[] = [];
  const starts: number[] = [];
  for (let k = 1; k <= top; k++) {
    let longest = 0;
    for (let d = 1; d <= best.length; d++) if (levels[d - 1]! >= k) longest = d;
    duration.push(longest);
    starts.push(start[longest - 1]!);
  }
  return { duration, start: starts };
}

/** The exact mean-max for every duration 1..n, pauses (NaN) counted as 0. */
function fullCurve(x: ArrayLike<number>) {
  const n = x.length;
  const samples = Float64Array.from(x, (v) => (Number.isNaN(v) ? 0 : v));
  const best = new Float64Array(n);
  const start = new Int32Array(n);
  meanMaxPlain(
    samples,
    Int32Array.from({ length: n }, (_, i) => i + 1),
    best,
    start,
  );
  return { best, start };
}

const plainOf = (c: ValueIndexedCurve) => ({ duration: [...c.duration], start: [...c.start] });

const series = fc.oneof(
  fc.array(fc.integer({ min: -50, max: 800 }), { maxLength: 150 }),
  fc.array(fc.constantFrom(0, 0, 0, 250, 400, Number.NaN), { maxLength: 150 }), // pauses: the curve rises again
  fc.array(fc.double({ min: 0, max: 8, noNaN: true }), { maxLength: 150 }), // speeds in m/s
);

test('valueIndexed matches the definition on arbitrary (non-monotone, NaN) curves', (t) => {
  const curve = fc.array(fc.oneof(fc.double({ min: -20, max: 500, noNaN: true }), fc.constant(Number.NaN)), { maxLength: 200 });
  fc.assert(
    fc.property(curve, fc.constantFrom(1, 0.01), (best, step) => {
      const start = best.map((_, i) => 1000 + i * 7);
      const got = valueIndexed(Float64Array.from(best), Int32Array.from(start), step);
      const want = plainValueIndexed(best, start, step);
      return got.duration.join() === want.duration.join() && got.start.join() === want.start.join();
    }),
    { numRuns: 500 },
  );
  t.pass();
});

test('valueIndexed of exact mean-max curves of series with pauses matches the definition', (t) => {
  fc.assert(
    fc.property(series, (x) => {
      const step = x.some((v) => !Number.isInteger(v) && !Number.isNaN(v)) ? 0.01 : 1;
      const { best, start } = fullCurve(x);
      const got = plainOf(valueIndexed(best, start, step));
      const want = plainValueIndexed([...best], [...start], step);
      return got.duration.join() === want.duration.join() && got.start.join() === want.start.join();
    }),
    { numRuns: 300 },
  );
  t.pass();
});

test('valueIndexed: when the curve rises again after a pause, the longest duration wins, not the first drop', (t) => {
  // mean-max of [5, 5, 0, 6]: d=1 → 6 (start 3), d=2 → 5 (0), d=3 → 11/3 (1), d=4 → 4 (0): it rises at d=4.
  const { best, start } = fullCurve([5, 5, 0, 6]);
  t.deepEqual(
    [...best].map((v) => Number(v.toFixed(6))),
    [6, 5, 3.666667, 4],
  );
  const got = valueIndexed(best, start, 1);
  t.deepEqual(plainOf(got), { duration: [4, 4, 4, 4, 2, 1], start: [0, 0, 0, 0, 0, 3] });
  // A hand-made non-monotone curve: level 3 at d=1, 1 at d=2, 2 at d=3.
  const hand = valueIndexed(Float64Array.of(3, 1, 2), Int32Array.of(10, 20, 30), 1);
  t.deepEqual(plainOf(hand), { duration: [3, 3, 1], start: [30, 30, 10] });
});

test('valueIndexed edge cases: empty, one sample, NaN only, below level 1, too high', (t) => {
  t.deepEqual(plainOf(valueIndexed(new Float64Array(0), new Int32Array(0), 1)), { duration: [], start: [] });
  t.deepEqual(plainOf(valueIndexed(Float64Array.of(2.5), Int32Array.of(0), 1)), { duration: [1, 1], start: [0, 0] });
  t.deepEqual(plainOf(valueIndexed(Float64Array.of(Number.NaN, Number.NaN), Int32Array.of(-1, -1), 1)), { duration: [], start: [] });
  t.deepEqual(plainOf(valueIndexed(Float64Array.of(-5, 0.5, -1), Int32Array.of(0, 0, 0), 1)), { duration: [], start: [] });
  t.deepEqual(plainOf(valueIndexed(Float64Array.of(0.03, 0.02, Number.NaN), Int32Array.of(4, 2, -1), 0.01)), {
    duration: [2, 2, 1],
    start: [2, 2, 4],
  });
  t.throws(() => valueIndexed(Float64Array.of(1e12), Int32Array.of(0), 1), { instanceOf: RangeError });
});

test('valueIndexed of a real ride matches the definition', async (t) => {
  const [rec] = await parseFit(readFileSync(join(fixturesDir(), 'fit', '4078723797.fit')));
  const { best, start } = fullCurve(resample(rec!).channels.power!);
  const got = plainOf(valueIndexed(best, start, 1));
  t.deepEqual(got, plainValueIndexed([...best], [...start], 1));
  t.true(got.duration.length > 500);
});

/** The definition of the value-indexed merge: per level, the first curve with the longest duration. */
function plainMergeValueIndexed(curves: ValueIndexedCurve[]) {
  const top = Math.max(0, ...curves.map((c) => c.duration.length));
  const out = { duration: [] as number[], start: [] as number[], owner: [] as number[] };
  for (let k = 0; k < top; k++) {
    let owner = -1;
    for (let c = 0; c < curves.length; c++) {
      const d = k < curves[c]!.duration.length ? curves[c]!.duration[k]! : 0;
      if (d > 0 && (owner === -1 || d > curves[owner]!.duration[k]!)) owner = c;
    }
    out.duration.push(owner === -1 ? 0 : curves[owner]!.duration[k]!);
    out.start.push(owner === -1 ? -1 : curves[owner]!.start[k]!);
    out.owner.push(owner);
  }
  return out;
}

test('mergeValueIndexed matches the definition; ties go to the earliest curve', (t) => {
  fc.assert(
    fc.property(fc.array(series, { maxLength: 8 }), (activities) => {
      const curves = activities.map((x) => {
        const { best, start } = fullCurve(x);
        return valueIndexed(best, start, 1);
      });
      const got = mergeValueIndexed(curves);
      const want = plainMergeValueIndexed(curves);
      return (
        got.duration.join() === want.duration.join() && got.start.join() === want.start.join() && got.owner.join() === want.owner.join()
      );
    }),
    { numRuns: 300 },
  );
  const a = { duration: Int32Array.of(5, 3), start: Int32Array.of(1, 2) };
  const b = { duration: Int32Array.of(5, 4, 1), start: Int32Array.of(7, 8, 9) };
  const merged = mergeValueIndexed([a, b]);
  t.deepEqual([...merged.duration], [5, 4, 1]);
  t.deepEqual([...merged.start], [1, 8, 9]);
  t.deepEqual([...merged.owner], [0, 1, 1], 'a tie keeps the earlier curve; a shorter curve lacks level 3');
  t.deepEqual(plainOf(mergeValueIndexed([])), { duration: [], start: [] });
});

test('the value-indexed merge equals the value-indexed orientation of the duration-indexed merge', (t) => {
  fc.assert(
    fc.property(fc.array(series, { minLength: 1, maxLength: 6 }), (activities) => {
      const full = activities.map((x) => fullCurve(x));
      const perActivity = full.map((c) => valueIndexed(c.best, c.start, 1));
      const merged = mergeValueIndexed(perActivity);
      const viaDurations = mergeCurves(full);
      const oriented = valueIndexed(viaDurations.best, viaDurations.start, 1);
      if (merged.duration.join() !== oriented.duration.join()) return false;
      // The owner really sustains the level for that long, from that start.
      for (let k = 1; k <= merged.duration.length; k++) {
        const owner = full[merged.owner[k - 1]!]!;
        const d = merged.duration[k - 1]!;
        if (levelOf(owner.best[d - 1]!, 1) < k || owner.start[d - 1] !== merged.start[k - 1]) return false;
      }
      return true;
    }),
    { numRuns: 300 },
  );
  t.pass();
});

/** The definition of the duration-indexed merge: per index the first curve with the highest value. */
function plainMergeCurves(curves: { best: Float64Array; start: Int32Array }[]) {
  const length = Math.max(0, ...curves.map((c) => c.best.length));
  const out = { best: [] as number[], start: [] as number[], owner: [] as number[] };
  for (let i = 0; i < length; i++) {
    let owner = -1;
    for (let c = 0; c < curves.length; c++) {
      const v = i < curves[c]!.best.length ? curves[c]!.best[i]! : Number.NaN;
      if (!Number.isNaN(v) && (owner === -1 || v > curves[owner]!.best[i]!)) owner = c;
    }
    out.best.push(owner === -1 ? Number.NaN : curves[owner]!.best[i]!);
    out.start.push(owner === -1 ? -1 : curves[owner]!.start[i]!);
    out.owner.push(owner);
  }
  return out;
}

test('mergeCurves matches the definition: NaN absent, ties to the earliest curve', (t) => {
  const value = fc.oneof(fc.constantFrom(Number.NaN, 100, 200), fc.integer({ min: -10, max: 300 }));
  const curve = fc.array(value, { maxLength: 30 }).map((v) => ({
    best: Float64Array.from(v),
    start: Int32Array.from(v, (_, i) => i * 3 + 1),
  }));
  fc.assert(
    fc.property(fc.array(curve, { maxLength: 8 }), (curves) => {
      const got = mergeCurves(curves);
      const want = plainMergeCurves(curves);
      return [...got.best].join() === want.best.join() && got.start.join() === want.start.join() && got.owner.join() === want.owner.join();
    }),
    { numRuns: 500 },
  );
  const merged = mergeCurves([
    { best: Float64Array.of(300, Number.NaN, 5), start: Int32Array.of(1, -1, 3) },
    { best: Float64Array.of(300, Number.NaN, 6), start: Int32Array.of(9, -1, 9) },
  ]);
  t.deepEqual([...merged.best], [300, Number.NaN, 6]);
  t.deepEqual([...merged.start], [1, -1, 9]);
  t.deepEqual([...merged.owner], [0, -1, 1]);
  t.is(mergeCurves([]).best.length, 0);
});

test('merging 1,000 curves of ~1,000 levels / durations: each level and duration goes to the best curve', (t) => {
  // Their speed is measured by `npm run bench -- curves` (the longitudinal mean-max engine row), not here.
  let seed = 42;
  const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  const valueCurves: ValueIndexedCurve[] = [];
  const durationCurves: { best: Float64Array; start: Int32Array }[] = [];
  for (let c = 0; c < 1000; c++) {
    const levels = 900 + Math.floor(random() * 200);
    const duration = new Int32Array(levels);
    let d = 20_000;
    for (let k = 0; k < levels; k++) duration[k] = d = Math.max(1, d - Math.floor(random() * 40));
    valueCurves.push({ duration, start: Int32Array.from(duration, () => Math.floor(random() * 10_000)) });
    durationCurves.push({
      best: Float64Array.from({ length: 1000 }, (_, i) => 1000 / Math.sqrt(i + 1) + random() * 50),
      start: Int32Array.from({ length: 1000 }, () => Math.floor(random() * 10_000)),
    });
  }
  const merged = mergeValueIndexed(valueCurves);
  t.is(merged.duration.length, Math.max(...valueCurves.map((c) => c.duration.length)));
  const wrong: string[] = [];
  for (let k = 0; k < merged.duration.length; k++) {
    const best = Math.max(...valueCurves.map((c) => (k < c.duration.length ? c.duration[k]! : -1)));
    if (merged.duration[k] !== best || valueCurves[merged.owner[k]!]!.duration[k] !== best) wrong.push(`level ${k + 1}`);
  }
  const byDuration = mergeCurves(durationCurves);
  for (let i = 0; i < 1000; i++) {
    const best = Math.max(...durationCurves.map((c) => c.best[i]!));
    if (byDuration.best[i] !== best || durationCurves[byDuration.owner[i]!]!.best[i] !== best) wrong.push(`duration ${i + 1}`);
  }
  t.deepEqual(wrong, []);
});
