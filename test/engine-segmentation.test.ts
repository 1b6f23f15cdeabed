import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import fc from 'fast-check';
import { parseFit } from '../engine/ingest/fit.ts';
import { meanMaxPlain } from '../engine/curves/mean-max-plain.ts';
import { resample } from '../engine/ingest/resample.ts';
import { SEGMENT_TOLERANCE, type Segmentation, expandSegments, segment, segmentMeans } from '../engine/frames/segmentation.ts';
import { fixturesDir } from './helpers/fixtures.ts';

/** Exact mean-max at every duration 1..n, NaN counted as 0. */
function curve(x: ArrayLike<number>): Float64Array {
  const n = x.length;
  const best = new Float64Array(n);
  meanMaxPlain(
    Float64Array.from(x, (v) => (Number.isNaN(v) ? 0 : v)),
    Int32Array.from({ length: n }, (_, i) => i + 1),
    best,
    new Int32Array(n),
  );
  return best;
}

/** The largest |meanMax(served)(d) − meanMax(x)(d)| over every duration. */
function worstError(x: Float64Array, tolerance: number): number {
  const seg = segment(x, tolerance);
  const served = expandSegments(seg, segmentMeans(x, seg), x.length);
  const exact = curve(x);
  const approx = curve(served);
  let worst = 0;
  for (let d = 0; d < x.length; d++) worst = Math.max(worst, Math.abs(approx[d]! - exact[d]!));
  return worst;
}

/** The definition checked piece by piece: cover [0, n) in order; NaN runs alone; greedy and within tolerance. */
function isGreedySegmentation(x: number[], seg: Segmentation, tolerance: number): boolean {
  let next = 0;
  for (let j = 0; j < seg.start.length; j++) {
    const from = seg.start[j]!;
    const len = seg.length[j]!;
    if (from !== next || len < 1) return false;
    const values = x.slice(from, from + len);
    const nan = values.map((v) => Number.isNaN(v));
    if (nan.some((b) => b !== nan[0])) return false; // NaN never shares a segment with numbers
    const following = x[from + len];
    if (nan[0]) {
      if (following !== undefined && Number.isNaN(following)) return false; // a NaN run is one segment
    } else {
      if (Math.max(...values) - Math.min(...values) > tolerance) return false;
      // greedy: the next number would have broken the tolerance
      if (following !== undefined && !Number.isNaN(following)) {
        const grown = [...values, following];
        if (Math.max(...grown) - Math.min(...grown) <= tolerance) return false;
      }
    }
    next = from + len;
  }
  return next === x.length;
}

const series = fc.oneof(
  fc.array(fc.integer({ min: -20, max: 1200 }), { maxLength: 120 }),
  fc.array(fc.integer({ min: 0, max: 12 }), { maxLength: 120 }), // ranges exactly at the tolerance
  fc.array(fc.double({ min: 0, max: 400, noNaN: true }), { maxLength: 120 }),
  fc.array(fc.oneof(fc.constantFrom(Number.NaN, 0, 250), fc.double({ min: 240, max: 262, noNaN: true })), { maxLength: 120 }),
  // a random walk: long drifting segments, the case where the greedy choice matters
  fc.array(fc.double({ min: -3, max: 3, noNaN: true }), { maxLength: 150 }).map((steps) => {
    let v = 200;
    return steps.map((s) => (v += s));
  }),
);

test('segments cover [0, n) in order, NaN runs alone, each the longest within the tolerance', (t) => {
  fc.assert(
    fc.property(series, fc.constantFrom(0, 1, 5, 12.5), (x, tolerance) => {
      return isGreedySegmentation(x, segment(Float64Array.from(x), tolerance), tolerance);
    }),
    { numRuns: 500 },
  );
  t.pass();
});

test('error bound: every duration of the served mean-max is within the tolerance of the exact one', (t) => {
  fc.assert(
    fc.property(series, fc.constantFrom(1, 5, 12.5, 40), (x, tolerance) => {
      return worstError(Float64Array.from(x), tolerance) <= tolerance * (1 + 1e-12) + 1e-9;
    }),
    { numRuns: 400 },
  );
  // The bound is not loose everywhere: a two-level step reaches half of it at d = 1.
  t.is(worstError(Float64Array.of(100, 105, 0), 5), 2.5);
});

test('the error bound holds on real rides, for power and for speed', async (t) => {
  for (const file of ['4078723797.fit', 'HRV-Data.fit']) {
    const [rec] = await parseFit(readFileSync(join(fixturesDir(), 'fit', file)));
    const grid = resample(rec!);
    for (const metric of ['power', 'speed'] as const) {
      const x = grid.channels[metric];
      if (!x) continue;
      const tolerance = SEGMENT_TOLERANCE[metric];
      const rows = segment(x, tolerance).start.length;
      const worst = worstError(x, tolerance);
      t.log(`${file} ${metric}: ${x.length} s → ${rows} segments, worst mean-max error ${worst.toFixed(4)} (bound ${tolerance})`);
      t.true(worst <= tolerance + 1e-9, `${file} ${metric}`);
      t.true(rows < x.length);
    }
  }
});

test('edge cases: empty, one sample, NaN only, constant, a long pause', (t) => {
  const seg = (x: number[], tolerance = 5) => {
    const s = segment(Float64Array.from(x), tolerance);
    return { start: [...s.start], length: [...s.length] };
  };
  t.deepEqual(seg([]), { start: [], length: [] });
  t.deepEqual(seg([42]), { start: [0], length: [1] });
  t.deepEqual(seg([Number.NaN, Number.NaN, Number.NaN]), { start: [0], length: [3] });
  t.deepEqual(seg(new Array<number>(10_000).fill(250), 0), { start: [0], length: [10_000] });
  t.deepEqual(seg([-3, -3, -3]), { start: [0], length: [3] });
  const pause = [250, 252, ...new Array<number>(3600).fill(Number.NaN), 0, 0, 0, 251];
  t.deepEqual(seg(pause), { start: [0, 2, 3602, 3605], length: [2, 3600, 3, 1] });
  t.deepEqual(seg([0, 5, 10, 6, 1, 0]), { start: [0, 2, 4], length: [2, 2, 2] }, 'max − min, not the distance to the first');
  t.deepEqual(seg([0, 5, 2, 6]), { start: [0, 3], length: [3, 1] });
  t.deepEqual(seg([5, 0, 5, 0, 5]), { start: [0], length: [5] }, 'a range equal to the tolerance is allowed');
  t.deepEqual(seg([0, Number.NaN, 0]), { start: [0, 1, 2], length: [1, 1, 1] });
  fc.assert(
    fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer({ min: 1, max: 500 }), (v, n) => {
      const s = segment(new Float64Array(n).fill(v), 0);
      return s.start.length === 1 && s.length[0] === n;
    }),
  );
});

test('segmentMeans averages the non-NaN values of any channel; expandSegments is piecewise constant', (t) => {
  const power = Float64Array.of(100, 102, 104, Number.NaN, Number.NaN, 300, 301);
  const seg = segment(power, 5);
  t.deepEqual([...seg.start], [0, 3, 5]);
  t.deepEqual([...segmentMeans(power, seg)], [102, Number.NaN, 300.5]);
  const heartRate = Float64Array.of(120, Number.NaN, 124, 130, 131, Number.NaN, Number.NaN);
  const hr = segmentMeans(heartRate, seg);
  t.deepEqual([...hr], [122, 130.5, Number.NaN], 'another channel over the same segments; no value → NaN');
  t.deepEqual([...expandSegments(seg, hr, 7)], [122, 122, 122, 130.5, 130.5, Number.NaN, Number.NaN]);
  t.deepEqual([...expandSegments({ start: new Int32Array(0), length: new Int32Array(0) }, new Float64Array(0), 0)], []);
  fc.assert(
    fc.property(series, (x) => {
      const values = Float64Array.from(x);
      const s = segment(values, 5);
      const means = segmentMeans(values, s);
      const served = expandSegments(s, means, x.length);
      for (let j = 0; j < s.start.length; j++) {
        const part = x.slice(s.start[j]!, s.start[j]! + s.length[j]!).filter((v) => !Number.isNaN(v));
        const want = part.length === 0 ? Number.NaN : part.reduce((a, b) => a + b, 0) / part.length;
        if (!Object.is(means[j], want) && Math.abs(means[j]! - want) > 1e-9) return false;
      }
      // every sample is within the tolerance of what is served for it; NaN stays NaN
      return x.every((v, i) => (Number.isNaN(v) ? Number.isNaN(served[i]!) : Math.abs(served[i]! - v) <= 5 + 1e-9));
    }),
    { numRuns: 300 },
  );
});

test('the tolerances per metric', (t) => {
  t.deepEqual({ ...SEGMENT_TOLERANCE }, { power: 5, speed: 0.05 });
});
