/**
 * The fatigue grid (engine/curves/after-grid.ts): rides' entries merged give, value for value, window
 * start and owning ride, what the samples give, by the plain definition and by the kernel that
 * answers off-grid requests (longitudinalAfter), ties across and within rides included.
 */
import test from 'ava';
import fc from 'fast-check';
import {
  AFTER_GRID,
  afterGridEntry,
  bracket,
  gridDurations,
  gridPoint,
  mergeAfterGrid,
  ridesThatCanMatter,
  type GridShape,
} from '../engine/curves/after-grid.ts';
import { longitudinalAfter, workCuts, type Slices } from '../engine/curves/longitudinal.ts';
import { DEFAULT_DURATIONS } from '../engine/curves/durations.ts';

/** A small grid for short test rides: every 20 kJ, 12 points, the default durations. */
const SMALL: GridShape = { step: 20_000, points: 12, durations: Int32Array.from(DEFAULT_DURATIONS) };

function pack(arrays: Float64Array[]): Slices {
  const from = new Int32Array(arrays.length);
  arrays.reduce((at, x, a) => ((from[a] = at), at + x.length), 0);
  const values = new Float64Array(arrays.reduce((n, x) => n + x.length, 0));
  arrays.forEach((x, a) => values.set(x, from[a]!));
  return { values, from, length: Int32Array.from(arrays, (x) => x.length) };
}

/** The best window of d samples starting at ≥ from, the earliest on ties (NaN / −1: none). */
function plain(x: Float64Array, d: number, from: number): { best: number; start: number } {
  let best = Number.NaN;
  let start = -1;
  for (let i = from; i + d <= x.length; i++) {
    let sum = 0;
    for (let k = i; k < i + d; k++) sum += x[k]!;
    if (start < 0 || sum > best) [best, start] = [sum, i];
  }
  return start < 0 ? { best: Number.NaN, start: -1 } : { best: best / d, start };
}

const zeroed = (x: Float64Array) => x.map((v) => (v === v ? v : 0));

// Rides from a few power levels (many exact ties) or any whole watts, with gaps (NaN).
const rideArb = fc.oneof(
  fc.array(fc.constantFrom(0, 100, 200, 250, 300), { minLength: 1, maxLength: 700 }),
  fc.array(fc.oneof({ weight: 19, arbitrary: fc.integer({ min: 0, max: 900 }) }, { weight: 1, arbitrary: fc.constant(Number.NaN) }), {
    minLength: 1,
    maxLength: 1500,
  }),
);

test('merged grid entries equal the samples: the plain definition and the kernel, values, starts and owners, older ride on ties', (t) => {
  fc.assert(
    fc.property(
      fc.array(rideArb, { minLength: 1, maxLength: 6 }),
      fc.uniqueArray(fc.integer({ min: 0, max: 11 }), { minLength: 1, maxLength: 5 }),
      (raw, pointList) => {
        const rides = raw.map((r) => Float64Array.from(r));
        const points = Int32Array.from(pointList.sort((a, b) => a - b));
        const longest = Math.max(...rides.map((r) => r.length));
        const durations = Int32Array.from(DEFAULT_DURATIONS.filter((d) => d <= longest));
        const columns = gridDurations(durations, SMALL)!;
        const got = mergeAfterGrid(pack(rides.map((r) => afterGridEntry(r, SMALL))), points, columns, SMALL);
        const thresholds = Float64Array.from(points, (k) => k * SMALL.step);
        const kernel = longitudinalAfter({ samples: pack(rides.map(zeroed)), thresholds, durations, step: 1 });
        if (kernel.kind !== 'duration') throw new Error('by duration');
        points.forEach((_, j) => {
          durations.forEach((d, i) => {
            let want = { best: Number.NaN, start: -1, owner: -1 };
            rides.forEach((r, a) => {
              const x = zeroed(r);
              const cut = workCuts(x, thresholds)[j]!;
              const p = plain(x, d, cut);
              if (p.start >= 0 && !(want.best >= p.best)) want = { ...p, owner: a };
            });
            const g = got[j]!;
            const k = kernel.curves[j]!;
            const where = `point ${points[j]}, d=${d}`;
            t.true(
              Object.is(g.best[i], want.best) || Math.abs(g.best[i]! - want.best) < 1e-9,
              `${where}: ${g.best[i]} vs plain ${want.best}`,
            );
            t.is(g.owner[i], want.owner, `${where}: owner`);
            t.is(g.start[i], want.start, `${where}: start`);
            t.true(Object.is(g.best[i], k.best[i]), `${where}: the kernel's value exactly`);
            t.is(g.start[i], k.start[i], `${where}: the kernel's start`);
            t.is(g.owner[i], k.owner[i], `${where}: the kernel's owner`);
          });
        });
      },
    ),
    { seed: 25_2026, numRuns: 150 },
  );
});

test('an entry: the points the ride reaches before its last sample, start −1 beyond the part left', (t) => {
  // 100 W for 1,000 s: 100 kJ; points every 20 kJ reached at 200, 400, … 800 s (1,000 s: the end, not reached).
  const x = new Float64Array(1000).fill(100);
  const entry = afterGridEntry(x, SMALL);
  const D = SMALL.durations.length;
  t.is(entry[0], 5, 'points 0, 20, 40, 60, 80 kJ');
  t.is(entry.length, 1 + 5 * 2 * D);
  const d600 = SMALL.durations.indexOf(600);
  const point = (k: number) => ({
    best: Array.from(entry.subarray(1 + k * 2 * D, 1 + k * 2 * D + D)),
    start: Array.from(entry.subarray(1 + k * 2 * D + D, 1 + (k + 1) * 2 * D)),
  });
  t.is(point(0).best[d600], 100);
  t.is(point(0).start[d600], 0);
  t.is(point(2).start[d600], 400, '40 kJ reached after 400 s: 600 s left');
  t.is(point(3).start[d600], -1, '60 kJ: 400 s left, no 600 s window');
  t.is(point(4).start[SMALL.durations.indexOf(1)], 800);
  t.true(
    point(4)
      .start.slice(SMALL.durations.indexOf(300))
      .every((s) => s === -1),
  );
  t.deepEqual(Array.from(afterGridEntry(new Float64Array(0), SMALL)), [0], 'an empty ride reaches no point');
  t.deepEqual(
    Array.from(afterGridEntry(Float64Array.of(Number.NaN, Number.NaN), SMALL)).slice(0, 1),
    [1],
    'gaps count as 0 W: point 0 only',
  );
});

test('gridPoint and gridDurations: only whole multiples of 250 kJ up to 10,000 kJ and the default durations', (t) => {
  t.is(gridPoint(0), 0);
  t.is(gridPoint(250_000), 1);
  t.is(gridPoint(1_500_000), 6);
  t.is(gridPoint(10_000_000), 40);
  t.is(gridPoint(10_250_000), -1);
  t.is(gridPoint(100_000), -1);
  t.is(gridPoint(250_000.5), -1);
  t.deepEqual(Array.from(gridDurations(Int32Array.of(1, 60, 21600))!), [0, 7, 18]);
  t.is(gridDurations(Int32Array.of(5, 61)), null);
  t.is(AFTER_GRID.durations.length, DEFAULT_DURATIONS.length);
});

test('an entry whose length does not match its point count is refused, not misread', (t) => {
  const entry = afterGridEntry(new Float64Array(500).fill(200), SMALL);
  const cut = entry.subarray(0, entry.length - 1);
  t.throws(() => mergeAfterGrid(pack([cut]), Int32Array.of(0), Int32Array.of(0), SMALL), { message: /does not hold/ });
});

test('off the grid: the kernel over only the rides the grid cannot rule out gives what it gives over every ride', (t) => {
  let skipped = 0;
  let rides = 0;
  fc.assert(
    fc.property(
      fc.array(rideArb, { minLength: 1, maxLength: 8 }),
      fc.uniqueArray(fc.integer({ min: 0, max: 260_000 }), { minLength: 1, maxLength: 5 }),
      (raw, thresholdList) => {
        const all = raw.map((r) => zeroed(Float64Array.from(r)));
        const thresholds = Float64Array.from(thresholdList.sort((a, b) => a - b));
        const longest = Math.max(...all.map((r) => r.length));
        const durations = Int32Array.from(DEFAULT_DURATIONS.filter((d) => d <= longest));
        const columns = gridDurations(durations, SMALL)!;
        const brackets = Array.from(thresholds, (x) => bracket(x, SMALL));
        const needed = ridesThatCanMatter(
          pack(all.map((r) => afterGridEntry(r, SMALL))),
          Int32Array.from(brackets, (b) => b.lo),
          Int32Array.from(brackets, (b) => b.hi),
          columns,
          SMALL,
        );
        const keep = all.flatMap((_, a) => (needed[a] ? [a] : []));
        skipped += all.length - keep.length;
        rides += all.length;
        const every = longitudinalAfter({ samples: pack(all), thresholds, durations, step: 1 });
        const some = longitudinalAfter({ samples: pack(keep.map((a) => all[a]!)), thresholds, durations, step: 1 });
        if (every.kind !== 'duration' || some.kind !== 'duration') throw new Error('by duration');
        every.curves.forEach((c, j) => {
          const s = some.curves[j]!;
          t.deepEqual(Array.from(s.best), Array.from(c.best), `threshold ${thresholds[j]}: values`);
          t.deepEqual(Array.from(s.start), Array.from(c.start), `threshold ${thresholds[j]}: starts`);
          t.deepEqual(
            Array.from(s.owner, (o) => (o < 0 ? o : keep[o]!)),
            Array.from(c.owner),
            `threshold ${thresholds[j]}: owners`,
          );
        });
      },
    ),
    { seed: 25_2027, numRuns: 200 },
  );
  t.true(skipped > rides / 4, `the grid rules out rides (${skipped} of ${rides})`);
});

test('off the grid, ties with the floor are kept: a steady ride (the same best after lo as after hi) and its older copy', (t) => {
  const steady = new Float64Array(600).fill(300);
  const durations = Int32Array.from(DEFAULT_DURATIONS.filter((d) => d <= 600));
  const columns = gridDurations(durations, SMALL)!;
  const b = bracket(30_000, SMALL);
  const needed = (rides: Float64Array[]) =>
    Array.from(
      ridesThatCanMatter(pack(rides.map((r) => afterGridEntry(r, SMALL))), Int32Array.of(b.lo), Int32Array.of(b.hi), columns, SMALL),
    );
  t.deepEqual(needed([steady]), [1], 'its bound equals the floor it sets: it holds the answer');
  t.deepEqual(needed([steady, steady.slice()]), [1, 1], 'both copies: the older one owns the answer');
  t.deepEqual(needed([steady, new Float64Array(600).fill(100)]), [1, 0], 'a weaker ride is not read');
  t.deepEqual(
    needed([new Float64Array(20).fill(900), steady]),
    [0, 1],
    'a ride that never reaches 20 kJ (lo), however strong, is not read',
  );
});

test('bracket: the grid points around a threshold', (t) => {
  t.deepEqual(bracket(0), { lo: 0, hi: 0 });
  t.deepEqual(bracket(300_000), { lo: 1, hi: 2 });
  t.deepEqual(bracket(500_000), { lo: 2, hi: 2 });
  t.deepEqual(bracket(9_999_999), { lo: 39, hi: 40 });
  t.deepEqual(bracket(10_000_000), { lo: 40, hi: 40 });
  t.deepEqual(bracket(12_345_000), { lo: 40, hi: -1 }, 'beyond the grid: an upper bound only');
  t.deepEqual(bracket(0.5), { lo: 0, hi: 1 });
});

test('bracket: a threshold past every float step answers at once, bounded by the grid, not by the value', (t) => {
  // 1e20 kJ is 1e23 J: 4e17 steps, past 2^53, where k + 1 === k (the request that spun the event loop).
  for (const huge of [1e23, 2 ** 53 * 250_000, 1e300, Number.MAX_VALUE, Number.POSITIVE_INFINITY])
    t.deepEqual(bracket(huge), { lo: 40, hi: -1 }, String(huge));
  t.deepEqual(bracket(10_250_000), { lo: 40, hi: -1 }, 'the first multiple of the step past the grid');
  t.deepEqual(bracket(Number.NaN), { lo: 0, hi: 1 }, 'not a number: read as no work (the API refuses it first)');
});
