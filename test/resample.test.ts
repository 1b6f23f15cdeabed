/**
 * The 1 Hz grid (engine/ingest/resample.ts, ingest rules v2): last sample per second; pauses from
 * the file's timer events, else from gaps longer than MAX_FILL_SECONDS; gaps up to
 * MAX_FILL_SECONDS inside a running timer filled (linear, held from a standstill or towards a
 * missing end, empty after a missing start); lead-ins back-filled; paused seconds empty but for
 * distance; nothing after the last sample.
 */
import test from 'ava';
import fc from 'fast-check';
import type { Pause, Recording } from '../engine/ingest/recording.ts';
import type { Channel } from '../engine/channels.ts';
import { MAX_FILL_SECONDS, resample, STANDSTILL_SPEED } from '../engine/ingest/resample.ts';
import { referenceResample } from './helpers/resample-reference.ts';

const T0 = Date.parse('2024-05-01T10:00:00Z');

/**
 * A recording from sample offsets (s after T0) and channel values. start defaults to the first
 * sample, end to the last sample + 1 s; `pauses` (s after T0) as a file's timer events give them
 * (undefined: a file without timer events, whose long gaps are pauses).
 */
function recording(
  seconds: number[],
  channels: Partial<Record<Channel, number[]>>,
  opts: { start?: number; end?: number; pauses?: [number, number][] } = {},
): Recording {
  const timestamps = Float64Array.from(seconds, (s) => T0 + s * 1000);
  return {
    sport: 'cycling',
    start: new Date(opts.start ?? timestamps[0]!),
    end: new Date(opts.end ?? T0 + (seconds[seconds.length - 1]! + 1) * 1000),
    utcOffsetSeconds: 0,
    devices: [],
    laps: [],
    timestamps,
    channels: Object.fromEntries(Object.entries(channels).map(([k, v]) => [k, Float64Array.from(v)])),
    ...(opts.pauses ? { pauses: opts.pauses.map(([a, b]): Pause => ({ start: T0 + a * 1000, end: T0 + b * 1000 })) } : {}),
  };
}

const values = (a: Float64Array | undefined) => Array.from(a ?? []);
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);
const nans = (n: number) => Array.from({ length: n }, () => Number.NaN);

test('the rules’ constants: fill up to 90 s, a standstill below 0.5 m/s', (t) => {
  t.is(MAX_FILL_SECONDS, 90);
  t.is(STANDSTILL_SPEED, 0.5);
});

test('1 Hz data maps one to one; the timer runs throughout', (t) => {
  const grid = resample(recording([0, 1, 2, 3], { power: [100, 110, 120, 130] }));
  t.is(grid.start, T0);
  t.is(grid.length, 4);
  t.deepEqual(values(grid.channels.power), [100, 110, 120, 130]);
  t.deepEqual(Array.from(grid.running), [1, 1, 1, 1]);
  t.deepEqual(grid.pauses, []);
});

test('several samples in one second: the last recorded value wins', (t) => {
  const grid = resample(
    recording(
      [0, 0.25, 0.5, 0.75, 1, 1.5],
      { power: [100, 200, 300, 400, 500, 600], heart_rate: [90, 91, NaN, NaN, 95, NaN] },
      { end: T0 + 2000 },
    ),
  );
  t.is(grid.length, 2);
  t.deepEqual(values(grid.channels.power), [400, 600]);
  t.deepEqual(values(grid.channels.heart_rate), [91, 95], 'a NaN sample does not overwrite a value of the same second');
});

test('a non-integer start: the grid starts at the whole second before it and keeps every sample; nothing after the last sample', (t) => {
  const grid = resample(recording([0.6, 1.6, 2.6], { power: [100, 200, 300] }, { start: T0 + 600, end: T0 + 3600 }));
  t.is(grid.start, T0);
  t.is(grid.length, 4, 'covers up to the end (3.6 s → 4 seconds)');
  t.deepEqual(values(grid.channels.power), [100, 200, 300, NaN]);
});

test('a gap of up to 90 s inside a running timer is filled linearly, per channel (smart recording)', (t) => {
  const grid = resample(recording([0, 8, 9], { power: [100, 180, 0], heart_rate: [120, 128, 128], speed: [4, 6, 6] }));
  t.deepEqual(values(grid.channels.power), [...range(0, 9).map((i) => 100 + 10 * i), 0]);
  t.deepEqual(values(grid.channels.heart_rate), [...range(0, 9).map((i) => 120 + i), 128]);
  t.deepEqual(values(grid.channels.speed), [...range(0, 9).map((i) => 4 + i / 4), 6]);
  t.deepEqual(
    Array.from(grid.running),
    nans(10).map(() => 1),
  );
});

test('the gap’s length: 90 s is filled; longer stays empty, a pause when the file has no timer events, a dropout (running) when it has', (t) => {
  const filled = resample(recording([0, 90, 91], { power: [100, 190, 191] }));
  t.deepEqual(values(filled.channels.power), [...range(0, 91).map((i) => 100 + i), 191], 'exactly 90 s apart');
  t.true(filled.running.every((r) => r === 1));

  const long = resample(recording([0, 91, 92], { power: [100, 191, 192], distance: [0, 500, 505] }));
  t.is(long.length, 93);
  t.deepEqual(values(long.channels.power), [100, ...nans(90), 191, 192], '91 s apart: empty');
  t.deepEqual(values(long.channels.distance), [0, ...nans(90), 500, 505], 'the counter is not filled across a pause either');
  t.deepEqual(long.pauses, [{ start: T0, end: T0 + 91_000 }], 'a pause from the sample before the gap to the sample after it');
  t.deepEqual(
    Array.from(long.running.subarray(1, 91)),
    nans(90).map(() => 0),
    'its seconds are paused',
  );
  t.deepEqual([long.running[0], long.running[91], long.running[92]], [1, 1, 1]);

  const dropout = resample(recording([0, 91, 92], { power: [100, 191, 192] }, { pauses: [] }));
  t.deepEqual(values(dropout.channels.power), [100, ...nans(90), 191, 192], 'with timer events and no pause: empty as well');
  t.true(
    dropout.running.every((r) => r === 1),
    'but the timer ran',
  );
});

// Found by these tests and fixed: an inferred pause started one second after the earlier sample,
// so the second after it (which holds no sample) ran.
test('inferred pauses: the second after the sample before a long gap is paused too', (t) => {
  const long = resample(recording([0, 91, 92], { power: [100, 191, 192] }));
  t.is(long.running[1], 0, 'second 1 has no sample and lies inside the 91 s gap');
});

// Found by these tests and fixed: a pause ending inside a second (an inferred pause ends at the
// sample after the gap, which need not lie on a whole second) made that second paused, emptying its sample.
test('a pause ending mid-second: the sample after a long gap keeps its values', (t) => {
  const grid = resample(recording([0.5, 1.5, 121.5, 122.5], { power: [200, 210, 220, 230], heart_rate: [120, 121, 122, 123] }));
  t.deepEqual(values(grid.channels.power).slice(121, 123), [220, 230], 'the record at 121.5 s is a recorded value of second 121');
  t.is(grid.running[121], 1);
});

test('a gap that starts at a standstill is held, not interpolated', (t) => {
  const stop = resample(
    recording([0, 40, 41], { speed: [0, 8, 8], power: [0, 250, 250], heart_rate: [100, 140, 140], distance: [1000, 1008, 1016] }),
  );
  t.deepEqual(values(stop.channels.speed), [...nans(40).map(() => 0), 8, 8]);
  t.deepEqual(values(stop.channels.power), [...nans(40).map(() => 0), 250, 250]);
  t.deepEqual(values(stop.channels.heart_rate), [...nans(40).map(() => 100), 140, 140], 'every channel is held');
  t.deepEqual(values(stop.channels.distance), [...nans(40).map(() => 1000), 1008, 1016]);

  const below = resample(recording([0, 8], { speed: [0.49, 4.49], heart_rate: [100, 180] }));
  t.deepEqual(values(below.channels.heart_rate), [...nans(8).map(() => 100), 180], 'just below 0.5 m/s');
  const at = resample(recording([0, 8], { speed: [0.5, 4.5], heart_rate: [100, 180] }));
  t.deepEqual(values(at.channels.speed), [...range(0, 8).map((i) => 0.5 + i / 2), 4.5], 'at 0.5 m/s: moving, linear');
  t.deepEqual(values(at.channels.heart_rate), [...range(0, 8).map((i) => 100 + 10 * i), 180]);
  const unknown = resample(recording([0, 8], { speed: [NaN, 4], heart_rate: [100, 180] }));
  t.deepEqual(
    values(unknown.channels.heart_rate),
    [...range(0, 8).map((i) => 100 + 10 * i), 180],
    'no speed (nor power, cadence) at the earlier sample: not a standstill',
  );
  t.deepEqual(values(unknown.channels.speed), [...nans(8), 4], 'and the speed itself stays empty (no earlier value)');
  // The motion test of moving time: power or cadence above 0 is motion, whatever the speed says.
  const trainer = resample(recording([0, 8], { speed: [0, 0], power: [100, 180] }));
  t.deepEqual(
    values(trainer.channels.power),
    [...range(0, 8).map((i) => 100 + 10 * i), 180],
    'speed 0 under 100 W (a trainer): moving, linear',
  );
  const pedalling = resample(recording([0, 8], { speed: [0.2, 3], cadence: [60, 90] }));
  t.deepEqual(values(pedalling.channels.cadence), [...range(0, 8).map((i) => 60 + (30 * i) / 8), 90], 'cadence above 0: moving');
  const coasting = resample(recording([0, 8], { power: [0, 200], cadence: [0, 90] }));
  t.deepEqual(values(coasting.channels.power), [...nans(8).map(() => 0), 200], 'no speed channel, power and cadence 0: a standstill');
});

test('a gap is held when only its earlier end has a value, and stays empty when its earlier end has none (a NaN is never spread)', (t) => {
  const grid = resample(recording([0, 5, 6], { power: [200, NaN, 220], heart_rate: [NaN, 150, 151], speed: [5, 5, 5] }));
  t.deepEqual(values(grid.channels.power), [200, 200, 200, 200, 200, NaN, 220]);
  t.deepEqual(values(grid.channels.heart_rate), [NaN, NaN, NaN, NaN, NaN, 150, 151]);
  const mixed = resample(recording([0, 1, 5], { power: [200, NaN, 300], heart_rate: [100, 101, 105] }));
  t.deepEqual(
    values(mixed.channels.power),
    [200, NaN, NaN, NaN, NaN, 300],
    'the dropped sample at 1 s is not held, nor is 200 carried over it',
  );
  t.deepEqual(values(mixed.channels.heart_rate), [100, 101, 102, 103, 104, 105]);
});

test('a timer pause: no fill across it; its seconds are empty in every channel but distance, a record inside it included', (t) => {
  const seconds = [...range(0, 11), 15, ...range(20, 26)];
  const power = seconds.map(() => 200);
  const distance = seconds.map((s) => (s <= 10 ? s * 5 : s === 15 ? 55 : 55 + (s - 19) * 5));
  const grid = resample(recording(seconds, { power, distance, speed: seconds.map(() => 5) }, { pauses: [[10, 20]] }));
  t.is(grid.length, 26);
  t.deepEqual(
    Array.from(grid.running),
    [...range(0, 11).map(() => 1), ...range(11, 20).map(() => 0), ...range(20, 26).map(() => 1)],
    'the second the timer stops in is its last running one; the restart second runs',
  );
  t.deepEqual(values(grid.channels.power), [...range(0, 11).map(() => 200), ...nans(9), ...range(20, 26).map(() => 200)]);
  t.deepEqual(values(grid.channels.speed).slice(11, 20), nans(9));
  t.deepEqual(
    values(grid.channels.distance).slice(10, 21),
    [50, NaN, NaN, NaN, NaN, 55, NaN, NaN, NaN, NaN, 60],
    'the rest’s record keeps its distance; nothing is filled',
  );
});

test('lead-ins: from the timer’s start or restart to the first sample after it (≤ 90 s), that sample’s values', (t) => {
  const swim = resample(recording([30, 60], { distance: [25, 50], speed: [0.83, 0.83] }, { start: T0, end: T0 + 61_000 }));
  t.deepEqual(
    values(swim.channels.speed).slice(0, 31),
    nans(31).map(() => 0.83),
    'seconds 0–29 take the first record’s values',
  );
  t.deepEqual(values(swim.channels.distance).slice(0, 31), [...nans(30), 25], 'but not the counter: 25 m is not what it read before');

  const restart = resample(
    recording([...range(0, 11), 60, 61], { power: [...range(0, 11).map(() => 200), 300, 310] }, { pauses: [[10, 40]] }),
  );
  t.deepEqual(
    values(restart.channels.power).slice(10, 62),
    [200, ...nans(29), ...nans(20).map(() => 300), 300, 310],
    'after the restart (40 s) up to the next record (60 s)',
  );

  const ninety = resample(recording([90], { power: [250] }, { start: T0 }));
  t.deepEqual(
    values(ninety.channels.power),
    nans(91).map(() => 250),
    '90 s: back-filled',
  );
  const longer = resample(recording([91], { power: [250] }, { start: T0 }));
  t.deepEqual(values(longer.channels.power), [...nans(91), 250], '91 s: empty');
  const missing = resample(recording([30, 31], { power: [NaN, 250], heart_rate: [120, 121] }, { start: T0 }));
  t.deepEqual(values(missing.channels.power), [...nans(31), 250], 'the first sample has no value: nothing to take');
  t.deepEqual(values(missing.channels.heart_rate), [...nans(31).map(() => 120), 121]);
});

test('a pause inside a short gap: nothing filled across it, the restart back-filled', (t) => {
  const grid = resample(recording([0, 60], { power: [100, 160], speed: [5, 5] }, { pauses: [[30, 50]] }));
  t.deepEqual(Array.from(grid.running), [...range(0, 31).map(() => 1), ...range(31, 50).map(() => 0), ...range(50, 61).map(() => 1)]);
  t.deepEqual(values(grid.channels.power), [100, ...nans(30), ...nans(19), ...nans(10).map(() => 160), 160]);
});

test('the seconds after the last sample are empty', (t) => {
  const grid = resample(recording([0, 1], { power: [200, 210] }, { end: T0 + 10_000 }));
  t.is(grid.length, 10);
  t.deepEqual(values(grid.channels.power), [200, 210, ...nans(8)]);
  t.true(
    grid.running.every((r) => r === 1),
    'the timer ran (no timer events, no long gap between samples)',
  );
});

test('channels without any value are dropped; the grid has at least one second', (t) => {
  const grid = resample(recording([0, 1], { power: [NaN, NaN], cadence: [80, 81] }));
  t.deepEqual(Object.keys(grid.channels), ['cadence']);
  const single = resample(recording([0], { power: [250] }, { end: T0 }));
  t.is(single.length, 1);
  t.deepEqual(values(single.channels.power), [250]);
  const paused = resample(recording([0, 5, 6], { power: [NaN, 200, NaN], distance: [0, 10, 12] }, { pauses: [[0, 6]] }));
  t.deepEqual(Object.keys(paused.channels), ['distance'], 'a channel recorded only while paused has no value left');
});

// ─── Properties ───────────────────────────────────────────────────────────────────────────────────

/** Random sample offsets (ms after T0, ascending, distinct): sub-second, 1 Hz, smart-recording and long gaps. */
const offsets = fc
  .array(
    fc.oneof(
      fc.integer({ min: 1, max: 999 }),
      fc.constant(1000),
      fc.integer({ min: 1, max: 12 }).map((s) => s * 1000),
      fc.integer({ min: 10_000, max: 95_000 }),
      fc.integer({ min: 85, max: 200 }).map((s) => s * 1000),
    ),
    { minLength: 0, maxLength: 60 },
  )
  .chain((steps) =>
    fc.integer({ min: 0, max: 2500 }).map((first) => steps.reduce((out, step) => (out.push(out[out.length - 1]! + step), out), [first])),
  );

test('property: the grid is the second-by-second statement of the rules (test/helpers/resample-reference.ts)', (t) => {
  const arb = offsets.chain((ms) => {
    const n = ms.length;
    const last = ms[n - 1]!;
    const value = fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 0, max: 400 }) }, { weight: 1, arbitrary: fc.constant(Number.NaN) });
    const speed = fc.oneof(
      { weight: 2, arbitrary: fc.double({ min: 0, max: 15, noNaN: true }) },
      { weight: 2, arbitrary: fc.constantFrom(0, 0.2, 0.49, 0.5) },
      { weight: 1, arbitrary: fc.constant(Number.NaN) },
    );
    // Pauses as a file's timer events give them: ascending, disjoint, anywhere (records inside some).
    const pauses = fc.option(
      fc.uniqueArray(fc.integer({ min: -3000, max: last + 3000 }), { maxLength: 8 }).map((cuts) => {
        const sorted = [...cuts].sort((a, b) => a - b);
        const out: Pause[] = [];
        for (let i = 0; i + 1 < sorted.length; i += 2) out.push({ start: T0 + sorted[i]!, end: T0 + sorted[i + 1]! });
        return out;
      }),
      { nil: undefined },
    );
    return fc.record({
      ms: fc.constant(ms),
      power: fc.array(value, { minLength: n, maxLength: n }),
      heart: fc.array(value, { minLength: n, maxLength: n }),
      speed: fc.array(speed, { minLength: n, maxLength: n }),
      distance: fc
        .array(fc.integer({ min: 0, max: 30 }), { minLength: n, maxLength: n })
        .map((steps) => steps.map((_, i) => steps.slice(0, i + 1).reduce((s, v) => s + v, 0))),
      lead: fc.integer({ min: 0, max: 120_000 }),
      tail: fc.integer({ min: 0, max: 5000 }),
      pauses,
    });
  });
  fc.assert(
    fc.property(arb, ({ ms, power, heart, speed, distance, lead, tail, pauses }) => {
      const timestamps = Float64Array.from(ms, (m) => T0 + m);
      const rec: Recording = {
        sport: 'cycling',
        start: new Date(timestamps[0]! - lead),
        end: new Date(timestamps[timestamps.length - 1]! + tail),
        utcOffsetSeconds: 0,
        devices: [],
        laps: [],
        timestamps,
        channels: {
          power: Float64Array.from(power),
          heart_rate: Float64Array.from(heart),
          speed: Float64Array.from(speed),
          distance: Float64Array.from(distance),
        },
        ...(pauses ? { pauses } : {}),
      };
      const got = resample(rec);
      const want = referenceResample(rec);
      if (got.start !== want.start || got.length !== want.length) return false;
      if (Array.from(got.running).some((r, i) => r !== want.running[i])) return false;
      for (const [channel, expected] of Object.entries(want.channels)) {
        const hasValue = expected.some((v) => !Number.isNaN(v));
        const actual = got.channels[channel as Channel];
        if (!hasValue) {
          if (actual !== undefined) return false;
          continue;
        }
        if (!actual) return false;
        for (let i = 0; i < expected.length; i++) {
          const a = actual[i]!;
          const e = expected[i]!;
          if (Number.isNaN(a) !== Number.isNaN(e)) return false;
          if (!Number.isNaN(e) && Math.abs(a - e) > 1e-9 * Math.max(1, Math.abs(e))) return false;
        }
      }
      return true;
    }),
    { numRuns: 400, seed: 11 },
  );
  t.pass();
});

test('property: every sample lands in its second, values only between neighbours’, empty exactly across long gaps and after the end', (t) => {
  fc.assert(
    fc.property(offsets, (ms) => {
      const seconds = ms.map((m) => m / 1000);
      const power = seconds.map((_, k) => k + 1); // increasing: a filled second lies between its gap's ends
      const grid = resample(recording(seconds, { power }, { start: T0 + ms[0]! }));
      const out = grid.channels.power!;
      const start = Math.floor(seconds[0]!);
      const bin = (s: number) => Math.floor(s) - start;
      if (grid.length !== Math.ceil(seconds[seconds.length - 1]! + 1) - start) return false; // the end is the last sample + 1 s
      // The last sample of each running second is that second's value. (A second is paused only
      // inside a gap longer than 90 s; the second of the sample after the gap runs.)
      for (let k = 0; k < seconds.length; k++) {
        const last = k + 1 === seconds.length || bin(seconds[k + 1]!) !== bin(seconds[k]!);
        if (last && grid.running[bin(seconds[k]!)] && out[bin(seconds[k]!)] !== power[k]) return false;
      }
      for (let i = 0; i < grid.length; i++) {
        if (grid.running[i]) continue;
        const inLongGap = seconds.some(
          (s, k) => k + 1 < seconds.length && ms[k + 1]! - ms[k]! > MAX_FILL_SECONDS * 1000 && i > bin(s) && i <= bin(seconds[k + 1]!),
        );
        if (!inLongGap || !Number.isNaN(out[i]!)) return false;
      }
      // Between consecutive samples: filled (between their seconds' values) when at most 90 s apart, else empty.
      for (let k = 0; k + 1 < seconds.length; k++) {
        const [b0, b1] = [bin(seconds[k]!), bin(seconds[k + 1]!)];
        if (!grid.running[b0]) continue; // (never, with inferred pauses: kept as a guard)
        const hi = power[seconds.findLastIndex((s) => bin(s) === b1)]!; // the value of second b1: its last sample's
        for (let i = b0 + 1; i < b1; i++) {
          const v = out[i]!;
          if (ms[k + 1]! - ms[k]! > MAX_FILL_SECONDS * 1000 ? !Number.isNaN(v) : !(v > power[k]! && v < hi)) return false;
        }
      }
      // After the last sample's second: empty.
      for (let i = bin(seconds[seconds.length - 1]!) + 1; i < grid.length; i++) if (!Number.isNaN(out[i]!)) return false;
      return true;
    }),
    { numRuns: 300, seed: 7 },
  );
  t.pass();
});
