/**
 * Summaries, timing and laps of a 1 Hz grid (engine/ingest/summary.ts, ingest rules v2): cadence
 * mean over cadence > 0; power mean (zeros kept), normalized power and work; speed mean = distance
 * / moving seconds; altitude gain/loss from the device's totals, else a 3 m hysteresis; distance
 * from 0 when its first value can have been covered since the start; timer seconds from the pauses
 * (ms), moving seconds among the running ones, capped at the timer time.
 */
import test from 'ava';
import fc from 'fast-check';
import type { Channel } from '../engine/channels.ts';
import type { Grid } from '../engine/ingest/resample.ts';
import {
  ALTITUDE_HYSTERESIS_M,
  elevationChange,
  lapStats,
  MIN_MOVING_FOR_SPEED,
  normalizedPower,
  NP_WINDOW_SECONDS,
  summarise,
  timing,
} from '../engine/ingest/summary.ts';

const T0 = Date.parse('2024-05-01T10:00:00Z');

/** A grid from channel values; every second running unless `running` says otherwise; `pauses` in s after T0. */
function grid(
  c: Partial<Record<Channel, number[]>>,
  opts: { running?: number[]; pauses?: [number, number][]; length?: number } = {},
): Grid {
  const channels = Object.fromEntries(Object.entries(c).map(([k, v]) => [k, Float64Array.from(v)]));
  const length = opts.length ?? Object.values(c)[0]?.length ?? opts.running?.length ?? 0;
  return {
    start: T0,
    length,
    channels,
    running: Uint8Array.from(opts.running ?? Array.from({ length }, () => 1)),
    pauses: (opts.pauses ?? []).map(([a, b]) => ({ start: T0 + a * 1000, end: T0 + b * 1000 })),
  };
}
const whole = (g: Grid) => summarise(g, 0, g.length);
const repeat = (n: number, v: number) => Array.from({ length: n }, () => v);

test('every SPEC member with exactly its statistics, NaN seconds left out', (t) => {
  const summary = whole(
    grid({
      power: [100, NaN, 300, 200, NaN],
      cadence: [80, 0, NaN, 100, NaN],
      speed: [2, 4, NaN, 6, NaN],
      distance: [0, 2, 6, 12, NaN],
      altitude: [100, 104, 102, 105, 99],
      heart_rate: [NaN, 120, 130, 110, NaN],
      temperature: [20, 21, 22, 21, 20],
      core_temperature: [37, NaN, 38, NaN, NaN],
      smo2: [NaN, NaN, 60, 50, 70],
      latitude: [46, 46, 46, 46, 46],
      respiration_rate: [20, 20, 20, 20, 20],
    }),
  );
  t.deepEqual(summary, {
    altitude: { gain: 5, loss: 6, max: 105, mean: 102, min: 99 },
    cadence: { max: 100, mean: 90 },
    core_temperature: { end: 38, max: 38, mean: 37.5, min: 37, start: 37 },
    distance: { sum: 12 },
    heart_rate: { end: 110, max: 130, mean: 120, min: 110, start: 120 },
    power: { max: 300, mean: 200, work: 0.6 },
    smo2: { end: 70, max: 70, mean: 60, min: 50, start: 60 },
    speed: { max: 6, mean: 4 }, // 4 moving seconds (the last has no speed, power or cadence): under MIN_MOVING_FOR_SPEED, the mean of the recorded speeds
    temperature: { end: 20, max: 22, mean: 20.8, min: 20, start: 20 },
  });
  t.deepEqual(
    Object.keys(summary),
    ['altitude', 'cadence', 'core_temperature', 'distance', 'heart_rate', 'power', 'smo2', 'speed', 'temperature'],
    'SPEC order',
  );
});

test('a member is absent when its channel has no value in the span', (t) => {
  const g = grid({ power: [NaN, NaN, 250], heart_rate: [NaN, NaN, NaN] });
  t.deepEqual(summarise(g, 0, 2), {});
  t.deepEqual(summarise(g, 0, 3), { power: { max: 250, mean: 250, work: 0.25 } });
  t.deepEqual(summarise(g, 1, 1), {}, 'an empty span');
  t.deepEqual(summarise(grid({}, { length: 10 }), 0, 10), {}, 'no channels');
});

test('statistics over a span [from, to)', (t) => {
  const g = grid({ power: [1, 2, 3, 4, 5, 6], temperature: [10, 11, 12, 13, 14, 15] });
  t.deepEqual(summarise(g, 2, 5), {
    power: { max: 5, mean: 4, work: 12 / 1000 },
    temperature: { end: 14, max: 14, mean: 13, min: 12, start: 12 },
  });
});

test('cadence: max over every second, mean over the seconds with cadence > 0 (coasting left out)', (t) => {
  t.deepEqual(whole(grid({ cadence: [0, 0, 90, 0, 80, NaN] })).cadence, { max: 90, mean: 85 });
  t.deepEqual(whole(grid({ cadence: [0, 0, NaN] })).cadence, { max: 0, mean: 0 }, 'never turning: 0');
});

test('power: mean over recorded seconds with zeros kept; work = Σ power × 1 s in kJ; NP from 30 recorded seconds', (t) => {
  t.deepEqual(whole(grid({ power: [0, 0, 300, NaN] })).power, { max: 300, mean: 100, work: 0.3 });
  t.is(NP_WINDOW_SECONDS, 30);
  t.is(whole(grid({ power: repeat(29, 200) })).power!.normalized, undefined, '29 seconds: no full window');
  t.is(whole(grid({ power: repeat(30, 200) })).power!.normalized, 200, 'a constant: itself');
  t.deepEqual(whole(grid({ power: [...repeat(30, 200), NaN, NaN] })).power, { max: 200, mean: 200, normalized: 200, work: 6 });
  // Alternating 60 s at 400 W and 60 s at 0: NP well above the mean (the 4th power weighs the hard minutes).
  const intervals = Array.from({ length: 600 }, (_, i) => (Math.floor(i / 60) % 2 === 0 ? 400 : 0));
  const p = whole(grid({ power: intervals })).power!;
  t.is(p.mean, 200);
  t.true(p.normalized! > 250 && p.normalized! < 400, `NP ${p.normalized}`);
});

/** NP as its definition says, naively: the running recorded values in order, every full 30-value window's mean, the 4th root of the mean 4th power. */
function naiveNormalizedPower(power: number[], running: number[], from: number, to: number): number | undefined {
  const kept: number[] = [];
  for (let i = from; i < to; i++) if (running[i] && !Number.isNaN(power[i]!)) kept.push(power[i]!);
  const fourth: number[] = [];
  for (let end = 30; end <= kept.length; end++) {
    let sum = 0;
    for (let j = end - 30; j < end; j++) sum += kept[j]!;
    fourth.push((sum / 30) ** 4);
  }
  if (fourth.length === 0) return undefined;
  return (fourth.reduce((s, v) => s + v, 0) / fourth.length) ** 0.25;
}

test('normalizedPower equals the naive O(n·30) computation over the running, recorded seconds (random data with pauses and dropouts)', (t) => {
  const arb = fc.integer({ min: 0, max: 900 }).chain((n) =>
    fc.record({
      power: fc.array(
        fc.oneof(
          { weight: 8, arbitrary: fc.integer({ min: 0, max: 1200 }) },
          { weight: 1, arbitrary: fc.constant(0) },
          { weight: 1, arbitrary: fc.constant(Number.NaN) },
        ),
        { minLength: n, maxLength: n },
      ),
      // Pauses as runs: a paused second keeps a value here, to show it is the timer that leaves it out.
      running: fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 1, max: 120 })), { maxLength: 20 }).map((runs) => {
        const out: number[] = [];
        for (const [on, len] of runs) for (let i = 0; i < len && out.length < n; i++) out.push(on ? 1 : 0);
        while (out.length < n) out.push(1);
        return out;
      }),
      span: fc.tuple(fc.integer({ min: 0, max: n }), fc.integer({ min: 0, max: n })).map(([a, b]) => (a <= b ? [a, b] : [b, a])),
    }),
  );
  let compared = 0;
  fc.assert(
    fc.property(arb, ({ power, running, span: [from, to] }) => {
      const got = normalizedPower(Float64Array.from(power), Uint8Array.from(running), from!, to!);
      const want = naiveNormalizedPower(power, running, from!, to!);
      if (want === undefined) return got === undefined;
      compared++;
      return got !== undefined && Math.abs(got - want) <= 1e-9 * Math.max(1, want);
    }),
    { numRuns: 300, seed: 3 },
  );
  t.true(compared > 100, `${compared} runs had a full window`);
});

test('normalized power skips a pause: a window spans it', (t) => {
  // 60 s at 300 W, a 3-minute pause (values left in the paused seconds on purpose), 60 s at 300 W.
  const power = [...repeat(60, 300), ...repeat(180, 0), ...repeat(60, 300)];
  const running = [...repeat(60, 1), ...repeat(180, 0), ...repeat(60, 1)];
  t.is(normalizedPower(Float64Array.from(power), Uint8Array.from(running), 0, power.length), 300);
  t.true(
    normalizedPower(Float64Array.from(power), Uint8Array.from(repeat(300, 1)), 0, power.length)! < 250,
    'the same zeros with the timer running count',
  );
  const dropouts = [...repeat(60, 300), ...repeat(180, NaN), ...repeat(60, 300)];
  t.is(
    normalizedPower(Float64Array.from(dropouts), Uint8Array.from(repeat(300, 1)), 0, power.length),
    300,
    'empty seconds are skipped likewise',
  );
});

test('distance: the cumulative counter’s increase; laps add up to the total', (t) => {
  const g = grid({ distance: [0, 5, 10, 20, NaN, 30], speed: [5, 5, 5, 10, NaN, 10] });
  t.deepEqual(whole(g).distance, { sum: 30 }, 'last − first');
  t.deepEqual(summarise(g, 0, 2).distance, { sum: 5 }, 'a first lap: from its first value');
  t.deepEqual(summarise(g, 2, 6).distance, { sum: 25 }, 'a later lap: from the last value before it (5), so 5 + 25 = 30');
  t.deepEqual(summarise(g, 5, 6).distance, { sum: 10 }, 'the value before the span is found across a NaN second');
});

test('distance from 0 when its first value can have been covered since the start (≤ 100 m/s), else from that value', (t) => {
  t.deepEqual(
    whole(grid({ distance: [...repeat(29, NaN), 25, 50] })).distance,
    { sum: 50 },
    'a pool’s first length, recorded after 30 s: 25 m more than last − first',
  );
  t.deepEqual(whole(grid({ distance: [NaN, NaN, 300, 310] })).distance, { sum: 310 }, '300 m by the end of second 2: 100 m/s, from 0');
  t.deepEqual(
    whole(grid({ distance: [NaN, NaN, 301, 311] })).distance,
    { sum: 10 },
    '301 m: faster than 100 m/s, a counter that did not start at 0',
  );
  t.deepEqual(whole(grid({ distance: [5000, 5010, 5020] })).distance, { sum: 20 }, 'a later session of a multisport file');
  t.deepEqual(whole(grid({ distance: [100, 100, 250] })).distance, { sum: 250 }, '100 m in the first second: from 0');
});

test('distance without a distance channel: Σ speed · 1 s', (t) => {
  const g = grid({ speed: [2, 3, NaN, 5] });
  t.deepEqual(whole(g).distance, { sum: 10 });
  t.deepEqual(summarise(g, 2, 3).distance, undefined, 'no speed value in the span');
  t.deepEqual(whole(grid({ distance: [NaN, NaN], speed: [4, 4] })).distance, { sum: 8 }, 'a distance channel without values in the span');
});

test('speed: max over the seconds, mean = distance / moving seconds (not the mean of the seconds)', (t) => {
  // A stop with the timer running: 60 s at 10 m/s, 60 s standing (speed 0, held), 60 s at 10 m/s.
  const speed = [...repeat(60, 10), ...repeat(60, 0), ...repeat(60, 10)];
  const distance = speed.map((_, i) => 10 * (Math.min(i, 60) + Math.max(0, i - 120)));
  const g = grid({ speed, distance });
  t.is(timing(g, { start: T0, end: T0 + 180_000 }, 0, 180).moving_seconds, 120);
  t.deepEqual(whole(g).speed, { max: 10, mean: distance[179]! / 120 }, 'the mean of the seconds would be 6.6');
  t.deepEqual(whole(grid({ speed: [0, 0.2] })).speed, { max: 0.2, mean: 0.1 }, 'never moving: the mean of the seconds');
  // A span of under MIN_MOVING_FOR_SPEED moving seconds (a rest lap sharing its last second with the next length).
  t.is(MIN_MOVING_FOR_SPEED, 5);
  const short = grid({ speed: [1, 1, 1, 1], distance: [0, 1, 2, 30] });
  t.deepEqual(whole(short).speed, { max: 1, mean: 1 }, '4 moving seconds: the mean of the seconds, not 30 m / 4 s');
  const five = grid({ speed: [1, 1, 1, 1, 1], distance: [0, 1, 2, 3, 30] });
  t.deepEqual(whole(five).speed, { max: 1, mean: 6 }, '5 moving seconds: 30 m / 5 s');
});

test('moving seconds: running seconds with speed ≥ 0.5, power > 0 or cadence > 0; without those channels, every recorded running second', (t) => {
  const g = grid(
    { speed: [0, 0.4, 0.5, 5, NaN, 0, 0, 9], power: [0, 0, 0, 0, 100, 0, NaN, 300], cadence: [0, 0, 0, 0, 0, 60, NaN, 90] },
    { running: [1, 1, 1, 1, 1, 1, 1, 0] },
  );
  const span = { start: T0, end: T0 + 8000 };
  t.is(timing(g, span, 0, 8).moving_seconds, 4, '0.5 m/s, 5 m/s, 100 W, 60 rpm; not the paused second');
  t.is(timing(g, span, 3, 6).moving_seconds, 3, 'over a span');
  const hr = grid({ heart_rate: [NaN, 100, 100, 100, NaN] }, { running: [1, 1, 1, 0, 1] });
  t.is(timing(hr, { start: T0, end: T0 + 5000 }, 0, 5).moving_seconds, 2, 'heart rate only: the recorded running seconds');
});

test('timer seconds: the span less its pauses, to the millisecond; moving seconds capped at it', (t) => {
  const g = grid({ power: repeat(30, 200) }, { pauses: [[10.5, 20]], running: [...repeat(11, 1), ...repeat(9, 0), ...repeat(10, 1)] });
  t.deepEqual(
    timing(g, { start: T0, end: T0 + 30_000 }, 0, 30),
    { timer_seconds: 20.5, moving_seconds: 20.5 },
    '21 moving running seconds, capped at 20.5',
  );
  t.deepEqual(
    timing(g, { start: T0 + 15_000, end: T0 + 30_000 }, 15, 30),
    { timer_seconds: 10, moving_seconds: 10 },
    'a span starting inside the pause',
  );
  t.deepEqual(timing(g, { start: T0, end: T0 + 10_000 }, 0, 10), { timer_seconds: 10, moving_seconds: 10 }, 'a span before it');
  const open = grid({ power: repeat(30, 200) }, { pauses: [[25, Infinity]] });
  t.is(timing(open, { start: T0, end: T0 + 30_000 }, 0, 30).timer_seconds, 25, 'a pause to the end of the file');
});

test(`altitude gain and loss with a hysteresis of ${ALTITUDE_HYSTERESIS_M} m`, (t) => {
  const change = (x: number[]) => elevationChange(Float64Array.from(x), 0, x.length, ALTITUDE_HYSTERESIS_M);
  t.is(ALTITUDE_HYSTERESIS_M, 3);
  t.deepEqual(change([100, 102.9, 100.1, 102.8, 100]), { gain: 0, loss: 0 }, 'noise within 3 m is not climbing');
  t.deepEqual(change([100, 103, 100, 103, 100]), { gain: 0, loss: 0 }, 'exactly 3 m does not exceed the hysteresis');
  t.deepEqual(change([100, 104.5, 100, 104.5, 100]), { gain: 9, loss: 9 }, 'swings of 4.5 m count in full');
  t.deepEqual(change([100, 101.5, 103.75, 101.5, 105.25]), { gain: 5.25, loss: 0 }, 'a dip under 3 m does not end a climb');
  t.deepEqual(change([200, 198.5, 194, 195.5, 191]), { gain: 0, loss: 9 });
  t.deepEqual(change([100, NaN, 109, NaN, 103]), { gain: 9, loss: 6 }, 'NaN seconds skipped');
  t.deepEqual(change([NaN, NaN]), { gain: 0, loss: 0 });
  t.deepEqual(change([5]), { gain: 0, loss: 0 });

  const steady = Array.from({ length: 101 }, (_, i) => 100 + i * 0.1); // 0.1 m per second for 100 s
  const climb = change(steady);
  t.true(Math.abs(climb.gain - 10) < 1e-9, 'a steady climb loses nothing');
  t.is(climb.loss, 0);

  // Over a span: the same algorithm on [from, to).
  const x = [100, 110, 90, 95];
  t.deepEqual(elevationChange(Float64Array.from(x), 1, 3, ALTITUDE_HYSTERESIS_M), { gain: 0, loss: 20 });
  t.deepEqual(summarise(grid({ altitude: x }), 1, 4).altitude, { gain: 5, loss: 20, max: 110, mean: 295 / 3, min: 90 });
});

test('altitude gain and loss: the device’s totals when given, else counted', (t) => {
  const g = grid({ altitude: [100, 110, 90, 95] });
  t.deepEqual(summarise(g, 0, 4, { ascent: 123, descent: 45 }).altitude, { gain: 123, loss: 45, max: 110, mean: 98.75, min: 90 });
  t.like(summarise(g, 0, 4, { ascent: 123 }).altitude, { gain: 123, loss: 20 }, 'only the ascent: the loss counted');
  t.like(summarise(g, 0, 4, { descent: 45 }).altitude, { gain: 15, loss: 45 }, 'only the descent: the gain counted');
  t.like(summarise(g, 0, 4, {}).altitude, { gain: 15, loss: 20 });
  t.like(summarise(g, 0, 4, { ascent: 0, descent: 0 }).altitude, { gain: 0, loss: 0 }, 'a device total of 0 is a total');
});

test('laps: indices from the lap instants, clamped to the grid; start/end kept as given; timer and moving seconds', (t) => {
  const g = grid({ power: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] });
  const at = (s: number) => new Date(T0 + s * 1000);
  const laps = lapStats(g, [
    { start: at(-5), end: at(3) }, // starts before the grid: clamped to 0
    { start: at(3), end: at(7) },
    { start: at(7), end: at(20) }, // ends after the grid: clamped to its length
    { start: at(30), end: at(40) }, // entirely after the grid: no statistics
  ]);
  t.deepEqual(laps, [
    { start: T0 - 5000, end: T0 + 3000, timer_seconds: 8, moving_seconds: 2, power: { max: 2, mean: 1, work: 3 / 1000 } },
    { start: T0 + 3000, end: T0 + 7000, timer_seconds: 4, moving_seconds: 4, power: { max: 6, mean: 4.5, work: 18 / 1000 } },
    { start: T0 + 7000, end: T0 + 20_000, timer_seconds: 13, moving_seconds: 3, power: { max: 9, mean: 8, work: 24 / 1000 } },
    { start: T0 + 30_000, end: T0 + 40_000, timer_seconds: 10, moving_seconds: 0 },
  ]);
});

test('laps: a lap owns the seconds whose bin overlaps it (fractional instants)', (t) => {
  const g = grid({ power: [10, 20, 30, 40] });
  // An activity starting at 0.6 s and ending at 3.6 s: its only lap covers every second of the grid.
  const [lap] = lapStats(g, [{ start: new Date(T0 + 600), end: new Date(T0 + 3600) }]);
  t.deepEqual(lap, { start: T0 + 600, end: T0 + 3600, timer_seconds: 3, moving_seconds: 3, power: { max: 40, mean: 25, work: 0.1 } });
});

test('laps: their own ascent totals; their speed mean over their own moving seconds; a pause leaves their timer', (t) => {
  const speed = [...repeat(10, 5), ...repeat(10, 0), ...repeat(10, 5)];
  const distance = speed.map((_, i) => 5 * (Math.min(i + 1, 10) + Math.max(0, i - 19))); // 5 m in each second at 5 m/s
  const g = grid(
    { speed, distance, altitude: [...repeat(15, 100), ...repeat(15, 120)] },
    { pauses: [[12, 16]], running: [...repeat(13, 1), ...repeat(3, 0), ...repeat(14, 1)] },
  );
  const at = (s: number) => new Date(T0 + s * 1000);
  const [first, second] = lapStats(g, [
    { start: at(0), end: at(15), totalAscent: 7, totalDescent: 1 },
    { start: at(15), end: at(30) },
  ]);
  t.like(first, { timer_seconds: 12, moving_seconds: 10, altitude: { gain: 7, loss: 1 }, speed: { max: 5, mean: 5 } });
  t.like(
    second,
    { timer_seconds: 14, moving_seconds: 10, altitude: { gain: 0, loss: 0 }, speed: { max: 5, mean: 5 } },
    'no lap totals: counted over its own seconds (the step lies between the laps)',
  );
});

test('laps: without laps, one lap spanning the activity, with the activity’s totals', (t) => {
  const g = grid({ heart_rate: [100, 110, 120], altitude: [10, 20, 30] });
  const hr = { end: 120, max: 120, mean: 110, min: 100, start: 100 };
  t.deepEqual(lapStats(g, [], { start: T0, end: T0 + 2500, totals: { ascent: 18, descent: 2 } }), [
    {
      start: T0,
      end: T0 + 2500,
      timer_seconds: 2.5,
      moving_seconds: 2.5,
      heart_rate: hr,
      altitude: { gain: 18, loss: 2, max: 30, mean: 20, min: 10 },
    },
  ]);
  t.deepEqual(
    lapStats(g, []),
    [
      {
        start: T0,
        end: T0 + 3000,
        timer_seconds: 3,
        moving_seconds: 3,
        heart_rate: hr,
        altitude: { gain: 20, loss: 0, max: 30, mean: 20, min: 10 },
      },
    ],
    'default: the whole grid, counted',
  );
});
