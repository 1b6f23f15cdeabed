import test from 'ava';
import fc from 'fast-check';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Decoder, Stream, Utils, type FitMessages } from '@garmin/fitsdk';
import { parseFit } from '../engine/ingest/fit.ts';
import { IngestError } from '../engine/ingest/recording.ts';
import { CHANNELS, type Channel } from '../engine/channels.ts';
import { sportFromFit } from '../lib/sports.ts';
import { fixturesDir } from './helpers/fixtures.ts';
import { utcOffsetOf } from './helpers/fit-reference.ts';
import { buildActivityFit, buildMonitoringFit, buildSettingsFit, encodeFit, MesgNum, semicircles } from './helpers/fit-builder.ts';

const FIXTURES = join(fixturesDir(), 'fit');
const fixture = (name: string) => readFileSync(join(FIXTURES, name));

// ─── The reference: what @garmin/fitsdk decodes from the same bytes ─────────────────────────────

type Fields = Record<string, unknown>;

interface Expected {
  sport: string;
  start: number;
  end: number;
  utcOffsetSeconds: number;
  lapStarts: number[];
  timestamps: number[];
  channels: Partial<Record<Channel, number[]>>;
}

const SEMICIRCLE = 180 / 2 ** 31;
const snake = (v: unknown) =>
  typeof v === 'string' ? v.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase() : typeof v === 'number' ? v : undefined;
const n = (m: Fields, key: string) => (typeof m[key] === 'number' && Number.isFinite(m[key]) ? (m[key] as number) : undefined);
const ms = (m: Fields, key: string) => (m[key] instanceof Date ? (m[key] as Date).getTime() : undefined);

function decodeWithFitsdk(bytes: Uint8Array): FitMessages {
  const decoder = new Decoder(Stream.fromByteArray(bytes));
  if (!decoder.checkIntegrity()) throw new Error('fitsdk: integrity check failed');
  const { messages, errors } = decoder.read();
  if (errors.length > 0) throw new Error(`fitsdk: ${errors.map(String).join('; ')}`);
  return messages;
}

/**
 * The recordings the file should give, from fitsdk's decoding and the rules of engine/ingest/fit.ts:
 * a session's records are those from its start_time to start + total_elapsed_time (whole second)
 * or its timestamp, whichever is later, and before the next session's start; the last record per
 * timestamp wins; end = start + elapsed, or the last record when later or elapsed is absent.
 */
function expectedFromFitsdk(bytes: Uint8Array): Expected[] {
  const m = decodeWithFitsdk(bytes);
  const byTime = new Map<number, Fields>();
  for (const r of (m.recordMesgs ?? []) as Fields[]) {
    const t = ms(r, 'timestamp');
    if (t !== undefined) byTime.set(t, r);
  }
  const records = [...byTime.entries()].sort((a, b) => a[0] - b[0]);

  const descriptions = (m.fieldDescriptionMesgs ?? []) as Fields[];
  const developerKey = (pattern: RegExp) =>
    descriptions
      .filter((d) =>
        pattern.test(
          String(d['fieldName'])
            .toLowerCase()
            .replace(/[^a-z0-9]/g, ''),
        ),
      )
      .map((d) => String(d['key']));
  const coreKeys = developerKey(/^(ciq)?(body)?core(body)?temp(erature)?$/);
  const smo2Keys = developerKey(/^(muscle)?(smo2|saturatedhemoglobin(percent)?|muscleoxygen(saturation)?|oxygensaturation)$/);
  const developer = (r: Fields, keys: string[]) => {
    const fields = (r['developerFields'] ?? {}) as Record<string, unknown>;
    for (const k of keys) if (typeof fields[k] === 'number') return fields[k] as number;
    return undefined;
  };
  const value: Record<Channel, (r: Fields) => number | undefined> = {
    power: (r) => n(r, 'power'),
    heart_rate: (r) => n(r, 'heartRate'),
    speed: (r) => n(r, 'enhancedSpeed') ?? n(r, 'speed'),
    cadence: (r) => (n(r, 'cadence') === undefined ? undefined : n(r, 'cadence')! + (n(r, 'fractionalCadence') ?? 0)),
    altitude: (r) => n(r, 'enhancedAltitude') ?? n(r, 'altitude'),
    distance: (r) => n(r, 'distance'),
    latitude: (r) => (n(r, 'positionLat') === undefined ? undefined : n(r, 'positionLat')! * SEMICIRCLE),
    longitude: (r) => (n(r, 'positionLong') === undefined ? undefined : n(r, 'positionLong')! * SEMICIRCLE),
    temperature: (r) => n(r, 'temperature'),
    core_temperature: (r) => n(r, 'coreTemperature') ?? developer(r, coreKeys),
    smo2: (r) => n(r, 'saturatedHemoglobinPercent') ?? developer(r, smo2Keys),
    respiration_rate: (r) => n(r, 'enhancedRespirationRate') ?? n(r, 'respirationRate'),
  };

  const utcOffsetSeconds = utcOffsetOf(m);

  const sportMesgs = (m.sportMesgs ?? []) as Fields[];
  const sessions = ((m.sessionMesgs ?? []) as Fields[])
    .filter((s) => ms(s, 'startTime') !== undefined)
    .sort((a, b) => ms(a, 'startTime')! - ms(b, 'startTime')!);
  const laps = ((m.lapMesgs ?? []) as Fields[])
    .map((l) => ms(l, 'startTime'))
    .filter((t): t is number => t !== undefined)
    .sort((a, b) => a - b);
  const out: Expected[] = [];
  sessions.forEach((s, i) => {
    const start = ms(s, 'startTime')!;
    const elapsed = n(s, 'totalElapsedTime');
    const stamp = ms(s, 'timestamp');
    const next = sessions[i + 1] ? ms(sessions[i + 1]!, 'startTime')! : Infinity;
    const ends = [elapsed === undefined ? undefined : Math.ceil((start + elapsed * 1000) / 1000) * 1000, stamp].filter(
      (t): t is number => t !== undefined && t >= start,
    );
    const last = ends.length ? Math.max(...ends) : Infinity;
    const inSpan = (t: number) => t >= start && t <= last && t < next;
    const mine = records.filter(([t]) => inSpan(t));
    if (mine.length === 0) return;
    const sportSource = s['sport'] !== undefined || sportMesgs.length !== 1 ? s : sportMesgs[0]!;
    const channels: Expected['channels'] = {};
    for (const channel of CHANNELS) {
      const values = mine.map(([, r]) => value[channel](r) ?? NaN);
      if (values.some(Number.isFinite)) channels[channel] = values;
    }
    const lastSample = mine[mine.length - 1]![0];
    out.push({
      sport: sportFromFit(snake(sportSource['sport']), snake(sportSource['subSport'])),
      start,
      end: elapsed === undefined ? lastSample : Math.max(start + elapsed * 1000, lastSample),
      utcOffsetSeconds,
      lapStarts: laps.filter(inSpan),
      timestamps: mine.map(([t]) => t),
      channels,
    });
  });
  return out;
}

const close = (a: number, b: number) => (Number.isNaN(a) && Number.isNaN(b)) || Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(b));

// ─── Every fixture, against fitsdk ──────────────────────────────────────────────────────────────

/** What each real file is: pinned so that a change in either decoder shows. `no_activity`: no session with records. */
const FIXTURE_FACTS: Record<
  string,
  | 'no_activity'
  | { sports: string[]; devices: string[]; utcOffsetSeconds: number; samples: number[]; laps: number[]; channels: Channel[][] }
> = {
  // A session (38 s) and a lap but not one record message.
  '2012_02_05_09_03_59.fit': 'no_activity',
  // local_timestamp is 27 days off its timestamp (device clock): the offset is implausible, so 0.
  '2016-05-23_18-14-30_4_25.fit': {
    sports: ['swimming.pool'],
    devices: ['Garmin Swim'],
    utcOffsetSeconds: 0,
    samples: [80],
    laps: [33],
    channels: [['speed', 'distance']],
  },
  '2020-06-01-16-52-40.fit': {
    sports: ['cycling'],
    devices: ['Garmin Edge 1000', 'Wahoo', 'Sensitivus Gauge'],
    utcOffsetSeconds: 7200,
    samples: [96],
    laps: [5],
    channels: [['power', 'heart_rate', 'speed', 'cadence', 'altitude', 'distance', 'latitude', 'longitude', 'temperature']],
  },
  '4078723797.fit': {
    sports: ['cycling'],
    devices: ['Garmin Edge 1000', 'Wahoo', 'Sensitivus Gauge'],
    utcOffsetSeconds: 7200,
    samples: [8357],
    laps: [1],
    channels: [['power', 'heart_rate', 'speed', 'cadence', 'altitude', 'distance', 'latitude', 'longitude', 'temperature']],
  },
  '4801048867.fit': {
    sports: ['cycling'],
    devices: ['Garmin Forerunner 935'],
    utcOffsetSeconds: 7200,
    samples: [5159],
    laps: [8],
    channels: [['heart_rate', 'speed', 'altitude', 'distance', 'latitude', 'longitude', 'temperature']],
  },
  '6449921903_ACTIVITY.fit': {
    sports: ['cycling+stationary'],
    devices: ['Garmin Forerunner 935', 'Wattbike'],
    utcOffsetSeconds: 3600,
    samples: [199],
    laps: [2],
    channels: [['power', 'heart_rate', 'cadence', 'distance', 'temperature']],
  },
  // A real multisport file: running, transition, rowing; the record at a session boundary goes to the later session.
  '6471559601_ACTIVITY.fit': {
    sports: ['running', 'transition', 'rowing'],
    devices: ['Garmin Forerunner 935'],
    utcOffsetSeconds: 3600,
    samples: [24, 12, 24],
    laps: [1, 1, 1],
    channels: [
      ['heart_rate', 'speed', 'cadence', 'altitude', 'distance', 'temperature'],
      ['heart_rate', 'speed', 'cadence', 'altitude', 'distance', 'temperature'],
      ['heart_rate', 'cadence', 'distance', 'temperature'],
    ],
  },
  // No total_elapsed_time in the session (end = last record), no laps, no local_timestamp.
  'Garmin830_with_Stages.fit': {
    sports: ['cycling'],
    devices: ['Garmin Edge 830', 'Garmin Cadence Sensor', 'Garmin HRM3-SS', 'Stages'],
    utcOffsetSeconds: 0,
    samples: [1798],
    laps: [0],
    channels: [['power', 'heart_rate', 'cadence', 'respiration_rate']],
  },
  // Stryd developer fields (Form Power, Leg Spring Stiffness, Speed, Distance) are not channels.
  'HRV-Data.fit': {
    sports: ['running'],
    devices: ['Stryd'],
    utcOffsetSeconds: 0,
    samples: [4242],
    laps: [4],
    channels: [['power', 'heart_rate', 'speed', 'cadence', 'altitude', 'distance', 'latitude', 'longitude', 'temperature']],
  },
  // core_temperature is the native record field (139); skin temperature is a developer field, not a channel.
  'Karoo-Botley_BW_Swanmore_Wickham-2025-05-09-1238.fit': {
    sports: ['cycling'],
    devices: ['Hammerhead Karoo 2', 'Quarq', 'Polar'],
    utcOffsetSeconds: 0,
    samples: [4314],
    laps: [1],
    channels: [
      ['power', 'heart_rate', 'speed', 'cadence', 'altitude', 'distance', 'latitude', 'longitude', 'temperature', 'core_temperature'],
    ],
  },
  // Two duplicated record timestamps.
  'SigmaRox11_1.fit': {
    sports: ['cycling.road'],
    devices: ['Sigma ROX 11.1 EVO'],
    utcOffsetSeconds: 0,
    samples: [7257],
    laps: [5],
    channels: [['power', 'heart_rate', 'speed', 'cadence', 'altitude', 'distance', 'latitude', 'longitude', 'temperature']],
  },
  // SmO2 is the native record field saturated_hemoglobin_percent (57); no sport at all → generic.
  'moxy.fit': { sports: ['generic'], devices: ['Moxy'], utcOffsetSeconds: 0, samples: [175], laps: [3], channels: [['smo2']] },
};

test('the fixture table covers every file in the fixtures directory', (t) => {
  t.deepEqual(
    readdirSync(FIXTURES)
      .filter((f) => f.toLowerCase().endsWith('.fit'))
      .sort(),
    Object.keys(FIXTURE_FACTS).sort(),
  );
});

for (const [name, facts] of Object.entries(FIXTURE_FACTS)) {
  test(`fixture ${name}: recordings match fitsdk's decoding`, async (t) => {
    const bytes = fixture(name);
    const expected = expectedFromFitsdk(bytes);
    if (facts === 'no_activity') {
      t.is(expected.length, 0, 'fitsdk finds no session with records either');
      const error = await t.throwsAsync(parseFit(bytes), { instanceOf: IngestError });
      t.is(error?.code, 'no_activity');
      return;
    }
    const recordings = await parseFit(bytes);
    t.is(recordings.length, expected.length, 'one recording per session');
    t.deepEqual(
      recordings.map((r) => r.sport),
      facts.sports,
    );
    t.deepEqual(
      recordings.map((r) => r.timestamps.length),
      facts.samples,
    );
    t.deepEqual(
      recordings.map((r) => r.laps.length),
      facts.laps,
    );
    t.deepEqual(
      recordings.map((r) => Object.keys(r.channels).sort()),
      facts.channels.map((c) => [...c].sort()),
    );
    for (const [i, rec] of recordings.entries()) {
      const exp = expected[i]!;
      const at = `session ${i}`;
      t.is(rec.sport, exp.sport, at);
      t.true(Math.abs(rec.start.getTime() - exp.start) < 1000, `${at}: start ${rec.start.toISOString()}`);
      t.true(Math.abs(rec.end.getTime() - exp.end) < 1000, `${at}: end ${rec.end.toISOString()} vs ${new Date(exp.end).toISOString()}`);
      t.true(rec.end >= rec.start, at);
      t.is(rec.utcOffsetSeconds, exp.utcOffsetSeconds, at);
      t.is(rec.utcOffsetSeconds, facts.utcOffsetSeconds, at);
      t.deepEqual(rec.devices, facts.devices, at);
      t.deepEqual(
        rec.laps.map((l) => l.start.getTime()),
        exp.lapStarts,
        `${at}: lap starts`,
      );
      for (const lap of rec.laps) t.true(lap.end >= lap.start, at);
      t.deepEqual(Array.from(rec.timestamps), exp.timestamps, `${at}: timestamps`);
      t.true(
        rec.timestamps.every((v, k) => k === 0 || v > rec.timestamps[k - 1]!),
        `${at}: strictly ascending`,
      );
      t.true(
        rec.timestamps[0]! >= rec.start.getTime() && rec.timestamps[rec.timestamps.length - 1]! <= rec.end.getTime(),
        `${at}: samples within [start, end]`,
      );
      t.deepEqual(Object.keys(rec.channels).sort(), Object.keys(exp.channels).sort(), `${at}: channels present`);
      for (const [channel, values] of Object.entries(exp.channels) as [Channel, number[]][]) {
        const actual = rec.channels[channel]!;
        t.is(actual.length, rec.timestamps.length, `${at} ${channel}: aligned`);
        const finite = values.flatMap((v, k) => (Number.isFinite(v) ? [k] : []));
        for (const k of [finite[0]!, finite[Math.floor(finite.length / 2)]!, finite[finite.length - 1]!]) {
          t.true(close(actual[k]!, values[k]!), `${at} ${channel}[${k}]: ${actual[k]} vs fitsdk ${values[k]}`);
        }
        const mismatches = values.filter((v, k) => !close(actual[k]!, v)).length;
        t.is(mismatches, 0, `${at} ${channel}: every sample equals fitsdk's (NaN where absent)`);
      }
    }
  });
}

// ─── Corrupt and non-activity files ─────────────────────────────────────────────────────────────

async function ingestCode(t: import('ava').ExecutionContext, bytes: Uint8Array): Promise<string | undefined> {
  try {
    await parseFit(bytes);
    return undefined;
  } catch (error) {
    t.true(error instanceof IngestError, `an IngestError, not ${String(error)}`);
    t.true(error instanceof IngestError && error.message.length > 10, 'with a message');
    return error instanceof IngestError ? error.code : 'other';
  }
}

test('corrupt variants of a real file are refused with the right IngestError codes', async (t) => {
  const real = new Uint8Array(fixture('4078723797.fit'));
  const flipped = real.slice();
  flipped[Math.floor(real.length / 2)]! ^= 0x01; // one bit in the data section
  const headerFlipped = real.slice();
  headerFlipped[4]! ^= 0x01; // the data size in the header
  const lastByte = real.slice();
  lastByte[real.length - 1]! ^= 0xff; // the file CRC itself
  let seed = 42;
  const garbage = Uint8Array.from({ length: 4096 }, () => (seed = (seed * 1103515245 + 12345) >>> 0) >>> 24);
  const fitHeaderThenGarbage = Uint8Array.from([...real.subarray(0, 14), ...garbage]);
  const cases: [string, Uint8Array, string][] = [
    ['truncated to half', real.slice(0, real.length >> 1), 'invalid_fit'],
    ['missing its last byte', real.slice(0, real.length - 1), 'invalid_fit'],
    ['header only', real.slice(0, 14), 'invalid_fit'],
    ['one byte flipped in the data', flipped, 'invalid_fit'],
    ['header data size changed', headerFlipped, 'invalid_fit'],
    ['file CRC changed', lastByte, 'invalid_fit'],
    ['zero bytes', new Uint8Array(0), 'empty_file'],
    ['random garbage', garbage, 'invalid_fit'],
    ['a FIT header followed by garbage', fitHeaderThenGarbage, 'invalid_fit'],
    ['text', new TextEncoder().encode('timestamp,power\n2024-01-01T00:00:00Z,200\n'), 'invalid_fit'],
  ];
  for (const [what, bytes, code] of cases) t.is(await ingestCode(t, bytes), code, what);
  const error = await t.throwsAsync(parseFit(flipped), { instanceOf: IngestError });
  t.regex(error?.message ?? '', /not a valid FIT file.*CRC/);
});

test('property: any truncation or single-byte change of a real file is an invalid_fit IngestError', async (t) => {
  const real = new Uint8Array(fixture('6471559601_ACTIVITY.fit'));
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: real.length - 1 }),
      async (length) => (await ingestCode(t, real.slice(0, length))) === 'invalid_fit',
    ),
    { numRuns: 150, seed: 1 },
  );
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 0, max: real.length - 1 }), fc.integer({ min: 1, max: 255 }), async (at, xor) => {
      const bytes = real.slice();
      bytes[at]! ^= xor;
      return (await ingestCode(t, bytes)) === 'invalid_fit';
    }),
    { numRuns: 300, seed: 2 },
  );
});

test('valid FIT files without an activity are no_activity', async (t) => {
  t.is(await ingestCode(t, buildSettingsFit()), 'no_activity', 'settings file');
  t.is(await ingestCode(t, buildMonitoringFit()), 'no_activity', 'monitoring file');
  t.is(await ingestCode(t, fixture('2012_02_05_09_03_59.fit')), 'no_activity', 'a session without records');
});

// ─── Synthetic files (fitsdk's encoder) ─────────────────────────────────────────────────────────

test('a multisport file gives one recording per session with its own records, laps and sport', async (t) => {
  const runStart = new Date('2024-06-01T06:00:00Z');
  const rideStart = new Date('2024-06-01T06:10:30Z'); // 30 s after the run's 600 s
  const bytes = buildActivityFit({
    utcOffsetSeconds: 7200,
    devices: [{ deviceIndex: 1, manufacturer: 'stagesCycling', product: 3, sourceType: 'antplus', deviceType: 11 }],
    sessions: [
      {
        sport: 'running',
        subSport: 'trail',
        start: runStart,
        seconds: 600,
        laps: 2,
        record: (i) => ({
          heartRate: 140 + (i % 5),
          speed: 3.5,
          distance: i * 3.5,
          cadence: 88,
          positionLat: semicircles(46.5 + i * 1e-5),
          positionLong: semicircles(6.6),
        }),
      },
      { sport: 'cycling', subSport: 'road', start: rideStart, seconds: 900, laps: 3 },
    ],
  });
  t.is(expectedFromFitsdk(bytes).length, 2, 'fitsdk reads two sessions');
  const [run, ride, ...rest] = await parseFit(bytes);
  t.is(rest.length, 0);
  t.truthy(run && ride);
  if (!run || !ride) return;

  t.is(run.sport, 'running.trail');
  t.is(ride.sport, 'cycling.road');
  t.deepEqual([run.start, run.end], [runStart, new Date(runStart.getTime() + 600_000)]);
  t.deepEqual([ride.start, ride.end], [rideStart, new Date(rideStart.getTime() + 900_000)]);
  t.is(run.utcOffsetSeconds, 7200);
  t.is(ride.utcOffsetSeconds, 7200);
  t.deepEqual(run.devices, ['Garmin Edge 830', 'Stages']);

  t.is(run.timestamps.length, 600);
  t.is(ride.timestamps.length, 900);
  t.is(run.timestamps[0], runStart.getTime());
  t.is(run.timestamps[599], runStart.getTime() + 599_000);
  t.is(ride.timestamps[0], rideStart.getTime());
  t.deepEqual(Object.keys(run.channels).sort(), ['cadence', 'distance', 'heart_rate', 'latitude', 'longitude', 'speed']);
  t.deepEqual(Object.keys(ride.channels).sort(), ['cadence', 'distance', 'heart_rate', 'power', 'speed']);
  t.is(run.channels.speed![10], 3.5);
  t.is(run.channels.heart_rate![3], 143);
  t.true(Math.abs(run.channels.latitude![100]! - (46.5 + 100 * 1e-5)) < 1e-6, 'semicircles → degrees');
  t.true(Math.abs(run.channels.longitude![0]! - 6.6) < 1e-6);
  t.is(ride.channels.power![0], 200);
  t.is(ride.channels.power![899], 200 + (899 % 50));
  t.true(Math.abs(ride.channels.speed![3]! - 8.3) < 1e-9, 'm/s');
  t.is(ride.channels.distance![899], 899 * 8);

  t.deepEqual(
    run.laps.map((l) => [l.start.getTime(), l.end.getTime()]),
    [0, 1].map((k) => [runStart.getTime() + k * 300_000, runStart.getTime() + (k + 1) * 300_000]),
  );
  t.deepEqual(
    ride.laps.map((l) => [l.start.getTime(), l.end.getTime()]),
    [0, 1, 2].map((k) => [rideStart.getTime() + k * 300_000, rideStart.getTime() + (k + 1) * 300_000]),
  );
});

test('the UTC offset is local_timestamp − timestamp to the nearest 15 minutes; 0 when absent or implausible', async (t) => {
  const session = { sport: 'cycling', start: new Date('2024-03-01T10:00:00Z'), seconds: 30 };
  const offset = async (utcOffsetSeconds: number | undefined) =>
    (await parseFit(buildActivityFit({ utcOffsetSeconds, sessions: [session] })))[0]!.utcOffsetSeconds;
  t.is(await offset(-12600), -12600, 'Newfoundland −3:30');
  t.is(await offset(20700), 20700, 'Nepal +5:45');
  t.is(await offset(7190), 7200, 'rounded');
  t.is(await offset(0), 0);
  t.is(await offset(undefined), 0, 'no local_timestamp');
  t.is(await offset(-27 * 86400), 0, 'a device clock error');
});

test('records: sorted, the last of duplicated timestamps kept, NaN where a sample lacks a value, only channels with values', async (t) => {
  const t0 = new Date('2024-05-05T08:00:00Z').getTime();
  const at = (s: number) => new Date(t0 + s * 1000);
  const bytes = encodeFit([
    { mesgNum: MesgNum.FILE_ID, type: 'activity', manufacturer: 'development', product: 1, serialNumber: 1, timeCreated: at(0) },
    { mesgNum: MesgNum.RECORD, timestamp: at(0), power: 100, heartRate: 90 },
    { mesgNum: MesgNum.RECORD, timestamp: at(2), power: 300 },
    { mesgNum: MesgNum.RECORD, timestamp: at(1), power: 150, heartRate: 91 },
    { mesgNum: MesgNum.RECORD, timestamp: at(1), power: 175 },
    { mesgNum: MesgNum.RECORD, timestamp: at(3), heartRate: 95, altitude: 410.4, temperature: -4 },
    {
      mesgNum: MesgNum.SESSION,
      timestamp: at(3),
      startTime: at(0),
      totalElapsedTime: 3,
      totalTimerTime: 3,
      sport: 'cycling',
      subSport: 'indoorCycling',
    },
    { mesgNum: MesgNum.ACTIVITY, timestamp: at(3), numSessions: 1, type: 'manual', event: 'activity', eventType: 'stop' },
  ]);
  const [rec] = await parseFit(bytes);
  t.truthy(rec);
  if (!rec) return;
  t.is(rec.sport, 'cycling+stationary');
  t.deepEqual(
    Array.from(rec.timestamps),
    [0, 1, 2, 3].map((s) => t0 + s * 1000),
  );
  t.deepEqual(Array.from(rec.channels.power!), [100, 175, 300, NaN]);
  t.deepEqual(Array.from(rec.channels.heart_rate!), [90, NaN, NaN, 95]);
  t.deepEqual(Array.from(rec.channels.altitude!), [NaN, NaN, NaN, 410.4]);
  t.deepEqual(Array.from(rec.channels.temperature!), [NaN, NaN, NaN, -4]);
  t.deepEqual(Object.keys(rec.channels).sort(), ['altitude', 'heart_rate', 'power', 'temperature']);
  t.deepEqual(rec.devices, ['Development'], 'a manufacturer without a named product');
  t.deepEqual(rec.laps, []);
});

test('developer fields: core temperature (CORE app) and SmO2 (Moxy app) become channels; others do not', async (t) => {
  const bytes = buildActivityFit({
    sessions: [
      {
        sport: 'cycling',
        start: new Date('2024-07-01T07:00:00Z'),
        seconds: 20,
        developerFields: [
          { name: 'core_temperature', units: '°C', value: (i) => (i % 4 === 0 ? 37.5 + i / 100 : undefined) },
          { name: 'SmO2', units: '%', developerDataIndex: 1, value: (i) => 60 + i }, // the Moxy app, beside the CORE app (index 0)
          { name: 'skin_temperature', units: '°C', value: () => 33 },
          { name: 'Form Power', units: 'Watts', value: () => 80 },
        ],
      },
    ],
  });
  const [rec] = await parseFit(bytes);
  t.truthy(rec);
  if (!rec) return;
  const expected = expectedFromFitsdk(bytes)[0]!;
  t.deepEqual(Object.keys(rec.channels).sort(), Object.keys(expected.channels).sort());
  t.deepEqual(Object.keys(rec.channels).sort(), ['cadence', 'core_temperature', 'distance', 'heart_rate', 'power', 'smo2', 'speed']);
  t.true(Math.abs(rec.channels.core_temperature![4]! - 37.54) < 1e-5, 'float32');
  t.true(Number.isNaN(rec.channels.core_temperature![1]!));
  t.is(rec.channels.smo2![7], 67);
  t.is(rec.channels.power![0], 200, 'a developer field does not replace a native one');
});

test('a developer field description without the endian bit in its base type (fitsdk Utils constants) does not sink the file', async (t) => {
  const bytes = buildActivityFit({
    sessions: [
      {
        sport: 'cycling',
        start: new Date('2024-07-01T07:00:00Z'),
        seconds: 20,
        developerFields: [{ name: 'core_temperature', units: '°C', baseType: Utils.FitBaseType.FLOAT32, value: () => 37.5 }],
      },
    ],
  });
  t.truthy(expectedFromFitsdk(bytes)[0]?.channels.core_temperature, 'fitsdk reads it');
  const [rec] = await parseFit(bytes);
  t.is(rec?.timestamps.length, 20);
  t.deepEqual(
    Object.keys(rec?.channels ?? {}).sort(),
    ['cadence', 'distance', 'heart_rate', 'power', 'speed'],
    'fit-file-parser skips the field it cannot resolve',
  );
});

test('parseFit takes a Buffer or any Uint8Array view and leaves the bytes untouched', async (t) => {
  const bytes = fixture('6471559601_ACTIVITY.fit');
  const padded = new Uint8Array(bytes.length + 10);
  padded.set(bytes, 7);
  const view = padded.subarray(7, 7 + bytes.length);
  const before = Buffer.from(view);
  const fromBuffer = await parseFit(bytes);
  const fromView = await parseFit(view);
  t.deepEqual(fromView, fromBuffer);
  t.true(Buffer.from(view).equals(before));
});
