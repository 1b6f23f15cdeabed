import test from 'ava';
import fc from 'fast-check';
import type { Channel, Recording } from '../engine/ingest/recording.ts';
import { MAX_HOLD_SECONDS, resample } from '../engine/ingest/resample.ts';

const T0 = Date.parse('2024-05-01T10:00:00Z');

/** A recording from sample offsets (s after T0) and channel values; end defaults to the last sample + 1 s. */
function recording(seconds: number[], channels: Partial<Record<Channel, number[]>>, opts: { start?: number; end?: number } = {}): Recording {
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
  };
}

const values = (a: Float64Array | undefined) => Array.from(a ?? []);

test('MAX_HOLD_SECONDS is 5', (t) => {
  t.is(MAX_HOLD_SECONDS, 5);
});

test('1 Hz data maps one to one', (t) => {
  const grid = resample(recording([0, 1, 2, 3], { power: [100, 110, 120, 130] }));
  t.is(grid.start, T0);
  t.is(grid.length, 4);
  t.deepEqual(values(grid.channels.power), [100, 110, 120, 130]);
});

test('gaps of up to 5 s hold the previous value (smart recording)', (t) => {
  // Gaps: 0→3 (3 s), 3→8 (5 s, still held), 8→10.
  const grid = resample(recording([0, 3, 8, 10], { heart_rate: [100, 130, 150, 160] }));
  t.is(grid.length, 11);
  t.deepEqual(values(grid.channels.heart_rate), [100, 100, 100, 130, 130, 130, 130, 130, 150, 150, 160]);
});

test('gaps longer than 5 s stay empty as a whole (pauses are not stretched)', (t) => {
  const grid = resample(recording([0, 1, 8, 9], { power: [200, 210, 220, 230] }));
  t.is(grid.length, 10);
  t.deepEqual(values(grid.channels.power), [200, 210, NaN, NaN, NaN, NaN, NaN, NaN, 220, 230]);
  const long = resample(recording([0, 600], { power: [200, 220] }));
  t.is(long.length, 601);
  t.is(values(long.channels.power).filter(Number.isNaN).length, 599);
});

test('the tail after the last sample is held only when the end is within 5 s', (t) => {
  const held = resample(recording([0, 1], { power: [200, 210] }, { end: T0 + 4000 }));
  t.deepEqual(values(held.channels.power), [200, 210, 210, 210]);
  const pause = resample(recording([0, 1], { power: [200, 210] }, { end: T0 + 10_000 }));
  t.is(pause.length, 10);
  t.deepEqual(values(pause.channels.power), [200, 210, NaN, NaN, NaN, NaN, NaN, NaN, NaN, NaN]);
});

test('several samples in one second: the last recorded value wins', (t) => {
  const grid = resample(recording([0, 0.25, 0.5, 0.75, 1, 1.5], { power: [100, 200, 300, 400, 500, 600], heart_rate: [90, 91, NaN, NaN, 95, NaN] }, { end: T0 + 2000 }));
  t.is(grid.length, 2);
  t.deepEqual(values(grid.channels.power), [400, 600]);
  t.deepEqual(values(grid.channels.heart_rate), [91, 95], 'a NaN sample does not overwrite a value of the same second');
});

test('a non-integer start: the grid starts at the whole second before it and keeps every sample', (t) => {
  const rec = recording([0.6, 1.6, 2.6], { power: [100, 200, 300] }, { start: T0 + 600, end: T0 + 3600 });
  const grid = resample(rec);
  t.is(grid.start, T0);
  t.is(grid.length, 4, 'covers up to the end (3.6 s → 4 seconds)');
  t.deepEqual(values(grid.channels.power), [100, 200, 300, 300]);
});

test('a NaN sample is not held across a gap', (t) => {
  const grid = resample(recording([0, 1, 4], { power: [200, NaN, 300], heart_rate: [100, 101, 102] }));
  t.deepEqual(values(grid.channels.power), [200, NaN, NaN, NaN, 300]);
  t.deepEqual(values(grid.channels.heart_rate), [100, 101, 101, 101, 102]);
});

test('channels without any value are dropped; the grid has at least one second', (t) => {
  const grid = resample(recording([0, 1], { power: [NaN, NaN], cadence: [80, 81] }));
  t.deepEqual(Object.keys(grid.channels), ['cadence']);
  const single = resample(recording([0], { power: [250] }, { end: T0 }));
  t.is(single.length, 1);
  t.deepEqual(values(single.channels.power), [250]);
});

test('property: every sample lands in its second and no value is invented', (t) => {
  const samples = fc.uniqueArray(fc.integer({ min: 0, max: 4000 }), { minLength: 1, maxLength: 200 }).map((ms) => ms.sort((a, b) => a - b).map((x) => x * 250));
  fc.assert(
    fc.property(samples, (offsets) => {
      const seconds = offsets.map((ms) => ms / 1000);
      const power = seconds.map((_, k) => k + 1);
      const grid = resample(recording(seconds, { power }, { start: T0 }));
      const out = grid.channels.power!;
      if (grid.length !== Math.ceil(seconds[seconds.length - 1]! + 1)) return false; // the end is the last sample + 1 s
      // The last sample of each second is that second's value.
      for (let k = 0; k < seconds.length; k++) {
        const last = k + 1 === seconds.length || Math.floor(seconds[k + 1]!) !== Math.floor(seconds[k]!);
        if (last && out[Math.floor(seconds[k]!)] !== power[k]) return false;
      }
      // Every value is a sample's, and seconds never go back in time.
      let previous = 0;
      for (const v of out) {
        if (Number.isNaN(v)) continue;
        if (!Number.isInteger(v) || v < previous || v > power.length) return false;
        previous = v;
      }
      return true;
    }),
    { numRuns: 300, seed: 7 },
  );
  t.pass();
});
