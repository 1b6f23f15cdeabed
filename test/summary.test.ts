import test from 'ava';
import type { Channel } from '../engine/ingest/recording.ts';
import type { Grid, GridChannels } from '../engine/ingest/resample.ts';
import { ALTITUDE_HYSTERESIS_M, elevationChange, lapStats, summarise } from '../engine/ingest/summary.ts';

const channels = (c: Partial<Record<Channel, number[]>>): GridChannels => Object.fromEntries(Object.entries(c).map(([k, v]) => [k, Float64Array.from(v)]));
const whole = (c: GridChannels) => summarise(c, 0, Object.values(c)[0]!.length);
const T0 = Date.parse('2024-05-01T10:00:00Z');

test('every SPEC member with exactly its statistics, NaN seconds left out', (t) => {
  const summary = whole(
    channels({
      power: [100, NaN, 300, 200, NaN],
      cadence: [80, 90, NaN, 100, NaN],
      speed: [2, 4, NaN, 6, NaN],
      distance: [0, 2, 6, 12, NaN],
      altitude: [100, 100.5, 102, 101.5, 99],
      heart_rate: [NaN, 120, 130, 110, NaN],
      temperature: [20, 21, 22, 21, 20],
      core_temperature: [37, NaN, 38, NaN, NaN],
      smo2: [NaN, NaN, 60, 50, 70],
      latitude: [46, 46, 46, 46, 46],
      respiration_rate: [20, 20, 20, 20, 20],
    }),
  );
  t.deepEqual(summary, {
    altitude: { gain: 2, loss: 3, max: 102, mean: 100.6, min: 99 },
    cadence: { max: 100, mean: 90 },
    core_temperature: { end: 38, max: 38, mean: 37.5, min: 37, start: 37 },
    distance: { sum: 12 },
    heart_rate: { end: 110, max: 130, mean: 120, min: 110, start: 120 },
    power: { max: 300, mean: 200 },
    smo2: { end: 70, max: 70, mean: 60, min: 50, start: 60 },
    speed: { max: 6, mean: 4 },
    temperature: { end: 20, max: 22, mean: 20.8, min: 20, start: 20 },
  });
  t.deepEqual(Object.keys(summary), ['altitude', 'cadence', 'core_temperature', 'distance', 'heart_rate', 'power', 'smo2', 'speed', 'temperature'], 'SPEC order');
});

test('a member is absent when its channel has no value in the span', (t) => {
  const c = channels({ power: [NaN, NaN, 250], heart_rate: [NaN, NaN, NaN] });
  t.deepEqual(summarise(c, 0, 2), {});
  t.deepEqual(summarise(c, 0, 3), { power: { max: 250, mean: 250 } });
  t.deepEqual(summarise(c, 1, 1), {}, 'an empty span');
  t.deepEqual(summarise({}, 0, 10), {}, 'no channels');
});

test('statistics over a span [from, to)', (t) => {
  const c = channels({ power: [1, 2, 3, 4, 5, 6], temperature: [10, 11, 12, 13, 14, 15] });
  t.deepEqual(summarise(c, 2, 5), { power: { max: 5, mean: 4 }, temperature: { end: 14, max: 14, mean: 13, min: 12, start: 12 } });
});

test('distance: the cumulative counter’s increase; laps add up to the total', (t) => {
  const c = channels({ distance: [0, 5, 10, 20, NaN, 30], speed: [5, 5, 5, 10, NaN, 10] });
  t.deepEqual(whole(c).distance, { sum: 30 }, 'last − first');
  t.deepEqual(summarise(c, 0, 2).distance, { sum: 5 }, 'a first lap: from its first value');
  t.deepEqual(summarise(c, 2, 6).distance, { sum: 25 }, 'a later lap: from the last value before it (5), so 5 + 25 = 30');
  t.deepEqual(summarise(c, 5, 6).distance, { sum: 10 }, 'the value before the span is found across a NaN second');
  t.deepEqual(summarise(channels({ distance: [100, 100, 250] }), 0, 3).distance, { sum: 150 }, 'a counter that does not start at 0');
});

test('distance without a distance channel: Σ speed · 1 s', (t) => {
  const c = channels({ speed: [2, 3, NaN, 5] });
  t.deepEqual(whole(c).distance, { sum: 10 });
  t.deepEqual(summarise(c, 2, 3).distance, undefined, 'no speed value in the span');
  t.deepEqual(whole(channels({ distance: [NaN, NaN], speed: [4, 4] })).distance, { sum: 8 }, 'a distance channel without values in the span');
});

test(`altitude gain and loss with a hysteresis of ${ALTITUDE_HYSTERESIS_M} m`, (t) => {
  const change = (x: number[]) => elevationChange(Float64Array.from(x), 0, x.length, ALTITUDE_HYSTERESIS_M);
  t.is(ALTITUDE_HYSTERESIS_M, 1);
  t.deepEqual(change([100, 100.9, 100.1, 100.8, 100]), { gain: 0, loss: 0 }, 'noise within 1 m is not climbing');
  t.deepEqual(change([100, 101, 100, 101, 100]), { gain: 0, loss: 0 }, 'exactly 1 m does not exceed the hysteresis');
  t.deepEqual(change([100, 101.5, 100, 101.5, 100]), { gain: 3, loss: 3 }, 'swings of 1.5 m count in full');
  t.deepEqual(change([100, 100.5, 101.25, 100.5, 101.75]), { gain: 1.75, loss: 0 }, 'a dip under 1 m does not end a climb');
  t.deepEqual(change([200, 199.5, 198, 198.5, 197]), { gain: 0, loss: 3 });
  t.deepEqual(change([100, NaN, 103, NaN, 101]), { gain: 3, loss: 2 }, 'NaN seconds skipped');
  t.deepEqual(change([NaN, NaN]), { gain: 0, loss: 0 });
  t.deepEqual(change([5]), { gain: 0, loss: 0 });

  const steady = Array.from({ length: 101 }, (_, i) => 100 + i * 0.1); // 0.1 m per second for 100 s
  const climb = change(steady);
  t.true(Math.abs(climb.gain - 10) < 1e-9, 'a steady climb loses nothing');
  t.is(climb.loss, 0);

  // Over a span: the same algorithm on [from, to).
  const x = Float64Array.from([100, 110, 90, 95]);
  t.deepEqual(elevationChange(x, 1, 3, 1), { gain: 0, loss: 20 });
  t.deepEqual(summarise({ altitude: x }, 1, 4).altitude, { gain: 5, loss: 20, max: 110, mean: 295 / 3, min: 90 });
});

test('laps: indices from the lap instants, clamped to the grid; start/end kept as given', (t) => {
  const grid: Grid = { start: T0, length: 10, channels: channels({ power: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] }) };
  const at = (s: number) => new Date(T0 + s * 1000);
  const laps = lapStats(grid, [
    { start: at(-5), end: at(3) }, // starts before the grid: clamped to 0
    { start: at(3), end: at(7) },
    { start: at(7), end: at(20) }, // ends after the grid: clamped to its length
    { start: at(30), end: at(40) }, // entirely after the grid: no statistics
  ]);
  t.deepEqual(laps, [
    { start: T0 - 5000, end: T0 + 3000, power: { max: 2, mean: 1 } },
    { start: T0 + 3000, end: T0 + 7000, power: { max: 6, mean: 4.5 } },
    { start: T0 + 7000, end: T0 + 20_000, power: { max: 9, mean: 8 } },
    { start: T0 + 30_000, end: T0 + 40_000 },
  ]);
});

test('laps: a lap owns the seconds whose bin overlaps it (fractional instants)', (t) => {
  const grid: Grid = { start: T0, length: 4, channels: channels({ power: [10, 20, 30, 40] }) };
  // An activity starting at 0.6 s and ending at 3.6 s: its only lap covers every second of the grid.
  const [lap] = lapStats(grid, [{ start: new Date(T0 + 600), end: new Date(T0 + 3600) }]);
  t.deepEqual(lap, { start: T0 + 600, end: T0 + 3600, power: { max: 40, mean: 25 } });
});

test('laps: without laps, one lap spanning the activity', (t) => {
  const grid: Grid = { start: T0, length: 3, channels: channels({ heart_rate: [100, 110, 120] }) };
  t.deepEqual(lapStats(grid, [], { start: T0, end: T0 + 2500 }), [{ start: T0, end: T0 + 2500, heart_rate: { end: 120, max: 120, mean: 110, min: 100, start: 100 } }]);
  t.deepEqual(lapStats(grid, []), [{ start: T0, end: T0 + 3000, heart_rate: { end: 120, max: 120, mean: 110, min: 100, start: 100 } }], 'default: the whole grid');
});
