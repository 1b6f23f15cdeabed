import test from 'ava';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ingestFile } from '../engine/ingest/ingest.ts';
import { afterGridEntry } from '../engine/curves/after-grid.ts';
import type { IngestedActivity, IngestResult, IngestInput } from '../engine/ingest/ingested.ts';
import { createEnginePool } from '../engine/pool.ts';
import { parseFit } from '../engine/ingest/fit.ts';
import { plausibleValue } from '../engine/ingest/plausible.ts';
import type { Recording } from '../engine/ingest/recording.ts';
import { CHANNELS, type Channel } from '../engine/channels.ts';
import { fixturesDir } from './helpers/fixtures.ts';
import { reference, type Reference } from './helpers/fit-reference.ts';
import { buildActivityFit, buildSettingsFit } from './helpers/fit-builder.ts';
import { referenceResample } from './helpers/resample-reference.ts';

const FIXTURES = join(fixturesDir(), 'fit');
const FILES = readdirSync(FIXTURES)
  .filter((f) => f.toLowerCase().endsWith('.fit'))
  .sort();
const fixture = (name: string) => new Uint8Array(readFileSync(join(FIXTURES, name)));
const fitTask = (bytes: Uint8Array, sport: string | null = null): IngestInput => ({ format: 'fit', bytes, sport });

function activities(result: IngestResult): IngestedActivity[] {
  if (!result.ok) throw new Error(`refused: ${result.code}: ${result.message}`);
  return result.activities;
}

/**
 * The 1 Hz grid the rules (engine/ingest/resample.ts) make of a session as fitsdk decodes it: its
 * records (positions in degrees, implausible values dropped as ingestion does first) and the
 * pauses parseFit read from the file's timer events (tested in ingest-rules.test.ts), resampled
 * second by second by test/helpers/resample-reference.ts.
 */
function referenceGrid(exp: Reference, pauses: Recording['pauses']) {
  const channels = Object.fromEntries(
    Object.entries(exp.channels).map(([c, values]) => [
      c,
      Float64Array.from(values, (v) => plausibleValue(c as Channel, c === 'latitude' || c === 'longitude' ? (v * 180) / 2 ** 31 : v)),
    ]),
  ) as Recording['channels'];
  const rec: Recording = {
    sport: exp.sport,
    start: new Date(exp.start),
    end: new Date(exp.end),
    utcOffsetSeconds: 0,
    devices: [],
    laps: [],
    timestamps: Float64Array.from(exp.times),
    channels,
    ...(pauses ? { pauses } : {}),
  };
  return referenceResample(rec);
}

const close = (a: number, b: number, rel: number) => Math.abs(a - b) <= rel * Math.max(1, Math.abs(b));

// ─── Every fixture ──────────────────────────────────────────────────────────────────────────────

for (const name of FILES) {
  test(`fixture ${name}: ingestFile agrees with fitsdk's decoding`, async (t) => {
    const bytes = fixture(name);
    const expected = reference(bytes);
    const result = await ingestFile(fitTask(bytes));
    if (expected.length === 0) {
      t.like(result, { ok: false, code: 'no_activity' }, 'no session with records');
      return;
    }
    const got = activities(result);
    const parsed = await parseFit(bytes);
    t.is(got.length, expected.length, 'one activity per session with records');
    for (const [i, a] of got.entries()) {
      const exp = expected[i]!;
      const at = `session ${i}`;
      t.is(a.sport, exp.sport, at);
      t.is(a.start, Math.floor(exp.start / 1000) * 1000, `${at}: start`);
      t.true(Math.abs(a.end - exp.end) < 1, `${at}: end ${a.end} vs ${exp.end}`);
      const lastBin = (exp.times[exp.times.length - 1]! - a.start) / 1000;
      t.is(a.length, Math.max(Math.ceil((a.end - a.start) / 1000), lastBin + 1), `${at}: the grid covers the activity and every record`);

      if (exp.lapStarts.length > 0)
        t.deepEqual(
          a.laps.map((l) => l.start),
          exp.lapStarts,
          `${at}: lap starts`,
        );
      else
        t.deepEqual(
          a.laps.map((l) => [l.start, l.end]),
          [[a.start, a.end]],
          `${at}: no laps in the file: one lap spanning the activity`,
        );

      // A pool swim's speed, cadence and distance come from its length messages (engine/ingest/resample.ts), not its records.
      const lengths = parsed[i]!.lengths;
      const fromLengths = new Set<Channel>(
        lengths ? ['speed', 'distance', ...(lengths.some((l) => l.cadence !== undefined) ? (['cadence'] as const) : [])] : [],
      );
      t.deepEqual(
        [...fromLengths].sort(),
        [...exp.lengthChannels].sort(),
        `${at}: the channels of its length messages, as fitsdk reads them`,
      );
      t.deepEqual(
        a.metrics,
        CHANNELS.filter((c) => exp.channels[c] || fromLengths.has(c)),
        `${at}: metrics = the channels present, in CHANNELS order`,
      );
      t.deepEqual(Object.keys(a.channels).sort(), [...a.metrics].sort(), at);
      for (const c of a.metrics) t.is(a.channels[c]!.length, a.length, `${at} ${c}: one value per grid second`);
      t.is(a.distance, a.summary.distance?.sum ?? null, at);
      t.deepEqual(
        a.afterGrid && Array.from(a.afterGrid),
        a.channels.power ? Array.from(afterGridEntry(a.channels.power)) : null,
        `${at}: power's fatigue-grid entry, made in the pool`,
      );

      // Second by second, the grid the rules make of fitsdk's records.
      const ref = referenceGrid(exp, parsed[i]!.pauses);
      t.is(ref.length, a.length, at);
      for (const c of a.metrics) {
        if (fromLengths.has(c)) continue;
        const want = ref.channels[c]!;
        const grid = a.channels[c]!;
        const wrong = want.findIndex(
          (v, s) => Number.isNaN(v) !== Number.isNaN(grid[s]!) || (!Number.isNaN(v) && !close(grid[s]!, v, 1e-9)),
        );
        t.is(wrong, -1, `${at} ${c}: second ${wrong}: ${grid[wrong]} vs the rules' ${want[wrong]}`);
      }

      const values = (c: Channel) => (ref.channels[c] ?? []).filter((v) => !Number.isNaN(v));
      const mean = (x: number[]) => x.reduce((s, v) => s + v, 0) / x.length;
      if (lengths) {
        for (const l of lengths) {
          const s = Math.floor((l.start - a.start) / 1000);
          t.is(a.channels.speed![s], l.speed, `${at}: the speed of the length from second ${s}`);
        }
        t.is(
          a.summary.distance!.sum,
          lengths.reduce((sum, l) => sum + l.distance, 0),
          `${at}: the lengths' distance`,
        );
      }
      for (const channel of ['heart_rate', 'power', 'speed', 'cadence', 'altitude'] as const) {
        if (fromLengths.has(channel)) continue;
        const stats = a.summary[channel];
        if (values(channel).length === 0) {
          t.is(stats, undefined, `${at} ${channel}: absent`);
          continue;
        }
        // Filled seconds lie between their records' values, so the grid's max is the max of the
        // records the timer ran for (a record in a pause is emptied).
        const recorded = exp.times
          .flatMap((time, k) =>
            ref.running[Math.floor((time - ref.start) / 1000)] ? [plausibleValue(channel, exp.channels[channel]![k]!)] : [],
          )
          .filter(Number.isFinite);
        t.true(
          close(stats!.max!, Math.max(...recorded), 1e-9),
          `${at} ${channel}: max ${stats!.max} vs the records' ${Math.max(...recorded)}`,
        );
        const expected =
          channel === 'cadence'
            ? values(channel).some((v) => v > 0)
              ? mean(values(channel).filter((v) => v > 0))
              : 0
            : channel === 'speed'
              ? undefined
              : mean(values(channel));
        if (expected !== undefined) t.true(close(stats!.mean!, expected, 1e-9), `${at} ${channel}: mean ${stats!.mean} vs ${expected}`);
      }
      if (a.summary.speed && a.movingSeconds > 0)
        t.true(
          close(a.summary.speed.mean!, a.summary.distance!.sum! / a.movingSeconds, 1e-12),
          `${at}: speed mean = distance / moving time`,
        );

      const elapsed = (a.end - exp.start) / 1000;
      const paused =
        (parsed[i]!.pauses ?? ref.pauses).reduce((s, p) => s + Math.max(0, Math.min(p.end, a.end) - Math.max(p.start, exp.start)), 0) /
        1000;
      t.true(
        Math.abs(a.timerSeconds - (elapsed - paused)) < 1e-9,
        `${at}: timer ${a.timerSeconds} = elapsed ${elapsed} − paused ${paused}`,
      );
      t.true(a.movingSeconds <= a.timerSeconds, `${at}: moving ${a.movingSeconds} ≤ timer ${a.timerSeconds}`);
      t.deepEqual(a.deviceSummary, parsed[i]!.deviceSummary ?? null, `${at}: the session's own values`);
      if (a.deviceSummary?.total_ascent !== undefined && a.summary.altitude)
        t.is(a.summary.altitude.gain, a.deviceSummary.total_ascent, `${at}: the device's ascent`);
    }
  });
}

// ─── Files that must be refused ─────────────────────────────────────────────────────────────────

test('refusals are results with a code and a message, not exceptions', async (t) => {
  const real = fixture('4078723797.fit');
  const flipped = real.slice();
  flipped[real.length >> 1]! ^= 0x01;
  const cases: [string, Uint8Array, string][] = [
    ['a session without records', fixture('2012_02_05_09_03_59.fit'), 'no_activity'],
    ['a settings file', buildSettingsFit(), 'no_activity'],
    ['truncated to half', real.slice(0, real.length >> 1), 'invalid_fit'],
    ['missing its last byte', real.slice(0, real.length - 1), 'invalid_fit'],
    ['one bit flipped', flipped, 'invalid_fit'],
    ['empty', new Uint8Array(0), 'empty_file'],
  ];
  for (const [what, bytes, code] of cases) {
    const result = await ingestFile(fitTask(bytes));
    t.like(result, { ok: false, code }, what);
    t.true(!result.ok && result.message.length > 10, `${what}: a message`);
  }
  t.like(
    await ingestFile({
      format: 'csv',
      bytes: new TextEncoder().encode('timestamp,power\n2024-01-01T00:00:00,1\n'),
      sport: 'cycling',
    }),
    { ok: false, code: 'csv_naive_timestamp' },
  );
});

test('other errors are not swallowed', async (t) => {
  await t.throwsAsync(ingestFile({ format: 'fit', bytes: undefined as unknown as Uint8Array, sport: null }), {
    instanceOf: TypeError,
  });
});

// ─── Synthetic files: multisport, sport field ───────────────────────────────────────────────────

test('a multisport file: one activity per session, with its own grid, summary and laps', async (t) => {
  const runStart = new Date('2024-06-01T06:00:00Z');
  const rideStart = new Date('2024-06-01T06:10:30Z');
  const bytes = buildActivityFit({
    utcOffsetSeconds: 7200,
    sessions: [
      {
        sport: 'running',
        subSport: 'trail',
        start: runStart,
        seconds: 600,
        laps: 2,
        record: (i) => ({ heartRate: 140 + (i % 5), speed: 3.5, distance: i * 3.5 }),
      },
      { sport: 'cycling', subSport: 'road', start: rideStart, seconds: 900, laps: 3 }, // power 200 + i % 50, distance 8 m/s
    ],
  });
  const [run, ride, ...rest] = activities(await ingestFile(fitTask(bytes)));
  t.is(rest.length, 0);
  t.like(run, {
    sport: 'running.trail',
    start: runStart.getTime(),
    end: runStart.getTime() + 600_000,
    length: 600,
    utcOffsetSeconds: 7200,
    metrics: ['heart_rate', 'speed', 'distance'],
    distance: 599 * 3.5,
  });
  t.like(ride, {
    sport: 'cycling.road',
    start: rideStart.getTime(),
    end: rideStart.getTime() + 900_000,
    length: 900,
    metrics: ['power', 'heart_rate', 'speed', 'cadence', 'distance'],
    distance: 899 * 8,
  });
  t.deepEqual(run!.summary.heart_rate, { end: 144, max: 144, mean: 142, min: 140, start: 140 });
  t.like(run, {
    timerSeconds: 600,
    movingSeconds: 600,
    droppedRecords: {},
    deviceSummary: { total_elapsed_time: 600, total_timer_time: 600 },
  });
  t.deepEqual(
    run!.summary.speed,
    { max: 3.5, mean: (599 * 3.5) / 600 },
    'distance / moving time (the records give 599 × 3.5 m over 600 s)',
  );
  t.like(ride!.summary.power, { max: 249, mean: 224.5, work: (224.5 * 900) / 1000 });
  t.true(
    ride!.summary.power!.normalized! > 224.5 && ride!.summary.power!.normalized! < 226,
    `NP ${ride!.summary.power!.normalized} of a 50 s sawtooth around 224.5 W`,
  );
  t.deepEqual(run!.devices, ['Garmin Edge 830']);

  t.deepEqual(
    ride!.laps.map((l) => [l.start - rideStart.getTime(), l.end - rideStart.getTime()]),
    [
      [0, 300_000],
      [300_000, 600_000],
      [600_000, 900_000],
    ],
  );
  t.deepEqual(
    ride!.laps.map((l) => [l.power?.max, l.power?.mean, l.timer_seconds, l.moving_seconds]),
    [0, 1, 2].map(() => [249, 224.5, 300, 300]),
  );
  t.deepEqual(
    ride!.laps.map((l) => l.distance?.sum),
    [299 * 8, 300 * 8, 300 * 8],
    'lap distances add up to the total',
  );
  t.deepEqual(
    run!.laps.map((l) => l.heart_rate?.mean),
    [142, 142],
  );
});

test('the sport field replaces only `generic` in a FIT file; an invalid one is refused', async (t) => {
  const start = new Date('2024-03-01T10:00:00Z');
  const bytes = buildActivityFit({
    sessions: [
      { sport: 'generic', start, seconds: 30 },
      { sport: 'cycling', start: new Date(start.getTime() + 60_000), seconds: 30 },
    ],
  });
  t.deepEqual(
    activities(await ingestFile(fitTask(bytes))).map((a) => a.sport),
    ['generic', 'cycling'],
  );
  t.deepEqual(
    activities(await ingestFile(fitTask(bytes, 'Cycling.Trainer'))).map((a) => a.sport),
    ['cycling+stationary', 'cycling'],
    'normalised',
  );
  t.deepEqual(
    activities(await ingestFile(fitTask(bytes, ''))).map((a) => a.sport),
    ['generic', 'cycling'],
    'an empty field is none',
  );
  t.like(await ingestFile(fitTask(bytes, 'not a sport')), { ok: false, code: 'invalid_sport' });
  t.deepEqual(
    activities(await ingestFile(fitTask(fixture('moxy.fit'), 'running'))).map((a) => a.sport),
    ['running'],
    'a real file without a sport',
  );
});

test('a CSV file: one activity on the 1 Hz grid', async (t) => {
  const text = [
    'timestamp,power,heart_rate,lap',
    '2026-05-18T17:32:00+02:00,200,120,1',
    '2026-05-18T17:32:01+02:00,220,,1',
    '2026-05-18T17:32:03+02:00,240,130,2',
    '2026-05-18T17:32:04+02:00,260,131,2',
  ].join('\n');
  const [a, ...rest] = activities(await ingestFile({ format: 'csv', bytes: new TextEncoder().encode(text), sport: 'cycling.trainer' }));
  t.is(rest.length, 0);
  t.like(a, {
    sport: 'cycling+stationary',
    start: Date.parse('2026-05-18T15:32:00Z'),
    end: Date.parse('2026-05-18T15:32:05Z'),
    utcOffsetSeconds: 7200,
    length: 5,
    devices: [],
    metrics: ['power', 'heart_rate'],
    distance: null,
  });
  t.deepEqual(Array.from(a!.channels.power!), [200, 220, 230, 240, 260], 'the 2 s gap is filled linearly');
  t.deepEqual(Array.from(a!.channels.heart_rate!), [120, NaN, NaN, 130, 131], 'a missing value is not spread');
  t.deepEqual(a!.summary.power, { max: 260, mean: 230, work: 1.15 });
  t.like(a, { timerSeconds: 5, movingSeconds: 5, deviceSummary: null, droppedRecords: {} });
  t.deepEqual(
    a!.laps.map((l) => [l.start - a!.start, l.end - a!.start, l.power?.mean]),
    [
      [0, 3000, 650 / 3],
      [3000, 5000, 250],
    ],
  );
});

// ─── Through the thread pool ────────────────────────────────────────────────────────────────────

test('the ingest task runs in the piscina pool: bytes transferred in, typed arrays back', async (t) => {
  const pool = createEnginePool({ threads: 1 });
  try {
    const direct = activities(await ingestFile(fitTask(fixture('4078723797.fit'))));
    const bytes = fixture('4078723797.fit');
    const viaPool = await pool.runIngest(fitTask(bytes));
    t.is(bytes.byteLength, 0, 'the input buffer was transferred to the thread, not copied');
    const got = activities(viaPool);
    t.is(got.length, 1);
    const [a] = got;
    t.true(a!.channels.power instanceof Float64Array);
    t.is(a!.channels.power!.length, a!.length);
    t.deepEqual(got, direct, 'the same activities, NaN and all');

    const view = fixture('6471559601_ACTIVITY.fit');
    const padded = new Uint8Array(view.length + 8);
    padded.set(view, 4);
    const multisport = activities(await pool.runIngest({ format: 'fit', bytes: padded.subarray(4, 4 + view.length), sport: null }));
    t.is(multisport.length, 3);
    t.is(padded.byteLength, view.length + 8, 'a view onto a larger buffer is copied, the buffer left intact');

    t.like(await pool.runIngest({ format: 'fit', bytes: new Uint8Array(0), sport: null }), { ok: false, code: 'empty_file' });
    t.like(
      await pool.runIngest({ format: 'csv', bytes: new TextEncoder().encode('timestamp,power\n2024-01-01T00:00:00Z,1\n'), sport: null }),
      { ok: false, code: 'csv_missing_sport' },
    );
    const meanMax = await pool.meanMaxPlain({
      samples: Float64Array.from([1, 3, 2]),
      durations: Int32Array.from([1, 2]),
    });
    t.deepEqual([...meanMax.best], [3, 2.5], 'the mean-max task still runs');
  } finally {
    await pool.close();
  }
});
