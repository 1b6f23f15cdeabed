/**
 * Ingest rules v2 end to end (engine/ingest/rules.ts): FIT files written by Garmin's FIT SDK encoder
 * (test/helpers/fit-builder.ts) and CSV files, through ingestFile (and parseFit + resample where
 * the timer's seconds are needed): smart recording filled, timer pauses empty and out of the timer
 * time, a standstill held, long CSV gaps as pauses, distance from the start, dropped records, the
 * device's own summary and ascent totals, cadence without zeros.
 */
import test from 'ava';
import { parseFit } from '../engine/ingest/fit.ts';
import { ingestFile } from '../engine/ingest/ingest.ts';
import type { IngestedActivity, IngestResult } from '../engine/ingest/ingested.ts';
import { resample } from '../engine/ingest/resample.ts';
import { ALTITUDE_HYSTERESIS_M } from '../engine/ingest/summary.ts';
import { buildActivityFit, type RecordFields, type SessionSpec } from './helpers/fit-builder.ts';

const START = new Date('2024-05-01T08:00:00Z');
const T0 = START.getTime();

function activities(result: IngestResult): IngestedActivity[] {
  if (!result.ok) throw new Error(`refused: ${result.code}: ${result.message}`);
  return result.activities;
}
async function ingestFit(bytes: Uint8Array): Promise<IngestedActivity> {
  const [a, ...rest] = activities(await ingestFile({ format: 'fit', bytes, sport: null }));
  if (rest.length > 0) throw new Error('one session expected');
  return a!;
}
async function ingestCsv(rows: string[], sport = 'cycling'): Promise<IngestedActivity> {
  const [a] = activities(await ingestFile({ format: 'csv', bytes: new TextEncoder().encode(rows.join('\n')), sport }));
  return a!;
}
/** One cycling session at START with records at the given offsets (s). */
function ride(times: number[], record: (i: number) => RecordFields, extra: Partial<SessionSpec> = {}): Uint8Array {
  return buildActivityFit({
    sessions: [
      {
        sport: 'cycling',
        start: START,
        seconds: times.length,
        elapsed: times[times.length - 1]!,
        recordTimes: (i) => times[i]!,
        record,
        ...extra,
      },
    ],
  });
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);
const isEmpty = (x: Float64Array | undefined, from: number, to: number) =>
  x === undefined || Array.from(x.subarray(from, to)).every(Number.isNaN);
const close = (a: number, b: number, rel: number) => Math.abs(a - b) <= rel * Math.abs(b);

/** mulberry32: a seeded generator, so the irregular gaps are the same on every run. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let r = Math.imul(s ^ (s >>> 15), 1 | s);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
}

/** NP by its definition, naively: every full 30-value window of the values (in order), the 4th root of the mean 4th power of their means. */
function naiveNp(values: number[]): number {
  const fourth: number[] = [];
  for (let end = 30; end <= values.length; end++) fourth.push((values.slice(end - 30, end).reduce((s, v) => s + v, 0) / 30) ** 4);
  return (fourth.reduce((s, v) => s + v, 0) / fourth.length) ** 0.25;
}

test('a smart-recorded ride (irregular gaps of 1–70 s, no pause): no empty second while the timer runs; heart rate the time-weighted mean; timer = elapsed', async (t) => {
  const next = random(42);
  const times = [0];
  while (times[times.length - 1]! < 3600) times.push(times[times.length - 1]! + 1 + Math.floor(next() * 70));
  const hr = (s: number) => Math.round(140 + 25 * Math.sin(s / 400));
  const power = (s: number) => Math.round(200 + 120 * Math.sin(s / 170));
  const speed = (s: number) => 7 + 2 * Math.sin(s / 500);
  let distance = 0;
  const record = (i: number): RecordFields => {
    if (i > 0) distance += ((speed(times[i - 1]!) + speed(times[i]!)) / 2) * (times[i]! - times[i - 1]!);
    return {
      heartRate: hr(times[i]!),
      power: power(times[i]!),
      speed: speed(times[i]!),
      cadence: 88,
      distance: Math.round(distance * 100) / 100,
    };
  };
  const bytes = ride(times, record);
  const last = times[times.length - 1]!;
  t.true(
    times.some((s, k) => k > 0 && s - times[k - 1]! > 60),
    'some gaps are long',
  );

  const [rec] = await parseFit(bytes);
  t.deepEqual(
    rec!.pauses,
    [{ start: T0 + last * 1000, end: T0 + last * 1000 + 1000 }],
    'start and stop_all at the ends: the timer ran throughout',
  );
  t.true(resample(rec!).running.every((r) => r === 1));

  const a = await ingestFit(bytes);
  t.is(a.length, last + 1);
  for (const c of ['power', 'heart_rate', 'speed', 'cadence', 'distance'] as const)
    t.true(
      Array.from(a.channels[c]!).every((v) => !Number.isNaN(v)),
      `${c}: no empty second`,
    );

  // The records' heart rate, linear between them, averaged over the time.
  let integral = 0;
  for (let k = 1; k < times.length; k++) integral += ((hr(times[k - 1]!) + hr(times[k]!)) / 2) * (times[k]! - times[k - 1]!);
  const timeWeighted = integral / last;
  const recordMean = times.reduce((s, x) => s + hr(x), 0) / times.length;
  t.true(
    close(a.summary.heart_rate!.mean!, timeWeighted, 0.005),
    `mean ${a.summary.heart_rate!.mean} vs the time-weighted ${timeWeighted} (the records' plain mean: ${recordMean})`,
  );
  // Second by second: linear between the records (a gap inside a running timer "changed smoothly").
  const linear = range(0, last + 1).map((s) => {
    const k = times.findIndex((x) => x >= s);
    if (times[k] === s) return hr(s);
    const [t0, t1] = [times[k - 1]!, times[k]!];
    return hr(t0) + ((hr(t1) - hr(t0)) * (s - t0)) / (t1 - t0);
  });
  t.true(
    linear.every((v, s) => close(a.channels.heart_rate![s]!, v, 1e-9)),
    'every second linear between the records',
  );
  t.is(a.timerSeconds, last);
  t.is(a.summary.cadence!.mean, 88);
  t.is(a.summary.distance!.sum, a.channels.distance![last]!);
});

test('a timer pause (stop_all … start, 3 minutes without records): its seconds empty, out of the timer time, skipped by NP', async (t) => {
  const times = [...range(0, 601), ...range(780, 1380)];
  const power = (s: number) => 150 + ((s * 37) % 250);
  const bytes = ride(
    times,
    (i) => ({
      power: power(times[i]!),
      heartRate: 150,
      cadence: 90,
      speed: 8,
      distance: 8 * (times[i]! <= 600 ? times[i]! : times[i]! - 180),
    }),
    {
      events: [
        { at: 600, eventType: 'stopAll' },
        { at: 780, eventType: 'start' },
      ],
    },
  );
  const [rec] = await parseFit(bytes);
  t.deepEqual(rec!.pauses![0], { start: T0 + 600_000, end: T0 + 780_000 });
  const grid = resample(rec!);
  t.deepEqual(
    range(595, 785).filter((i) => !grid.running[i]),
    range(601, 780),
    'the stop second (600) runs, 601–779 are paused',
  );

  const a = await ingestFit(bytes);
  for (const c of ['power', 'heart_rate', 'cadence', 'speed'] as const)
    t.true(isEmpty(a.channels[c], 601, 780), `${c}: empty while paused`);
  t.true(isEmpty(a.channels.distance, 601, 780), 'distance: nothing recorded, nothing filled');
  t.is(a.channels.power![600], power(600));
  t.is(a.channels.power![780], power(780));
  t.is(a.timerSeconds, 1379 - 180, 'elapsed − the 3 minutes');
  t.is(a.movingSeconds, 1379 - 180, 'every running second moves (capped at the timer time)');
  const np = naiveNp(times.map(power));
  t.true(
    close(a.summary.power!.normalized!, np, 1e-9),
    `NP ${a.summary.power!.normalized} vs ${np} over the recorded seconds, the pause skipped`,
  );
  const withPause = naiveNp([...range(0, 601).map(power), ...range(601, 780).map(() => 0), ...range(780, 1380).map(power)]);
  t.true(Math.abs(np - withPause) > 5, `(counting the pause as zeros would give ${withPause})`);
  t.is(a.summary.power!.mean, times.map(power).reduce((s, v) => s + v, 0) / times.length);
  t.true(close(a.summary.power!.work!, times.map(power).reduce((s, v) => s + v, 0) / 1000, 1e-12), 'work: kJ');
  t.is(a.laps[0]!.timer_seconds, 1379 - 180);
});

test('a stop the records contradict is not taken: records at least every other second inside it (a stop stamped at the timer time); a rest with a few records is', async (t) => {
  // A Sigma-like file: the stop_all event at 600 s, records at 1 Hz on to 640 s.
  const times = range(0, 641);
  const bytes = ride(times, (i) => ({ power: 200, heartRate: 140, cadence: 90, speed: 8, distance: 8 * times[i]! }), {
    events: [{ at: 600, eventType: 'stopAll' }],
  });
  const [rec] = await parseFit(bytes);
  t.deepEqual(rec!.pauses, [], 'the trailing stop is contradicted by 40 s of records');
  const a = await ingestFit(bytes);
  t.is(a.timerSeconds, 640);
  t.is(a.channels.power![620], 200, 'its records kept');

  // A pool-swim-like rest: the timer stopped 600 → 660 s, three records in it (the length that ended at the stop, two drills' marks).
  const rest = [...range(0, 601), 603, 630, 657, ...range(660, 900)];
  const swim = ride(rest, (i) => ({ speed: rest[i]! > 600 && rest[i]! < 660 ? 0 : 1, heartRate: 140, distance: rest[i]! }), {
    events: [
      { at: 600, eventType: 'stopAll' },
      { at: 660, eventType: 'start' },
    ],
  });
  const [kept] = await parseFit(swim);
  t.deepEqual(kept!.pauses![0], { start: T0 + 600_000, end: T0 + 660_000 }, 'three records in a minute do not contradict it');
  const b = await ingestFit(swim);
  t.true(isEmpty(b.channels.heart_rate, 601, 660), 'the rest is empty, its record included');
  t.is(b.timerSeconds, 899 - 60);
});

test("a pool swim: speed, stroke rate and distance from its length messages; a drill set's lengths follow each other; its moving time is its active lengths", async (t) => {
  // 4 lengths of 25 m (30 s each, 0.8–0.9 m/s), a 60 s rest (timer stopped, one record), then a drill set
  // whose two lengths both carry the set's start (60 s each, no speed or strokes), then one more length.
  const lengths = [
    { at: 0, elapsed: 30, speed: 0.9, cadence: 24 },
    { at: 30, elapsed: 30, speed: 0.85, cadence: 25 },
    { at: 60, elapsed: 30, speed: 0.85, cadence: 26 },
    { at: 90, elapsed: 30, speed: 0.8, cadence: 25 },
    { at: 120, elapsed: 60, speed: 0, cadence: 0, type: 'idle' as const },
    { at: 180, elapsed: 60, speed: 0, cadence: 0 },
    { at: 180, elapsed: 60, speed: 0, cadence: 0 },
    { at: 300, elapsed: 30, speed: 0.9, cadence: 22 },
  ];
  // Records as a watch writes them in a pool: one per length, late, one in the rest, none for the drills.
  const times = [30, 60, 90, 120, 150, 300, 330];
  const bytes = buildActivityFit({
    sessions: [
      {
        sport: 'swimming',
        subSport: 'lapSwimming',
        start: START,
        seconds: times.length,
        elapsed: 330,
        recordTimes: (i) => times[i]!,
        record: (i) => ({ speed: 0.85, distance: 25 * (i + 1), heartRate: 140 + i }),
        events: [
          { at: 120, eventType: 'stopAll' },
          { at: 180, eventType: 'start' },
        ],
        lengths,
        sessionFields: { poolLength: 25 },
      },
    ],
  });
  const [rec] = await parseFit(bytes);
  t.deepEqual(
    rec!.lengths!.map((l) => [(l.start - START.getTime()) / 1000, (l.end - START.getTime()) / 1000, l.speed, l.cadence]),
    [
      [0, 30, 0.9, 24],
      [30, 60, 0.85, 25],
      [60, 90, 0.85, 26],
      [90, 120, 0.8, 25],
      [180, 240, 25 / 60, undefined],
      [240, 300, 25 / 60, undefined],
      [300, 330, 0.9, 22],
    ],
    'active lengths only; the drill lengths follow each other, at 25 m over their time and no stroke rate',
  );
  const a = await ingestFit(bytes);
  t.deepEqual(Array.from(a.channels.speed!.subarray(0, 3)), [0.9, 0.9, 0.9]);
  t.is(a.channels.speed![250], 25 / 60);
  t.true(isEmpty(a.channels.speed, 121, 180) && isEmpty(a.channels.heart_rate, 121, 180), 'the rest is empty');
  t.is(a.channels.distance![29], 25, 'the counter reaches the pool length at the length’s last second');
  t.is(a.summary.distance!.sum, 7 * 25, 'seven active lengths');
  t.is(a.timerSeconds, 330 - 60);
  t.is(a.movingSeconds, 270, 'every second of an active length moves, the 0.42 m/s drills too (below the 0.5 m/s of the motion test)');
  t.true(close(a.summary.speed!.mean!, 175 / 270, 1e-12));
  const strokes = [
    ...range(0, 30).map(() => 24),
    ...range(0, 30).map(() => 25),
    ...range(0, 30).map(() => 26),
    ...range(0, 30).map(() => 25),
    ...range(0, 30).map(() => 22),
  ];
  t.true(
    close(a.summary.cadence!.mean!, strokes.reduce((s, v) => s + v, 0) / strokes.length, 1e-12),
    'stroke rate over the seconds that have one (not the drills)',
  );
  t.is(a.summary.heart_rate!.max, 146, 'the records give the other channels');
});

test('a stop at a standstill with the timer running: held at 0, not interpolated; not moving; speed mean = distance / moving time', async (t) => {
  const times = [...range(0, 101), ...range(140, 201)];
  const stopped = (s: number) => s === 100;
  const distance = (s: number) => (s <= 100 ? 8 * s : 800 + 8 * (s - 140));
  const bytes = ride(times, (i) => ({
    speed: stopped(times[i]!) ? 0 : 8,
    power: stopped(times[i]!) ? 0 : 220,
    cadence: stopped(times[i]!) ? 0 : 90,
    heartRate: stopped(times[i]!) ? 120 : 140,
    distance: distance(times[i]!),
  }));
  const a = await ingestFit(bytes);
  t.deepEqual(
    Array.from(a.channels.speed!.subarray(100, 141)),
    [...range(100, 140).map(() => 0), 8],
    'held at 0 (interpolated would be 0.2, 0.4, …)',
  );
  t.deepEqual(
    Array.from(a.channels.power!.subarray(100, 140)),
    range(100, 140).map(() => 0),
  );
  t.deepEqual(
    Array.from(a.channels.heart_rate!.subarray(100, 140)),
    range(100, 140).map(() => 120),
  );
  t.deepEqual(
    Array.from(a.channels.distance!.subarray(100, 140)),
    range(100, 140).map(() => 800),
  );
  t.is(a.timerSeconds, 200);
  t.is(a.movingSeconds, 100 + 61, 'the 40 standing seconds (100–139) are not moving');
  t.is(a.summary.distance!.sum, 800 + 8 * 60);
  t.is(a.summary.speed!.mean, (800 + 8 * 60) / a.movingSeconds);
  t.is(a.summary.speed!.max, 8);
});

test('CSV: a 120 s gap is a pause (empty, out of the timer time), a 30 s gap is filled', async (t) => {
  const at = (s: number) => new Date(T0 + s * 1000).toISOString();
  const seconds = [...range(0, 101), ...range(220, 251), ...range(280, 301)];
  const power = (s: number) => 100 + s;
  const a = await ingestCsv(['timestamp,power,heart_rate', ...seconds.map((s) => `${at(s)},${power(s)},${130 + (s % 3)}`)]);
  t.is(a.length, 301);
  t.true(isEmpty(a.channels.power, 101, 220) && isEmpty(a.channels.heart_rate, 101, 220), 'the 120 s gap is empty');
  t.deepEqual(Array.from(a.channels.power!.subarray(250, 281)), range(250, 281).map(power), 'the 30 s gap filled linearly');
  // The CSV's end is its last row + 1 s (301 s); the pause runs from the row before the gap (100 s) to the row after it (220 s).
  t.is(a.timerSeconds, 301 - 120, 'the pause is out of the timer time');
  t.is(a.movingSeconds, 301 - 120, '182 running seconds (153 rows, 29 filled), capped at the timer time');
  t.is(a.summary.power!.mean, [...range(0, 101), ...range(220, 301)].reduce((s, x) => s + power(x), 0) / 182);
});

test('CSV with sub-second timestamps: the row after a long gap keeps its values', async (t) => {
  const at = (s: number) => new Date(T0 + s * 1000).toISOString();
  const seconds = [...range(0, 10), ...range(130, 140)].map((s) => s + 0.5);
  const a = await ingestCsv(['timestamp,power', ...seconds.map((s) => `${at(s)},${200 + Math.floor(s)}`)]);
  t.is(a.channels.power![130], 330, 'the row at 130.5 s, the first after the 120.5 s pause');
  t.is(a.summary.power!.mean, seconds.reduce((s, x) => s + 200 + Math.floor(x), 0) / 20);
});

test('a pool-swim-like session: the first record (25 m) 30 s after the start; the distance counts from 0', async (t) => {
  const times = range(1, 21).map((n) => 30 * n);
  const bytes = buildActivityFit({
    sessions: [
      {
        sport: 'swimming',
        subSport: 'lapSwimming',
        start: START,
        seconds: times.length,
        elapsed: 600,
        recordTimes: (i) => times[i]!,
        record: (i) => ({ distance: 25 * (i + 1), speed: 25 / 30, heartRate: 130 + i }),
      },
    ],
  });
  const a = await ingestFit(bytes);
  t.is(a.summary.distance!.sum, 500, '25 m more than the last record − the first');
  t.is(a.distance, 500);
  t.deepEqual(
    Array.from(a.channels.heart_rate!.subarray(0, 31)),
    range(0, 31).map(() => 130),
    'the first length’s seconds take its record’s values',
  );
  t.true(isEmpty(a.channels.distance, 0, 30), 'but not the counter');
  t.is(a.timerSeconds, 600);
});

// The lead-in back-fill puts the first distance at second 0, so distanceSum's "could have been
// covered since the start" allowance becomes 100 m whenever the first record comes later.
test('distance from 0 when the first record (150 m) comes 80 s after the start', async (t) => {
  const times = range(0, 10).map((n) => 80 + 40 * n);
  const bytes = buildActivityFit({
    sessions: [
      {
        sport: 'swimming',
        subSport: 'lapSwimming',
        start: START,
        seconds: times.length,
        elapsed: times[times.length - 1]!,
        recordTimes: (i) => times[i]!,
        record: (i) => ({ distance: 150 + 50 * i, speed: 1.5 }),
      },
    ],
  });
  const a = await ingestFit(bytes);
  t.is(a.summary.distance!.sum, 600, '150 m in 80 s is 1.9 m/s: covered since the start');
});

test('duplicate timestamps and a record years after the session are dropped and counted', async (t) => {
  const years = 3 * 365 * 86_400;
  const times = [...range(0, 60), 10, 20, 30, years];
  const spec = {
    sessions: [
      {
        sport: 'cycling',
        start: START,
        seconds: times.length,
        elapsed: 59,
        recordTimes: (i: number) => times[i]!,
        record: (i: number) => ({ power: i < 60 ? 200 : 900 + i, heartRate: 140 }),
      },
    ],
  };
  const bytes = buildActivityFit(spec);
  const a = await ingestFit(bytes);
  t.deepEqual(a.droppedRecords, { duplicate_timestamp: 3, outside_session: 1 });
  t.is(a.length, 60, 'the record years later does not stretch the grid');
  t.deepEqual(
    [a.channels.power![10], a.channels.power![20], a.channels.power![30], a.channels.power![11]],
    [960, 961, 962, 200],
    'of a duplicated timestamp the last record in the file is kept',
  );
  for (const decoder of ['lean', 'library'] as const) {
    const [rec] = await parseFit(bytes, { decoder });
    t.deepEqual(rec!.dropped, { duplicate_timestamp: 3, outside_session: 1 }, decoder);
  }
  const clean = await ingestFit(ride(range(0, 60), () => ({ power: 200 })));
  t.deepEqual(clean.droppedRecords, {}, 'none: {}');
});

/** An altitude profile: 2 m noise (below the hysteresis), a 50 m climb (1 m every 2 s), 2 m noise again. */
const altitude = (s: number) => (s < 300 ? 100 + (s % 2) * 2 : s < 400 ? 100 + Math.floor((s - 300) / 2) : 150 + (s % 2) * 2);

test('the device summary carries the session message’s values; altitude gain from its total_ascent when present', async (t) => {
  const sessionFields = {
    totalTimerTime: 595,
    totalDistance: 4800,
    enhancedAvgSpeed: 8.1,
    enhancedMaxSpeed: 12.5,
    avgPower: 201,
    maxPower: 450,
    normalizedPower: 222,
    totalWork: 120_600,
    avgHeartRate: 141,
    maxHeartRate: 170,
    avgCadence: 85,
    maxCadence: 110,
    totalAscent: 321,
    totalDescent: 300,
  };
  const bytes = buildActivityFit({
    sessions: [
      {
        sport: 'cycling',
        start: START,
        seconds: 600,
        laps: 2,
        record: (i) => ({ power: 200, altitude: altitude(i), speed: 8, distance: 8 * i }),
        sessionFields,
        lapFields: (l) => ({ totalAscent: 10 + l, totalDescent: 4 + l }),
      },
    ],
  });
  const a = await ingestFit(bytes);
  t.deepEqual(a.deviceSummary, {
    total_elapsed_time: 600,
    total_timer_time: 595,
    total_distance: 4800,
    avg_speed: 8.1,
    max_speed: 12.5,
    avg_power: 201,
    max_power: 450,
    normalized_power: 222,
    total_work: 120_600,
    avg_heart_rate: 141,
    max_heart_rate: 170,
    avg_cadence: 85,
    max_cadence: 110,
    total_ascent: 321,
    total_descent: 300,
  });
  t.like(a.summary.altitude, { gain: 321, loss: 300, max: 152, min: 100 }, 'the session’s totals');
  t.deepEqual(
    a.laps.map((l) => [l.altitude!.gain, l.altitude!.loss]),
    [
      [10, 4],
      [11, 5],
    ],
    'each lap its own totals',
  );
});

test(`altitude gain without the device's totals: counted with the ${ALTITUDE_HYSTERESIS_M} m hysteresis (2 m noise is not climbing)`, async (t) => {
  const bytes = buildActivityFit({
    sessions: [
      {
        sport: 'cycling',
        start: START,
        seconds: 600,
        laps: 2,
        record: (i) => ({ power: 200, altitude: altitude(i), speed: 8, distance: 8 * i }),
      },
    ],
  });
  const a = await ingestFit(bytes);
  t.like(a.summary.altitude, { gain: 52, loss: 0 }, 'from 100 to the last noise peak, 152');
  t.like(a.laps[0]!.altitude, { gain: 0, loss: 0 }, 'the first lap: noise only');
  t.like(a.laps[1]!.altitude, { gain: 52, loss: 0 }, 'the second lap holds the climb');
  t.is(a.deviceSummary!.total_ascent, undefined);
  t.false('total_ascent' in a.deviceSummary!, 'only the fields the file has');
  const csv = await ingestCsv([
    'timestamp,altitude',
    ...range(0, 600).map((s) => `${new Date(T0 + s * 1000).toISOString()},${altitude(s)}`),
  ]);
  t.like(csv.summary.altitude, { gain: 52, loss: 0 }, 'a CSV likewise');
  t.is(csv.deviceSummary, null, 'a CSV has no device summary');
});

test('average cadence ignores zeros (coasting); max over every second', async (t) => {
  const a = await ingestFit(
    ride(range(0, 120), (i) => ({ cadence: Math.floor(i / 10) % 2 === 0 ? 0 : 80 + (i % 10), power: 100, speed: 8 }), { elapsed: 120 }),
  );
  t.is(a.summary.cadence!.mean, 84.5, 'the mean of 80…89 over the pedalling seconds (half the ride coasts at 0)');
  t.is(a.summary.cadence!.max, 89);
  t.is(a.laps[0]!.cadence!.mean, 84.5);
});
