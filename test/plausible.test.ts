/**
 * Implausible samples (engine/ingest/plausible.ts): the ranges' boundaries, the drop-and-count step on
 * a Recording, and what the ingest task makes of it around the 1 Hz resampling (a spike is dropped
 * before the grid could spread it across a gap or let it hide behind another sample of its second).
 */
import test from 'ava';
import { ingestFile } from '../engine/ingest/ingest.ts';
import type { IngestedActivity, IngestResult } from '../engine/ingest/ingested.ts';
import { dropImplausible, isImplausible, plausibleValue, PLAUSIBLE_RANGES } from '../engine/ingest/plausible.ts';
import type { Recording } from '../engine/ingest/recording.ts';
import { CHANNELS } from '../engine/channels.ts';
import { buildActivityFit } from './helpers/fit-builder.ts';

function activities(result: IngestResult): IngestedActivity[] {
  if (!result.ok) throw new Error(`refused: ${result.code}: ${result.message}`);
  return result.activities;
}

const csvTask = (text: string, sport = 'cycling') => ({
  format: 'csv' as const,
  bytes: new TextEncoder().encode(text),
  sport,
});

test('every channel has a range; the documented ceilings', (t) => {
  t.deepEqual(Object.keys(PLAUSIBLE_RANGES).sort(), [...CHANNELS].sort());
  for (const c of CHANNELS) t.true(PLAUSIBLE_RANGES[c].min < PLAUSIBLE_RANGES[c].max, c);
  t.like(PLAUSIBLE_RANGES, {
    power: { min: 0, max: 3000, unit: 'W' },
    heart_rate: { min: 0, max: 250, unit: 'bpm' },
    speed: { min: 0, max: 100 },
    cadence: { min: 0, max: 300 },
    altitude: { min: -500, max: 9000 },
    distance: { min: 0, max: Infinity },
    core_temperature: { min: 30, max: 45 },
    smo2: { min: 0, max: 100 },
  });
});

test('boundaries: exactly at a limit is kept, just beyond it is dropped; NaN stays NaN and is not counted as implausible', (t) => {
  for (const c of CHANNELS) {
    const { min, max } = PLAUSIBLE_RANGES[c];
    t.false(isImplausible(c, min), `${c}: at the floor`);
    t.is(plausibleValue(c, min), min, `${c}: the floor is kept`);
    t.true(isImplausible(c, min - 1e-9), `${c}: just below the floor`);
    t.true(Number.isNaN(plausibleValue(c, min - 1e-9)), `${c}: below the floor → NaN`);
    t.false(isImplausible(c, Number.NaN), `${c}: NaN is missing, not implausible`);
    t.true(Number.isNaN(plausibleValue(c, Number.NaN)), `${c}: NaN stays NaN`);
    if (Number.isFinite(max)) {
      t.false(isImplausible(c, max), `${c}: at the ceiling`);
      t.is(plausibleValue(c, max), max, `${c}: the ceiling is kept`);
      t.true(isImplausible(c, max + 1e-9), `${c}: just above the ceiling`);
      t.true(Number.isNaN(plausibleValue(c, max + 1e-9)), `${c}: above the ceiling → NaN`);
    }
  }
  t.true(isImplausible('power', 3000.5));
  t.true(isImplausible('power', 21733));
  t.false(isImplausible('heart_rate', 250));
  t.true(isImplausible('heart_rate', 251));
  t.true(isImplausible('power', -1));
  t.false(isImplausible('altitude', -20), 'below sea level is plausible');
  t.true(isImplausible('altitude', -501));
  t.true(isImplausible('core_temperature', 20), 'a core sensor not yet worn');
  t.false(isImplausible('distance', 1e9), 'distance has no ceiling');
});

test('dropImplausible: NaN in place of each implausible sample, counted per channel; the input is not changed', (t) => {
  const power = Float64Array.from([200, 21733, 3000, 3001, Number.NaN, -5]);
  const heart = Float64Array.from([120, 121, 122, 123, 124, 125]);
  const rec: Recording = {
    sport: 'cycling',
    start: new Date(0),
    end: new Date(6000),
    utcOffsetSeconds: 0,
    devices: [],
    laps: [],
    timestamps: Float64Array.from([0, 1000, 2000, 3000, 4000, 5000]),
    channels: { power, heart_rate: heart },
  };
  const { recording, implausible } = dropImplausible(rec);
  t.deepEqual(implausible, { power: 3 }, 'only channels with at least one');
  t.deepEqual(Array.from(recording.channels.power!), [200, NaN, 3000, NaN, NaN, NaN]);
  t.is(recording.channels.heart_rate, heart, 'a clean channel keeps its array');
  t.deepEqual(Array.from(power), [200, 21733, 3000, 3001, NaN, -5], 'the parsed recording is untouched');
  t.is(recording.timestamps, rec.timestamps);
  t.deepEqual(dropImplausible({ ...rec, channels: { heart_rate: heart } }).implausible, {}, 'none: an empty object');
});

test('before the resampling: an implausible sample becomes NaN and is never spread across the gap after it', async (t) => {
  // Smart recording: a record only when something changes. Kept, the spike at 10 s would be
  // interpolated across the 4 s gap to the next record (as the heart rate of the same record is).
  const rows = ['timestamp,power,heart_rate'];
  const at = (s: number) => new Date(Date.parse('2024-05-01T08:00:00Z') + s * 1000).toISOString();
  for (let s = 0; s < 10; s++) rows.push(`${at(s)},250,130`);
  rows.push(`${at(10)},21733,131`);
  for (let s = 14; s < 20; s++) rows.push(`${at(s)},260,132`);
  const [a] = activities(await ingestFile(csvTask(rows.join('\n'))));
  t.deepEqual(a!.implausibleSamples, { power: 1 }, 'one sample of the file, however many seconds it would have spread over');
  t.deepEqual(
    Array.from(a!.channels.power!.subarray(8, 16)),
    [250, 250, NaN, NaN, NaN, NaN, 260, 260],
    'its second and the gap after it are missing',
  );
  t.deepEqual(
    Array.from(a!.channels.heart_rate!.subarray(8, 16)),
    [130, 130, 131, 131.25, 131.5, 131.75, 132, 132],
    'the other channels of the record are kept and fill the gap',
  );
  t.deepEqual(a!.summary.power, { max: 260, mean: (10 * 250 + 6 * 260) / 16, work: (10 * 250 + 6 * 260) / 1000 });
  const power = a!.curves.find((c) => c.metric === 'power')!;
  t.is(power.levelDuration!.length, 260, 'the value-indexed curve tops at the real peak');
  t.is(power.levelDuration![259], 6, 'held for the 6 s at 260 W');
  t.is(power.levelStart![259], 14);
});

test('before the resampling: a spike shares its second with a plausible sample, which the second keeps', async (t) => {
  const text = [
    'timestamp,power',
    '2024-05-01T08:00:00.000Z,200',
    '2024-05-01T08:00:01.000Z,300',
    '2024-05-01T08:00:01.500Z,4000', // the last sample of its second: the grid would have kept it
    '2024-05-01T08:00:02.000Z,210',
  ].join('\n');
  const [a] = activities(await ingestFile(csvTask(text)));
  t.deepEqual(Array.from(a!.channels.power!), [200, 300, 210]);
  t.deepEqual(a!.implausibleSamples, { power: 1 });
  t.deepEqual(a!.summary.power, { max: 300, mean: 710 / 3, work: 0.71 });
});

test('a channel whose every sample is implausible is not a metric, but its count is reported; a clean file reports {}', async (t) => {
  const text = [
    'timestamp,power,core_temperature',
    '2024-05-01T08:00:00Z,200,12',
    '2024-05-01T08:00:01Z,210,12.5',
    '2024-05-01T08:00:02Z,3000,13',
  ].join('\n');
  const [a] = activities(await ingestFile(csvTask(text)));
  t.deepEqual(a!.metrics, ['power']);
  t.is(a!.summary.core_temperature, undefined);
  t.deepEqual(a!.implausibleSamples, { core_temperature: 3 });
  t.is(a!.summary.power!.max, 3000, 'exactly at the ceiling is kept');

  const [clean] = activities(
    await ingestFile({
      format: 'fit',
      bytes: buildActivityFit({ sessions: [{ sport: 'cycling', start: new Date('2024-05-01T08:00:00Z'), seconds: 60 }] }),
      sport: null,
    }),
  );
  t.deepEqual(clean!.implausibleSamples, {});
});

test('FIT: spikes in records are dropped and counted; laps and curves are computed without them', async (t) => {
  const spikes = new Set([100, 101, 400, 500]);
  const bytes = buildActivityFit({
    sessions: [
      {
        sport: 'cycling',
        start: new Date('2024-05-01T08:00:00Z'),
        seconds: 600,
        laps: 2,
        record: (i) => ({
          power: spikes.has(i) ? 21733 : i >= 300 && i < 310 ? 1150 : 200 + (i % 50),
          heartRate: i === 200 ? 251 : 120 + (i % 30),
          cadence: 90,
        }),
      },
    ],
  });
  const [a] = activities(await ingestFile({ format: 'fit', bytes, sport: null }));
  t.deepEqual(a!.implausibleSamples, { power: 4, heart_rate: 1 });
  for (const s of spikes) t.true(Number.isNaN(a!.channels.power![s]!), `second ${s}`);
  t.true(Number.isNaN(a!.channels.heart_rate![200]!));
  t.is(a!.summary.power!.max, 1150);
  t.is(a!.summary.heart_rate!.max, 149);
  t.deepEqual(
    a!.laps.map((l) => l.power!.max),
    [249, 1150],
  );
  const power = a!.curves.find((c) => c.metric === 'power')!;
  t.is(power.levelDuration![1149], 10, 'the 10 s at 1150 W…');
  t.is(power.levelStart![1149], 300, '…from second 300');
  t.is(power.levelDuration!.length, 1150, 'the value-indexed view ends at the real peak');
  t.is(power.awd.length, 1150, 'so does the AWD');
  t.is(a!.curves.find((c) => c.metric === 'heart_rate')!.awd.length, 149);
});
