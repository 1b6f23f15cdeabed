import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import fc from 'fast-check';
import { parseFit } from '../engine/ingest/fit.ts';
import { meanMax, meanMaxAfter, meanMaxAll } from '../engine/curves/mean-max.ts';
import { meanMaxPlain } from '../engine/curves/mean-max-plain.ts';
import { findTemplate } from '../engine/curves/mean-max/template.ts';
import { resample } from '../engine/ingest/resample.ts';
import { fixturesDir } from './helpers/fixtures.ts';

interface Curve {
  best: Float64Array;
  start: Int32Array;
}

/** The plain definition over the starts ≥ from, with prefix sums over the whole series (strictly greater keeps the earliest start). */
function scanFrom(x: Float64Array, durations: Int32Array, from: number): Curve {
  const n = x.length;
  const best = new Float64Array(durations.length);
  const start = new Int32Array(durations.length);
  const prefix = new Float64Array(n + 1);
  for (let i = 0; i < n; i++) prefix[i + 1] = prefix[i]! + x[i]!;
  for (let k = 0; k < durations.length; k++) {
    const d = durations[k]!;
    let bestSum = -Infinity;
    let bestStart = -1;
    for (let i = from; i + d <= n; i++) {
      const sum = prefix[i + d]! - prefix[i]!;
      if (sum > bestSum) {
        bestSum = sum;
        bestStart = i;
      }
    }
    best[k] = d > n - from ? Number.NaN : bestSum / d;
    start[k] = bestStart;
  }
  return { best, start };
}

/**
 * The reference: meanMaxPlain itself when every start counts, else scanFrom (checked against
 * meanMaxPlain below); `floor` then blanks every duration whose best mean is not strictly above it.
 */
function reference(x: Float64Array, durations: Int32Array, from = 0, floor?: Float64Array): Curve {
  let curve: Curve;
  if (from === 0) {
    curve = { best: new Float64Array(durations.length), start: new Int32Array(durations.length) };
    meanMaxPlain(x, durations, curve.best, curve.start);
  } else curve = scanFrom(x, durations, from);
  if (floor) {
    for (let k = 0; k < durations.length; k++) {
      if (!Number.isNaN(floor[k]!) && !(curve.best[k]! > floor[k]!)) {
        curve.best[k] = Number.NaN;
        curve.start[k] = -1;
      }
    }
  }
  return curve;
}

/** Throws (so fast-check shrinks and reports) on the first duration whose value or start differs. */
function assertSame(got: Curve, want: Curve, durations: Int32Array, label: string): void {
  for (let k = 0; k < durations.length; k++) {
    if (!Object.is(got.best[k], want.best[k]) || got.start[k] !== want.start[k]) {
      throw new Error(`${label}: d=${durations[k]}: got ${got.best[k]} @ ${got.start[k]}, want ${want.best[k]} @ ${want.start[k]}`);
    }
  }
}

function fast(x: Float64Array, durations: Int32Array, options?: { from?: number; floor?: Float64Array }): Curve {
  const best = new Float64Array(durations.length);
  const start = new Int32Array(durations.length);
  meanMax(x, durations, best, start, options);
  return { best, start };
}

const all = (n: number) => Int32Array.from({ length: n }, (_, i) => i + 1);

/** A ride-like series: endurance power with noise, sprints, efforts and zero runs (coasting, stops). */
function rideLike(n: number, seed: number): Float64Array {
  let s = seed >>> 0 || 1;
  const rand = () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const x = new Float64Array(n);
  let zero = 0;
  let effort = 0;
  let watts = 0;
  for (let i = 0; i < n; i++) {
    const r = rand();
    if (zero === 0 && effort === 0) {
      if (r < 0.01) zero = 1 + Math.floor(rand() * 60);
      else if (r < 0.015) [effort, watts] = [3 + Math.floor(rand() * 15), 600 + Math.floor(rand() * 900)];
      else if (r < 0.017) [effort, watts] = [60 + Math.floor(rand() * 200), 300 + Math.floor(rand() * 80)];
    }
    if (zero > 0) {
      zero--;
      x[i] = 0;
    } else if (effort > 0) {
      effort--;
      x[i] = watts + Math.floor(rand() * 40);
    } else x[i] = 150 + Math.floor(80 * Math.sin(i / 300) + rand() * 120);
  }
  return x;
}

/** Series of every kind the kernel must get right: ties, pauses, constants, negatives, floats, extreme magnitudes, single samples. */
const series = (maxLength: number): fc.Arbitrary<number[]> =>
  fc.oneof(
    fc.array(fc.integer({ min: -50, max: 1500 }), { minLength: 1, maxLength, size: 'max' }),
    fc.array(fc.double({ min: -1000, max: 2000, noNaN: true }), { minLength: 1, maxLength, size: 'max' }),
    fc.array(
      fc.integer({ min: 0, max: 20_000 }).map((v) => v / 1000),
      { minLength: 1, maxLength, size: 'max' },
    ), // speeds in m/s
    fc
      .tuple(
        fc.integer({ min: 1, max: maxLength }),
        fc.oneof(fc.integer({ min: -300, max: 1500 }), fc.double({ min: -300, max: 1500, noNaN: true })),
      )
      .map(([n, v]) => new Array<number>(n).fill(v)),
    fc.array(fc.constantFrom(0, 250), { minLength: 1, maxLength, size: 'max' }), // long ties
    fc
      .array(
        fc.oneof(
          fc.integer({ min: 1, max: 80 }).map((k) => new Array<number>(k).fill(0)),
          fc.array(fc.integer({ min: 100, max: 400 }), { minLength: 1, maxLength: 60, size: 'max' }),
        ),
        { minLength: 1, maxLength: 12, size: 'max' },
      )
      .map((runs) => runs.flat()), // pauses
    fc.array(fc.integer({ min: -1500, max: 50 }), { minLength: 1, maxLength, size: 'max' }), // mostly negative
    fc.integer({ min: -2000, max: 2000 }).map((v) => [v]), // a single sample
    fc.tuple(fc.integer({ min: 50, max: maxLength }), fc.integer()).map(([n, seed]) => [...rideLike(n, seed)]),
    fc.array(
      fc.integer({ min: -(2 ** 30), max: 2 ** 30 }).map((v) => v * 2 ** 13),
      { minLength: 1, maxLength, size: 'max' },
    ), // huge integers: rounding margins
    fc.array(fc.double({ min: -1e-300, max: 1e-300, noNaN: true }), { minLength: 1, maxLength, size: 'max' }), // tiny and subnormal
  );

/** Duration sets: every duration, a contiguous run, a stride, or a random subset (some past the end). */
const durationsFor = (n: number): fc.Arbitrary<Int32Array> =>
  fc
    .oneof(
      fc.constant([...all(n)]),
      fc
        .tuple(fc.integer({ min: 1, max: n + 3 }), fc.integer({ min: 0, max: n + 3 }))
        .map(([a, len]) => Array.from({ length: len + 1 }, (_, i) => a + i)),
      fc
        .tuple(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 9 }))
        .map(([a, step]) => Array.from({ length: Math.ceil((n + 3) / step) }, (_, i) => a + i * step)),
      fc.uniqueArray(fc.integer({ min: 1, max: n + 5 }), { minLength: 1, maxLength: 60, size: 'max' }),
    )
    .map((ds) => Int32Array.from([...new Set(ds)].sort((a, b) => a - b)));

const withDurations = (maxLength: number) =>
  series(maxLength).chain((x) => fc.tuple(fc.constant(Float64Array.from(x)), durationsFor(x.length)));

test('meanMaxAll equals the plain scan on every duration (values and starts)', (t) => {
  fc.assert(
    fc.property(series(400), (xs) => {
      const x = Float64Array.from(xs);
      assertSame(meanMaxAll(x), reference(x, all(x.length)), all(x.length), 'meanMaxAll');
    }),
    { numRuns: 400 },
  );
  t.pass();
});

test('meanMax equals the plain scan on any set of durations', (t) => {
  fc.assert(
    fc.property(withDurations(400), ([x, durations]) => {
      assertSame(fast(x, durations), reference(x, durations), durations, 'meanMax');
    }),
    { numRuns: 400 },
  );
  t.pass();
});

test("meanMax with `from` counts only the windows starting there, with the whole series' prefix sums", (t) => {
  fc.assert(
    fc.property(
      withDurations(300).chain(([x, durations]) =>
        fc.tuple(
          fc.constant(x),
          fc.constant(durations),
          fc.oneof(fc.integer({ min: 0, max: x.length + 2 }), fc.constant(0), fc.constant(x.length)),
        ),
      ),
      ([x, durations, from]) => {
        assertSame(fast(x, durations, { from }), reference(x, durations, from), durations, `from ${from}`);
      },
    ),
    { numRuns: 400 },
  );
  t.pass();
});

/**
 * Floors around the true answer: none (NaN), exactly the best mean (must blank it: strictly
 * greater), just below it, just above it, far below, ±∞.
 */
function floorsFor(want: Curve, modes: number[]): Float64Array {
  return Float64Array.from(want.best, (b, k) => {
    const mode = modes[k % modes.length]!;
    const v = Number.isNaN(b) ? 100 : b;
    switch (mode) {
      case 0:
        return Number.NaN;
      case 1:
        return v;
      case 2:
        return v - Math.abs(v) * 1e-12 - 1e-9;
      case 3:
        return v + Math.abs(v) * 1e-12 + 1e-9;
      case 4:
        return v - 50;
      case 5:
        return -Infinity;
      default:
        return Infinity;
    }
  });
}

test('meanMax with a floor reports a duration only when its best mean is strictly above it', (t) => {
  fc.assert(
    fc.property(
      withDurations(300).chain(([x, durations]) =>
        fc.tuple(
          fc.constant(x),
          fc.constant(durations),
          fc.integer({ min: 0, max: x.length }),
          fc.array(fc.nat(6), { minLength: 1, maxLength: 40 }),
        ),
      ),
      ([x, durations, from, modes]) => {
        const floor = floorsFor(reference(x, durations, from), modes);
        assertSame(fast(x, durations, { from, floor }), reference(x, durations, from, floor), durations, 'floor');
      },
    ),
    { numRuns: 400 },
  );
  t.pass();
});

test('a floor that every duration beats changes nothing; one that none beats blanks everything', (t) => {
  const x = rideLike(2000, 3);
  const durations = all(x.length);
  const want = reference(x, durations);
  const low = Float64Array.from(want.best, (b) => b - 1);
  assertSame(fast(x, durations, { floor: low }), want, durations, 'low floor');
  const high = Float64Array.from(want.best, (b) => b);
  const got = fast(x, durations, { floor: high });
  t.true(got.best.every((v) => Number.isNaN(v)));
  t.true(got.start.every((v) => v === -1));
});

test('floors without gaps (a longitudinal running best): every duration, from, after-cuts', (t) => {
  // The floor's own growth lets blocks below it sleep: floors from another ride, and the ride's
  // own curve nudged up and down, with no NaN or infinite entry to switch that off.
  fc.assert(
    fc.property(
      fc.integer({ min: 600, max: 2500 }),
      fc.integer(),
      fc.integer(),
      fc.double({ min: 0.9, max: 1.1, noNaN: true }),
      (n, seed, other, scale) => {
        const x = rideLike(n, seed);
        const durations = all(n);
        const own = reference(x, durations).best;
        const floors = [
          reference(rideLike(n + 500, other), durations).best.map((v) => v * scale),
          own.map((v, k) => (k % 3 === 0 ? v : k % 3 === 1 ? v * 0.995 : v * 1.001)),
          own.map((v, k) => v * (k % 50 < 25 ? 1.002 : 0.97)),
        ];
        for (const floor of floors) {
          assertSame(fast(x, durations, { floor }), reference(x, durations, 0, floor), durations, 'floor');
          const cuts = Int32Array.of(0, Math.floor(n / 3), Math.floor(n / 2));
          const after = meanMaxAfter(x, durations, cuts, { floor });
          cuts.forEach((from, j) =>
            assertSame(
              { best: after.best[j]!, start: after.start[j]! },
              reference(x, durations, from, floor),
              durations,
              `after ${from} with floor`,
            ),
          );
        }
      },
    ),
    { numRuns: 12 },
  );
  t.pass();
});

test("a floor per cut: each cut reported only above its own floor, whatever the other cuts' floors (nested or not, NaN, ±∞)", (t) => {
  // The longitudinal callers pass nested floors (a later cut's running best is never above an
  // earlier one's); the kernel must not rely on it.
  fc.assert(
    fc.property(
      fc.integer({ min: 300, max: 1800 }),
      fc.integer(),
      fc.array(fc.tuple(fc.double({ min: 0.8, max: 1.2, noNaN: true }), fc.nat(7)), { minLength: 3, maxLength: 3 }),
      (n, seed, shapes) => {
        const x = rideLike(n, seed);
        const durations = all(n);
        const cuts = Int32Array.of(0, Math.floor(n / 4), Math.floor((2 * n) / 3));
        const floor = Array.from(cuts, (from, j) => {
          const [scale, mode] = shapes[j]!;
          const own = reference(x, durations, from).best;
          return own.map((v, k) =>
            mode === 0
              ? Number.NaN
              : mode === 1 && k % 7 === 0
                ? Number.NaN
                : mode === 2
                  ? k % 2
                    ? Infinity
                    : v
                  : mode === 3
                    ? -Infinity
                    : (v === v ? v : 100) * scale,
          );
        });
        const got = meanMaxAfter(x, durations, cuts, { floor });
        cuts.forEach((from, j) =>
          assertSame(
            { best: got.best[j]!, start: got.start[j]! },
            reference(x, durations, from, floor[j]),
            durations,
            `cut ${j} (${from})`,
          ),
        );
      },
    ),
    { numRuns: 25 },
  );
  t.throws(() => meanMaxAfter(rideLike(300, 1), all(300), Int32Array.of(0, 10), { floor: [new Float64Array(300)] }), {
    instanceOf: RangeError,
  });
  t.pass();
});

const cutsFor = (n: number): fc.Arbitrary<Int32Array> =>
  fc
    .array(fc.oneof(fc.integer({ min: 0, max: n }), fc.constant(0), fc.constant(n)), { minLength: 1, maxLength: 5 })
    .map((cs) => Int32Array.from(cs.sort((a, b) => a - b)));

test('meanMaxAfter equals meanMax from each cut (and the reference), in one pass', (t) => {
  fc.assert(
    fc.property(
      withDurations(300).chain(([x, durations]) =>
        fc.tuple(
          fc.constant(x),
          fc.constant(durations),
          cutsFor(x.length),
          fc.option(fc.array(fc.nat(6), { minLength: 1, maxLength: 40 })),
        ),
      ),
      ([x, durations, cuts, modes]) => {
        const floor = modes ? floorsFor(reference(x, durations, cuts[0]), modes) : undefined;
        const got = meanMaxAfter(x, durations, cuts, floor ? { floor } : {});
        t.is(got.best.length, cuts.length);
        cuts.forEach((from, j) => {
          const curve = { best: got.best[j]!, start: got.start[j]! };
          assertSame(curve, fast(x, durations, { from, floor }), durations, `cut ${j} (${from}) vs meanMax`);
          assertSame(curve, reference(x, durations, from, floor), durations, `cut ${j} (${from}) vs reference`);
        });
      },
    ),
    { numRuns: 300 },
  );
  t.pass();
});

test('long series (many blocks, slope rebuilds, sleeping blocks): all durations, from, after-cuts, floors', (t) => {
  fc.assert(
    fc.property(fc.integer({ min: 1000, max: 3000 }), fc.integer(), fc.constantFrom('ride', 'noise', 'floats', 'ties'), (n, seed, kind) => {
      let s = seed >>> 0 || 7;
      const rand = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
      const x =
        kind === 'ride'
          ? rideLike(n, seed)
          : kind === 'noise'
            ? Float64Array.from({ length: n }, () => Math.floor(rand() * 1000))
            : kind === 'floats'
              ? Float64Array.from({ length: n }, (_, i) => 200 + 100 * Math.sin(i / 97) + rand() * 50.5)
              : Float64Array.from({ length: n }, () => (rand() < 0.5 ? 0 : 250));
      const durations = all(n);
      assertSame(meanMaxAll(x), reference(x, durations), durations, `${kind} all`);
      const cuts = Int32Array.from([0, Math.floor(n * rand()), Math.floor(n * rand()), n - 1].sort((a, b) => a - b));
      const after = meanMaxAfter(x, durations, cuts);
      cuts.forEach((from, j) =>
        assertSame({ best: after.best[j]!, start: after.start[j]! }, reference(x, durations, from), durations, `${kind} cut ${from}`),
      );
      const floor = floorsFor(reference(x, durations), [0, 1, 2, 3, 4]);
      assertSame(fast(x, durations, { floor }), reference(x, durations, 0, floor), durations, `${kind} floor`);
    }),
    { numRuns: 8 },
  );
  t.pass();
});

test('adversarial long series: constant (integer and float), all zero, ramps', (t) => {
  const n = 2500;
  const cases: Array<[string, Float64Array]> = [
    ['constant 200', new Float64Array(n).fill(200)],
    ['constant 0.1', new Float64Array(n).fill(0.1)],
    ['all zero', new Float64Array(n)],
    ['ramp up', Float64Array.from({ length: n }, (_, i) => i)],
    ['ramp down', Float64Array.from({ length: n }, (_, i) => n - i)],
    ['negative constant', new Float64Array(n).fill(-3)],
  ];
  const durations = all(n);
  for (const [name, x] of cases) {
    assertSame(meanMaxAll(x), reference(x, durations), durations, name);
    assertSame(fast(x, durations, { from: 777 }), reference(x, durations, 777), durations, `${name} from 777`);
  }
  t.pass();
});

test('the reference for `from` is the plain scan at from = 0, and differs once earlier windows are excluded', (t) => {
  // Anchors the test's own scan to meanMaxPlain (also on non-finite sums), and shows the `from`
  // cases are not vacuous.
  for (const x of [rideLike(600, 11), Float64Array.of(3, Infinity, 1, Number.NaN, 2), Float64Array.of(5, -Infinity, 7)]) {
    const durations = all(x.length + 2);
    const plain = { best: new Float64Array(durations.length), start: new Int32Array(durations.length) };
    meanMaxPlain(x, durations, plain.best, plain.start);
    assertSame(scanFrom(x, durations, 0), plain, durations, 'scanFrom(0) vs meanMaxPlain');
  }
  const x = rideLike(600, 11);
  const plain = reference(x, all(600));
  const later = scanFrom(x, all(600), 300);
  t.true(later.start.every((s) => s === -1 || s >= 300));
  t.true(later.start.some((s, k) => s !== plain.start[k]));
});

test('a single sample, ties, and durations longer than the data', (t) => {
  const one = meanMaxAll(Float64Array.of(300));
  t.deepEqual([...one.best], [300]);
  t.deepEqual([...one.start], [0]);
  const got = fast(Float64Array.of(100, 100, 100, 100), Int32Array.of(2, 4, 5));
  t.deepEqual([...got.best], [100, 100, Number.NaN]);
  t.deepEqual([...got.start], [0, 0, -1], 'the earliest of equal windows');
  const empty = meanMaxAll(new Float64Array(0));
  t.is(empty.best.length, 0);
  const none = fast(new Float64Array(0), Int32Array.of(1, 2));
  t.deepEqual([...none.start], [-1, -1]);
  const after = meanMaxAfter(Float64Array.of(1, 2, 3), Int32Array.of(1, 3), Int32Array.of(0, 3, 3));
  t.deepEqual([...after.best[0]!], [3, 2]);
  t.deepEqual([...after.start[1]!], [-1, -1]);
});

test("non-finite sums (not supported input) still give the plain scan's answer", (t) => {
  const cases = [
    Float64Array.of(1, Infinity, 2, 3),
    Float64Array.of(5, -Infinity, 7, 1, 2),
    Float64Array.of(1, Number.NaN, 4, 4, 1),
    Float64Array.of(1e308, 1e308, -1e308, 5),
  ];
  for (const x of cases) {
    const durations = all(x.length + 1);
    assertSame(meanMaxAll(x), reference(x, all(x.length)), all(x.length), `all ${x.join(',')}`);
    assertSame(fast(x, durations, { from: 1 }), reference(x, durations, 1), durations, `from 1 ${x.join(',')}`);
  }
  t.pass();
});

test('invalid durations, cuts, floors and from are RangeErrors', (t) => {
  const x = Float64Array.of(1, 2, 3);
  const out = () => ({ best: new Float64Array(3), start: new Int32Array(3) });
  const call = (durations: Int32Array, options?: { from?: number; floor?: Float64Array }) => {
    const o = out();
    meanMax(x, durations, o.best, o.start, options);
  };
  t.throws(() => call(Int32Array.of(2, 1)), { instanceOf: RangeError });
  t.throws(() => call(Int32Array.of(1, 1)), { instanceOf: RangeError });
  t.throws(() => call(Int32Array.of(0, 1)), { instanceOf: RangeError });
  t.throws(() => call(Int32Array.of(1, 2), { from: -1 }), { instanceOf: RangeError });
  t.throws(() => call(Int32Array.of(1, 2), { from: 1.5 }), { instanceOf: RangeError });
  t.throws(() => call(Int32Array.of(1, 2), { floor: Float64Array.of(1) }), { instanceOf: RangeError });
  t.throws(() => meanMax(x, Int32Array.of(1, 2), new Float64Array(1), new Int32Array(2)), { instanceOf: RangeError });
  t.throws(() => meanMaxAfter(x, Int32Array.of(1), Int32Array.of(2, 1)), { instanceOf: RangeError });
  t.throws(() => meanMaxAfter(x, Int32Array.of(1), Int32Array.of(0, 4)), { instanceOf: RangeError });
  t.throws(() => meanMaxAfter(x, Int32Array.of(1), Int32Array.of(-1)), { instanceOf: RangeError });
});

test('real FIT power: every duration, and after-cuts by accumulated work, equal the plain scan', async (t) => {
  const [rec] = await parseFit(readFileSync(join(fixturesDir(), 'fit', 'Karoo-Botley_BW_Swanmore_Wickham-2025-05-09-1238.fit')));
  const power = resample(rec!).channels.power!.map((v) => (Number.isNaN(v) ? 0 : v));
  t.true(power.length > 4000);
  const durations = all(power.length);
  assertSame(meanMaxAll(power), reference(power, durations), durations, 'fixture all');
  // Cuts where accumulated work first reaches 250, 500 and 1000 kJ.
  const cuts: number[] = [0];
  let work = 0;
  for (let i = 0, next = 250_000; i < power.length; i++) {
    work += power[i]!;
    if (work >= next) {
      cuts.push(i + 1);
      next *= 2;
    }
  }
  t.true(cuts.length >= 3);
  const after = meanMaxAfter(power, durations, Int32Array.from(cuts));
  cuts.forEach((from, j) =>
    assertSame({ best: after.best[j]!, start: after.start[j]! }, reference(power, durations, from), durations, `fixture after ${from}`),
  );
});

/**
 * Series that defeat bounds: exact and approximate repetition (periodic signals of any period,
 * integer and float, with or without noise, and constant stretches, where windows tie exactly or
 * up to rounding), isolated huge spikes, floats whose prefix sums are piecewise linear (float
 * constants), steps and ramps. Long enough for the search, its shifts and its slopes to engage.
 */
const adversarial = (minLength: number, maxLength: number): fc.Arbitrary<{ kind: string; x: Float64Array }> => {
  const length = fc.integer({ min: minLength, max: maxLength });
  const value = fc.oneof(
    fc.integer({ min: 0, max: 1500 }),
    fc.double({ min: 0, max: 1500, noNaN: true }),
    fc.integer({ min: 1, max: 20_000 }).map((v) => v / 1000),
  );
  const periodic = fc
    .tuple(length, fc.array(value, { minLength: 1, maxLength: 240 }), fc.nat(4), fc.integer())
    .map(([n, pattern, noise, seed]) => {
      let s = seed >>> 0 || 1;
      const rand = () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32;
      return {
        kind: `periodic ${pattern.length}${noise ? ` ±${noise}` : ''}`,
        x: Float64Array.from(
          { length: n },
          (_, i) => pattern[i % pattern.length]! + (noise ? Math.floor(rand() * (2 * noise + 1)) - noise : 0),
        ),
      };
    });
  const sawtooth = fc
    .tuple(length, fc.integer({ min: 2, max: 400 }), fc.integer({ min: 0, max: 300 }), fc.boolean())
    .map(([n, p, base, float]) => ({
      kind: `sawtooth ${p}${float ? ' (floats)' : ''}`,
      x: Float64Array.from({ length: n }, (_, i) => (float ? 0.1 * (i % p) + 0.05 : base + (i % p))),
    }));
  const constant = fc.tuple(length, value).map(([n, v]) => ({ kind: `constant ${v}`, x: new Float64Array(n).fill(v) }));
  const steps = fc
    .tuple(length, fc.array(fc.tuple(fc.integer({ min: 1, max: 800 }), value), { minLength: 1, maxLength: 8 }))
    .map(([n, runs]) => {
      const x = new Float64Array(n);
      for (let i = 0, r = 0, left = runs[0]![0]; i < n; i++, left--) {
        if (left === 0) [r, left] = [(r + 1) % runs.length, runs[(r + 1) % runs.length]![0]];
        x[i] = runs[r]![1];
      }
      return { kind: `steps ${runs.length}`, x };
    });
  const spikes = fc
    .tuple(
      length,
      fc.integer(),
      fc.array(fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 2000, max: 40_000 })), {
        minLength: 1,
        maxLength: 5,
      }),
    )
    .map(([n, seed, at]) => {
      const x = rideLike(n, seed);
      for (const [f, v] of at) x[Math.min(n - 1, Math.floor(f * n))] = v;
      return { kind: `spikes ${at.length}`, x };
    });
  const ramp = fc
    .tuple(length, fc.double({ min: -3, max: 3, noNaN: true }), fc.integer({ min: 0, max: 500 }))
    .map(([n, slope, base]) => ({ kind: `ramp ${slope}`, x: Float64Array.from({ length: n }, (_, i) => base + slope * i) }));
  return fc.oneof(periodic, sawtooth, constant, steps, spikes, ramp);
};

/** Every duration of x, from a start and from three after-cuts (drawn from `seed`), against the reference; returns the whole curve's reference. */
function everyDurationFromAndCuts(x: Float64Array, kind: string, seed: number): Curve {
  const n = x.length;
  const durations = all(n);
  const want = reference(x, durations);
  assertSame(meanMaxAll(x), want, durations, `${kind} all`);
  let s = seed >>> 0 || 3;
  const rand = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  const from = Math.floor(rand() * n);
  assertSame(fast(x, durations, { from }), reference(x, durations, from), durations, `${kind} from ${from}`);
  const cuts = Int32Array.from([0, Math.floor(n * rand()), Math.floor(n * rand())].sort((a, b) => a - b));
  const after = meanMaxAfter(x, durations, cuts);
  cuts.forEach((c, j) =>
    assertSame({ best: after.best[j]!, start: after.start[j]! }, reference(x, durations, c), durations, `${kind} cut ${c}`),
  );
  return want;
}

test('adversarial series (repetition, ties up to rounding, spikes, steps, ramps): every duration, from, after-cuts equal the plain scan', (t) => {
  fc.assert(
    fc.property(adversarial(200, 2200), fc.integer(), ({ kind, x }, seed) => void everyDurationFromAndCuts(x, kind, seed)),
    { numRuns: 60 },
  );
  t.pass();
});

test('a float constant ties up to rounding: every duration equals the plain scan (prefix sums linear between powers of two)', (t) => {
  for (const [v, n] of [
    [0.1, 6000],
    [0.3, 5000],
    [8.333, 4000],
    [1e-3, 3000],
  ] as const) {
    const x = new Float64Array(n).fill(v);
    assertSame(meanMaxAll(x), reference(x, all(n)), all(n), `constant ${v}`);
  }
  t.pass();
});

test('float sawtooth: windows a period apart differ by rounding only; every duration equals the plain scan', (t) => {
  // Sums grow with the duration: a later window is greater than an earlier one only if by more
  // than the spacing of doubles at the LONGEST duration its block sleeps through.
  for (const [p, n] of [
    [36, 2967],
    [7, 2500],
    [100, 3000],
    [2, 2000],
  ] as const) {
    const x = Float64Array.from({ length: n }, (_, i) => 0.1 * (i % p) + 0.05);
    assertSame(meanMaxAll(x), reference(x, all(n)), all(n), `float sawtooth ${p}`);
  }
  t.pass();
});

test('float sines: windows a period apart tie up to rounding at every duration (short periods give way to full scans): every duration, from, after-cuts equal the plain scan', (t) => {
  // Periods 5 (n 2,000) and 37 (n 4,000) cost the search more than the plain scan would, which
  // then takes over for spells; period 7 at 3,000 and 100 stay searched.
  for (const [p, n, seed] of [
    [5, 2000, 1],
    [37, 4000, 2],
    [7, 3000, 3],
    [100, 3000, 4],
  ] as const) {
    const x = Float64Array.from({ length: n }, (_, i) => 200 + 100 * Math.sin((2 * Math.PI * i) / p));
    everyDurationFromAndCuts(x, `float sine ${p}`, seed);
  }
  t.pass();
});

/**
 * Floors as engine/curves/longitudinal.ts builds them: a running best over other series, so finite
 * up to the longest of them and NaN past it, over durations that may run past this series; with
 * random nudges around this series' own curve, NaN holes and infinities.
 */
test('any floor gives the no-floor curve wherever it is beaten, NaN / −1 elsewhere (floors with NaN tails and holes, durations past the series)', (t) => {
  fc.assert(
    fc.property(
      fc.integer({ min: 200, max: 1500 }),
      fc.integer({ min: 0, max: 600 }),
      fc.integer(),
      fc.array(fc.nat(9), { minLength: 1, maxLength: 30 }),
      fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 1500 })),
      fc.nat(2),
      (n, extra, seed, modes, tail, kind) => {
        // A ride, a periodic series, or a ride with glitch samples (far above the rest: the floor's
        // own growth can outpace all but them).
        let s = seed >>> 0 || 5;
        const rand = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
        const x =
          kind === 0
            ? rideLike(n, seed)
            : kind === 1
              ? Float64Array.from({ length: n }, (_, i) => 100 + ((i * 7) % 61))
              : Float64Array.from({ length: n }, () => (rand() < 0.1 ? 0 : 100 + Math.floor(rand() * 300)));
        if (kind === 2) for (let k = 0; k < 4; k++) x[Math.floor(rand() * n)] = 5000 + Math.floor(rand() * 25_000);
        const durations = all(n + extra);
        const want = reference(x, durations);
        const other = reference(rideLike(n + extra, seed ^ 0x5bd1e995), durations).best;
        const floor = Float64Array.from(want.best, (b, k) => {
          if (tail && k >= tail) return Number.NaN; // past the longest earlier activity
          const v = Number.isNaN(b) ? other[k]! : b;
          switch (modes[k % modes.length]!) {
            case 0:
              return Number.NaN;
            case 1:
              return v;
            case 2:
              return v * 0.999;
            case 3:
              return v * 1.001;
            case 4:
              return other[k]!;
            case 5:
              return -Infinity;
            case 6:
              return Infinity;
            default:
              return v - 1;
          }
        });
        assertSame(fast(x, durations, { floor }), reference(x, durations, 0, floor), durations, 'floor');
        const cuts = Int32Array.of(0, Math.floor(n / 4), Math.floor(n / 2));
        const after = meanMaxAfter(x, durations, cuts, { floor });
        cuts.forEach((c, j) =>
          assertSame(
            { best: after.best[j]!, start: after.start[j]! },
            reference(x, durations, c, floor),
            durations,
            `after ${c} with floor`,
          ),
        );
      },
    ),
    { numRuns: 60 },
  );
  t.pass();
});

/**
 * The periodic template of the bound (engine/curves/mean-max/template.ts): taken when the search
 * sums too many windows of a periodic series. The bound holds for any template, so the answers
 * must equal the plain scan whether the template fits (noisy periodic series, integer and float),
 * fits half the series (periodic, then a ride), or drifts (a period that is not a whole number).
 */
test('periodic series with noise (the periodic template in the bound): every duration, from, after-cuts and a floor equal the plain scan', (t) => {
  const periodicWithNoise = fc
    .tuple(
      fc.integer({ min: 600, max: 2600 }),
      fc.array(fc.integer({ min: 0, max: 600 }), { minLength: 2, maxLength: 150 }),
      fc.constantFrom(0, 1, 5, 40),
      fc.constantFrom('integer', 'float', 'half ride', 'drifting'),
      fc.integer(),
    )
    .map(([n, pattern, noise, kind, seed]) => {
      let s = seed >>> 0 || 1;
      const rand = () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32;
      const p = pattern.length;
      const ride = rideLike(n, seed);
      const x = Float64Array.from({ length: n }, (_, i) => {
        if (kind === 'half ride' && i >= n / 2) return ride[i]!;
        const v = kind === 'drifting' ? pattern[Math.floor(i * 1.013) % p]! : pattern[i % p]!;
        const e = kind === 'float' ? (rand() - 0.5) * 2 * noise + 0.1 : Math.floor(rand() * (2 * noise + 1)) - noise;
        return v + e;
      });
      return { kind: `${kind} period ${p} ±${noise}`, x };
    });
  fc.assert(
    fc.property(periodicWithNoise, fc.integer(), ({ kind, x }, seed) => {
      const want = everyDurationFromAndCuts(x, kind, seed);
      const durations = all(x.length);
      // A floor a little under the curve at some durations, above it at others.
      const floor = Float64Array.from(want.best, (v, k) => (k % 3 === 0 ? v * 1.001 : v - 1));
      assertSame(fast(x, durations, { floor }), reference(x, durations, 0, floor), durations, `${kind} floor`);
      // After-cuts with the floor, as engine/curves/longitudinal.ts calls the kernel.
      const cuts = Int32Array.of(0, Math.floor(x.length / 3), Math.floor(x.length / 2));
      const after = meanMaxAfter(x, durations, cuts, { floor });
      cuts.forEach((c, j) =>
        assertSame(
          { best: after.best[j]!, start: after.start[j]! },
          reference(x, durations, c, floor),
          durations,
          `${kind} after ${c} with floor`,
        ),
      );
    }),
    { numRuns: 40 },
  );
  t.pass();
});

test('the periodic template is found on noisy periodic series (and its period), never on rides or noise', (t) => {
  let s = 7;
  const rand = () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const n = 14_400;
  const erg = Float64Array.from({ length: n }, (_, i) => (i % 480 < 300 ? 300 : 150) + Math.floor(rand() * 7) - 3);
  const square = Float64Array.from({ length: n }, (_, i) => (i % 60 < 30 ? 100 : 300) + Math.floor(rand() * 11) - 5);
  const sine = Float64Array.from({ length: n }, (_, i) => 200 + 100 * Math.sin((2 * Math.PI * i) / 100));
  t.is(findTemplate(erg, true, 32, 16)?.p, 480);
  t.is(findTemplate(square, true, 32, 16)?.p, 60);
  t.is(findTemplate(sine, false, 32, 16)?.p, 100);
  for (let seed = 1; seed <= 5; seed++) t.is(findTemplate(rideLike(n, seed), true, 32, 16), undefined, `ride ${seed}`);
  t.is(
    findTemplate(
      Float64Array.from({ length: n }, () => Math.floor(rand() * 1000)),
      true,
      32,
      16,
    ),
    undefined,
    'noise',
  );
  // The tables: G[r][φ] is the best template window of length r over the block's (leaf's)
  // phases, at every phase a block (leaf) starts at; by both ways of computing them (period 60:
  // only the multiples of 4; period 61: every phase).
  const odd = Float64Array.from({ length: n }, (_, i) => (i % 61 < 30 ? 100 : 300) + Math.floor(rand() * 11) - 5);
  for (const series of [square, odd]) {
    const tpl = findTemplate(series, true, 32, 16)!;
    const { p, columns, Z, GB, GL, blockPhase, leafPhase } = tpl;
    t.is(p, series === square ? 60 : 61);
    t.is(columns, series === square ? 15 : 61, 'period 60: the multiples of gcd(60, 16) = 4 only');
    const step = p / columns;
    for (const r of [0, 7, 30, p - 1]) {
      const over = (φ: number, w: number) => Math.max(...Array.from({ length: w }, (_, u) => Z[(φ + u + r) % p]! - Z[(φ + u) % p]!));
      for (const c of new Set(blockPhase)) t.is(GB[r * columns + c], over(c * step, 32), `GB r=${r} φ=${c * step}`);
      for (const c of new Set(leafPhase)) t.is(GL[r * columns + c], over(c * step, 16), `GL r=${r} φ=${c * step}`);
    }
    t.is(GB.length, p * columns);
    t.true(
      Z.every((z) => Number.isInteger(z * 256)),
      'exact: multiples of 1/256',
    );
  }
});
