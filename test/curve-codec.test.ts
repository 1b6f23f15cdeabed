/**
 * The stored curves' codec (engine/curves/curve-codec.ts) and the longitudinal merges that read the
 * stored bytes (engine/curves/stored-curves.ts): every Int32 array round-trips in both encodings,
 * malformed bytes are refused, and the merges answer what decoding every array and merging it the
 * plain way answers (mergeValueIndexed; AWD summed per day by hand), whatever mix of encodings.
 */
import test from 'ava';
import fc from 'fast-check';
import {
  CurveEncoding,
  decodeArrays,
  decodeInt32s,
  encodeDeltaRuns,
  encodeInt32s,
  encodeRaw,
  packEncoded,
  type EncodedArrays,
} from '../engine/curves/curve-codec.ts';
import { dailyAwdPercentiles, mergeStoredLevels } from '../engine/curves/stored-curves.ts';
import { awdPercentiles, sumAwd } from '../engine/curves/awd.ts';
import { mergeValueIndexed, valueIndexed } from '../engine/curves/value-indexed.ts';
import { meanMaxAll } from '../engine/curves/mean-max.ts';
import { prng } from './helpers/prng.ts';

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

const int32 = fc.integer({ min: INT32_MIN, max: INT32_MAX });
/** Arrays of every kind the columns hold and beyond: arbitrary, small steps, long runs, non-increasing, extremes. */
const arrays = fc
  .oneof(
    fc.array(int32, { maxLength: 300 }),
    fc.array(fc.integer({ min: -40, max: 40 }), { maxLength: 300 }),
    fc
      .array(fc.record({ v: int32, n: fc.integer({ min: 1, max: 400 }) }), { maxLength: 30 })
      .map((runs) => runs.flatMap(({ v, n }) => new Array<number>(n).fill(v))),
    fc.array(fc.nat({ max: 100_000 }), { maxLength: 2000 }).map((xs) => xs.sort((a, b) => b - a)),
    fc.array(fc.constantFrom(INT32_MIN, INT32_MAX, 0, -1, 1, INT32_MIN + 1, INT32_MAX - 1), { maxLength: 50 }),
  )
  .map((xs) => Int32Array.from(xs));

const same = (a: Int32Array, b: Int32Array) => a.length === b.length && a.every((v, i) => v === b[i]);

test('every Int32 array round-trips in both encodings; the compact one is deterministic', (t) => {
  fc.assert(
    fc.property(arrays, (values) => {
      const compact = encodeDeltaRuns(values);
      return (
        same(decodeInt32s(compact, CurveEncoding.DELTA_RUNS), values) &&
        same(decodeInt32s(encodeRaw(values), CurveEncoding.RAW), values) &&
        Buffer.from(encodeInt32s(Int32Array.from(values))).equals(Buffer.from(compact))
      );
    }),
    { numRuns: 2000 },
  );
  t.pass();
});

test('edge cases: empty, one value, the extremes, wrapping differences, a run past 2^14', (t) => {
  const cases = [
    [],
    [0],
    [INT32_MIN],
    [INT32_MAX, INT32_MIN, INT32_MAX, INT32_MIN],
    [INT32_MIN, INT32_MIN, INT32_MAX, INT32_MAX, 0, 0],
    [-5, -5, -5, 7, -1_000_000],
    new Array<number>(20_000).fill(-3),
  ].map((xs) => Int32Array.from(xs));
  for (const values of cases) {
    const bytes = encodeDeltaRuns(values);
    t.deepEqual(
      Array.from(decodeInt32s(bytes, CurveEncoding.DELTA_RUNS)),
      Array.from(values),
      `[${values.slice(0, 6).join(', ')}${values.length > 6 ? ', …' : ''}]`,
    );
  }
  t.deepEqual(Array.from(encodeDeltaRuns(new Int32Array(0))), [0], 'the empty array is its length alone');
  t.is(encodeDeltaRuns(new Int32Array(20_000).fill(-3)).length, 3 + 1 + 3, 'the length, then the run: one token and its count');
});

test('staircases and AWD-like arrays take a small fraction of their raw bytes', (t) => {
  // The value-indexed view and AWD of a ride-like power series, as stored.
  const rand = prng(42);
  const power = Float64Array.from({ length: 7200 }, (_, i) =>
    Math.max(0, 200 + 80 * Math.sin(i / 300) + 60 * (rand() - 0.5) + (i % 900 < 30 ? 400 : 0)),
  );
  const { best, start } = meanMaxAll(power);
  const vi = valueIndexed(best, start, 1);
  for (const [name, values] of [
    ['level_duration', vi.duration],
    ['level_start', vi.start],
  ] as const) {
    const ratio = encodeDeltaRuns(values).length / values.byteLength;
    t.true(ratio < 0.2, `${name}: ${(ratio * 100).toFixed(1)} % of the raw bytes`);
  }
});

test('malformed bytes are refused with a RangeError, never decoded into other values', (t) => {
  const values = Int32Array.from([100, 100, 100, 90, 7, -3, 2 ** 30]);
  const good = encodeDeltaRuns(values);
  for (let cut = 0; cut < good.length; cut++) {
    t.throws(() => decodeInt32s(good.subarray(0, cut), CurveEncoding.DELTA_RUNS), { instanceOf: RangeError }, `truncated to ${cut} bytes`);
  }
  t.throws(() => decodeInt32s(Uint8Array.from([...good, 0]), CurveEncoding.DELTA_RUNS), { instanceOf: RangeError }, 'trailing bytes');
  t.deepEqual(Array.from(decodeInt32s(Uint8Array.from([2, 1, 0]), CurveEncoding.DELTA_RUNS)), [0, 0], 'a run of 2 fills an array of 2');
  t.throws(
    () => decodeInt32s(Uint8Array.from([2, 1, 1]), CurveEncoding.DELTA_RUNS),
    { instanceOf: RangeError },
    'a run of 3 in an array of 2',
  );
  t.throws(
    () => decodeInt32s(Uint8Array.from([2, 1, 5]), CurveEncoding.DELTA_RUNS),
    { instanceOf: RangeError },
    'a run of 7 in an array of 2',
  );
  t.throws(
    () => decodeInt32s(Uint8Array.from([1, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]), CurveEncoding.DELTA_RUNS),
    { instanceOf: RangeError },
    'a varint past 35 bits',
  );
  t.throws(
    () => decodeInt32s(new Uint8Array(7), CurveEncoding.RAW),
    { instanceOf: RangeError },
    'raw bytes that are not whole Int32 values',
  );
  t.throws(() => decodeInt32s(good, 7), { instanceOf: RangeError }, 'an unknown encoding');
});

/** Arrays packed as a pool task gets them, each in a random encoding. */
function pack(list: Int32Array[], rand: () => number): EncodedArrays {
  return packEncoded(
    list.map((values) =>
      rand() < 0.5
        ? { bytes: encodeRaw(values), encoding: CurveEncoding.RAW }
        : { bytes: encodeDeltaRuns(values), encoding: CurveEncoding.DELTA_RUNS },
    ),
  );
}

test('decodeArrays: a packing of mixed encodings gives every array back', (t) => {
  fc.assert(
    fc.property(fc.array(arrays, { maxLength: 20 }), fc.integer(), (list, seed) => {
      const got = decodeArrays(pack(list, prng(seed)));
      return got.length === list.length && got.every((g, i) => same(g, list[i]!));
    }),
    { numRuns: 300 },
  );
  t.pass();
});

/** A value-indexed level curve as ingestion stores it: a random non-negative staircase (non-increasing), starts constant on runs or not. */
const levelCurve = fc
  .record({
    steps: fc.array(
      fc.record({ length: fc.integer({ min: 1, max: 40 }), drop: fc.integer({ min: 0, max: 400 }), start: fc.nat({ max: 20_000 }) }),
      { maxLength: 25 },
    ),
    top: fc.integer({ min: 0, max: 8000 }),
    noisyStarts: fc.boolean(),
  })
  .map(({ steps, top, noisyStarts }) => {
    const duration: number[] = [];
    const start: number[] = [];
    let d = top;
    for (const s of steps) {
      for (let i = 0; i < s.length; i++) {
        duration.push(Math.max(0, d));
        start.push(noisyStarts ? (s.start + i * 7) % 20_000 : s.start);
      }
      d -= s.drop;
    }
    return { duration: Int32Array.from(duration), start: Int32Array.from(start) };
  });

const sameCurve = (a: { duration: Int32Array; start: Int32Array; owner: Int32Array }, b: typeof a) =>
  same(a.duration, b.duration) && same(a.start, b.start) && same(a.owner, b.owner);

test('mergeStoredLevels from the stored bytes = mergeValueIndexed of the decoded curves (staircases, ties, mixed encodings)', (t) => {
  // Copies of one curve and curves sharing durations make ties, which the older (lower index) keeps.
  const sets = fc
    .array(levelCurve, { maxLength: 12 })
    .chain((curves) =>
      fc
        .array(fc.nat({ max: Math.max(0, curves.length - 1) }), { maxLength: curves.length ? 4 : 0 })
        .map((copies) => [
          ...curves,
          ...copies.map((i) => ({ duration: curves[i]!.duration.slice(), start: curves[i]!.start.map((s) => s + 1) })),
        ]),
    );
  fc.assert(
    fc.property(sets, fc.integer(), (curves, seed) => {
      const rand = prng(seed);
      const got = mergeStoredLevels(
        pack(
          curves.map((c) => c.duration),
          rand,
        ),
        pack(
          curves.map((c) => c.start),
          rand,
        ),
      );
      return sameCurve(got, mergeValueIndexed(curves));
    }),
    { numRuns: 1000 },
  );
  t.pass();
});

test('mergeStoredLevels: curves that are not staircases (rising, negative) are merged the plain way, with the same answer', (t) => {
  const anyCurve = fc.integer({ min: 0, max: 60 }).chain((n) =>
    fc.record({
      duration: fc.array(fc.integer({ min: -50, max: 500 }), { minLength: n, maxLength: n }),
      start: fc.array(fc.nat({ max: 9999 }), { minLength: n, maxLength: n }),
    }),
  );
  fc.assert(
    fc.property(fc.array(anyCurve, { maxLength: 10 }), fc.integer(), (raw, seed) => {
      const curves = raw.map((c) => ({ duration: Int32Array.from(c.duration), start: Int32Array.from(c.start) }));
      const rand = prng(seed);
      return sameCurve(
        mergeStoredLevels(
          pack(
            curves.map((c) => c.duration),
            rand,
          ),
          pack(
            curves.map((c) => c.start),
            rand,
          ),
        ),
        mergeValueIndexed(curves),
      );
    }),
    { numRuns: 500 },
  );
  // A rising curve after a staircase: the premise breaks mid-way.
  const staircase = { duration: Int32Array.from([50, 50, 10]), start: Int32Array.from([1, 1, 2]) };
  const rising = { duration: Int32Array.from([5, 60, 70]), start: Int32Array.from([3, 4, 5]) };
  const rand = prng(1);
  t.deepEqual(
    mergeStoredLevels(pack([staircase.duration, rising.duration], rand), pack([staircase.start, rising.start], rand)),
    mergeValueIndexed([staircase, rising]),
  );
});

test('mergeStoredLevels: real level curves (value-indexed views of ride-like series) in both encodings', (t) => {
  const rand = prng(7);
  const curves = Array.from({ length: 40 }, (_, a) => {
    const n = 600 + Math.floor(rand() * 3000);
    const x = Float64Array.from({ length: n }, (_, i) => Math.max(0, 180 + a + 90 * Math.sin(i / (50 + a)) + 40 * (rand() - 0.5)));
    const { best, start } = meanMaxAll(x);
    return valueIndexed(best, start, 1);
  });
  const want = mergeValueIndexed(curves);
  for (const [name, choose] of [
    ['compact', () => 1],
    ['raw', () => 0],
    ['mixed', rand],
  ] as const) {
    t.true(
      sameCurve(
        mergeStoredLevels(
          pack(
            curves.map((c) => c.duration),
            choose,
          ),
          pack(
            curves.map((c) => c.start),
            choose,
          ),
        ),
        want,
      ),
      name,
    );
  }
  t.throws(
    () => mergeStoredLevels(pack([curves[0]!.duration], rand), pack([curves[1]!.start], rand)),
    { instanceOf: RangeError },
    'durations and starts of different lengths',
  );
});

test('dailyAwdPercentiles from the stored bytes = the per-day sums of the decoded arrays, whatever the encodings', (t) => {
  const awd = fc.array(fc.nat({ max: 500 }), { maxLength: 80 }).map((xs) => Int32Array.from(xs.sort((a, b) => b - a)));
  fc.assert(
    fc.property(fc.array(fc.record({ awd, day: fc.integer({ min: 0, max: 5 }) }), { maxLength: 15 }), fc.integer(), (rows, seed) => {
      const got = dailyAwdPercentiles(
        pack(
          rows.map((r) => r.awd),
          prng(seed),
        ),
        Int32Array.from(rows, (r) => r.day),
        Float64Array.from([0.9, 0.5]),
      );
      const days = [...new Set(rows.map((r) => r.day))];
      const want = awdPercentiles(
        days.map((d) => sumAwd(rows.filter((r) => r.day === d).map((r) => r.awd))),
        [0.9, 0.5],
      );
      return (
        same(got.max, want.max) &&
        got.quantiles.every((q, j) => q.length === want.quantiles[j]!.length && q.every((v, k) => Object.is(v, want.quantiles[j]![k])))
      );
    }),
    { numRuns: 300 },
  );
  t.pass();
});
