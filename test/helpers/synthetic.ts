/**
 * Synthetic rides for the benchmarks (bench/) and the tests that need a realistic ride: 1 Hz cycling FIT files
 * written with Garmin's own encoder (@garmin/fitsdk, as test/helpers/fit-builder.ts does), so the
 * parser sees what a head unit writes: file_id, device_info, a timer start event, records with
 * position, distance, enhanced speed and altitude, power, heart rate and cadence, a lap message
 * every `lapSeconds` (written in the stream where the lap ends, as devices do), the session, a
 * stopAll event and the activity message with a local timestamp.
 *
 * The ride is a simple physical model driven by a seeded PRNG, so a (start, seconds, seed) triple
 * always gives the same bytes, and different starts give different bytes (no deduplication):
 * rolling terrain (altitude as a sum of sine waves over distance), a power target with endurance
 * riding, intervals, coasting on descents and a café stop, speed from a power balance (rolling
 * resistance, gravity, air drag), heart rate lagging power, cadence following power, and a
 * position that moves along a slowly turning heading.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Encoder, Profile, Utils, type Mesg } from '@garmin/fitsdk';
import { prng } from './prng.ts';

type FitMessage = Mesg & { mesgNum: number } & Record<string, unknown>;
const MesgNum = Profile.MesgNum as Record<'FILE_ID' | 'DEVICE_INFO' | 'EVENT' | 'RECORD' | 'LAP' | 'SESSION' | 'ACTIVITY', number>;

const semicircles = (degrees: number) => Math.round((degrees * 2 ** 31) / 180);

export interface RideSpec {
  start: Date;
  /** Records at 1 Hz from start. */
  seconds: number;
  /** Seeds the PRNG (terrain, efforts, noise); default derived from start. */
  seed?: number;
  /** A lap message every this many seconds (the last lap is shorter); default 600 (10 min). */
  lapSeconds?: number;
  /** local_timestamp − timestamp of the activity message; default 3600. */
  utcOffsetSeconds?: number;
  /** Starting position in degrees; default near Winchester, UK. */
  origin?: { lat: number; lon: number };
}

/** mulberry32 (test/helpers/prng.ts). */
export { prng };

export interface Sample {
  lat: number;
  lon: number;
  distance: number;
  speed: number;
  altitude: number;
  power: number;
  heartRate: number;
  cadence: number;
}

/** A simulated ride's channels as the service stores them (power, heart rate, speed, cadence at 1 Hz). */
export function rideChannels(samples: readonly Sample[]) {
  return {
    power: Float64Array.from(samples, (s) => s.power),
    heart_rate: Float64Array.from(samples, (s) => s.heartRate),
    speed: Float64Array.from(samples, (s) => s.speed),
    cadence: Float64Array.from(samples, (s) => s.cadence),
  };
}

/** The channels an activity's stored curves are computed from, copied (the engine pool takes its inputs). */
export function curveInputs(channels: ReturnType<typeof rideChannels>) {
  return { power: channels.power.slice(), speed: channels.speed.slice(), heart_rate: channels.heart_rate.slice() };
}

/** The ride's samples, one a second. */
export function simulateRide(spec: RideSpec): Sample[] {
  const rand = prng(spec.seed ?? Math.floor(spec.start.getTime() / 1000));
  const gauss = () => {
    const u = Math.max(rand(), 1e-12);
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand());
  };
  const n = spec.seconds;
  // Terrain: altitude over distance as a sum of sine waves (rolling hills, some climbs).
  const waves = Array.from({ length: 4 }, (_, k) => ({
    amp: [40, 15, 6, 2][k]! * (0.5 + rand()),
    len: [9000, 2500, 800, 250][k]! * (0.7 + 0.6 * rand()),
    phase: rand() * 2 * Math.PI,
  }));
  const baseAlt = 50 + rand() * 150;
  const altitudeAt = (d: number) => baseAlt + waves.reduce((s, w) => s + w.amp * Math.sin((2 * Math.PI * d) / w.len + w.phase), 0);
  // Efforts: endurance power, with intervals every ~20 min and a café stop somewhere in the middle.
  const ftp = 240 + rand() * 60;
  const endurance = ftp * (0.62 + rand() * 0.1);
  const intervals: { from: number; to: number; watts: number }[] = [];
  for (let t = 900 + Math.floor(rand() * 600); t < n - 600; t += 1000 + Math.floor(rand() * 800)) {
    const len = 120 + Math.floor(rand() * 360);
    intervals.push({ from: t, to: t + len, watts: ftp * (0.95 + rand() * 0.25) });
  }
  const stopAt = n > 3600 ? Math.floor(n * (0.4 + rand() * 0.2)) : -1;
  const stopLen = 300 + Math.floor(rand() * 600);

  const mass = 80;
  const g = 9.81;
  const crr = 0.005;
  const cdaRho = 0.32 * 1.2;
  const origin = spec.origin ?? { lat: 51.06 + rand() * 0.05, lon: -1.31 + rand() * 0.05 };
  let lat = origin.lat;
  let lon = origin.lon;
  let heading = rand() * 2 * Math.PI;
  let v = 0;
  let d = 0;
  let hr = 85 + rand() * 10;
  let noise = 0;
  let cadenceNoise = 0;
  const out: Sample[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const stopped = stopAt >= 0 && i >= stopAt && i < stopAt + stopLen;
    const grade = (altitudeAt(d + 5) - altitudeAt(d)) / 5;
    noise = 0.9 * noise + gauss() * 12;
    let target = i < 180 ? endurance * (0.4 + (0.6 * i) / 180) : endurance;
    for (const iv of intervals) if (i >= iv.from && i < iv.to) target = iv.watts;
    if (grade > 0.03) target *= 1.15; // harder on climbs
    let power = Math.max(0, target + noise);
    if (grade < -0.025 && rand() < 0.85) power = 0; // coasting downhill
    if (rand() < 0.01) power = 0; // a moment freewheeling
    if (stopped || (i < 15 && rand() < 0.5)) power = 0;
    if (stopped) v = 0;
    else {
      const resist = mass * g * (crr + grade) + 0.5 * cdaRho * v * v;
      const drive = power / Math.max(v, 1.5);
      v = Math.min(22, Math.max(0, v + (drive - resist) / mass));
    }
    d += v;
    heading += gauss() * 0.02;
    const metresPerDegLat = 111_320;
    lat += (v * Math.cos(heading)) / metresPerDegLat;
    lon += (v * Math.sin(heading)) / (metresPerDegLat * Math.cos((lat * Math.PI) / 180));
    // Heart rate: first-order lag (τ ≈ 40 s) toward a power-dependent level, with slow drift.
    const hrTarget = (stopped ? 90 : 95 + 0.28 * power) + (i / n) * 8;
    hr += (hrTarget - hr) / 40 + gauss() * 0.3;
    cadenceNoise = 0.8 * cadenceNoise + gauss() * 1.5;
    const cadence = power === 0 ? 0 : Math.max(50, Math.min(125, 78 + power / 25 + cadenceNoise));
    out[i] = {
      lat,
      lon,
      distance: d,
      speed: v,
      altitude: altitudeAt(d),
      power: Math.round(power),
      heartRate: Math.round(Math.min(195, Math.max(60, hr))),
      cadence: Math.round(cadence),
    };
  }
  return out;
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
const max = (xs: number[]) => xs.reduce((a, b) => Math.max(a, b), 0);

function summaryFields(samples: Sample[], from: number, to: number) {
  const part = samples.slice(from, to);
  const first = samples[Math.max(0, from - 1)]!;
  const distance = (part.at(-1)?.distance ?? 0) - (from === 0 ? 0 : first.distance);
  const elapsed = to - from;
  let ascent = 0;
  let descent = 0;
  for (let i = 1; i < part.length; i++) {
    const dh = part[i]!.altitude - part[i - 1]!.altitude;
    if (dh > 0) ascent += dh;
    else descent -= dh;
  }
  return {
    totalElapsedTime: elapsed,
    totalTimerTime: elapsed,
    totalDistance: distance,
    enhancedAvgSpeed: distance / Math.max(1, elapsed),
    enhancedMaxSpeed: max(part.map((s) => s.speed)),
    avgPower: Math.round(mean(part.map((s) => s.power))),
    maxPower: max(part.map((s) => s.power)),
    avgHeartRate: Math.round(mean(part.map((s) => s.heartRate))),
    maxHeartRate: max(part.map((s) => s.heartRate)),
    avgCadence: Math.round(mean(part.filter((s) => s.cadence > 0).map((s) => s.cadence))),
    maxCadence: max(part.map((s) => s.cadence)),
    totalAscent: Math.round(ascent),
    totalDescent: Math.round(descent),
  };
}

const RECORD_FIELDS = new Set([
  'timestamp',
  'positionLat',
  'positionLong',
  'distance',
  'enhancedSpeed',
  'enhancedAltitude',
  'power',
  'heartRate',
  'cadence',
]);

/**
 * fitsdk's MesgDefinition looks every field of every message up with a linear search over
 * `Object.entries(profile.fields)` (~100 record fields): ~1 s of a 2 h file's encoding. While a
 * ride is encoded (synchronously), the record profile is swapped for one holding only the fields
 * written, which gives the same field definitions and so the same bytes (`fast: false` encodes with
 * the full profile, to check that).
 */
function withTrimmedRecordProfile<T>(fn: () => T): T {
  const messages = Profile.messages as unknown as Record<number, { fields: Record<string, { name: string }> }>;
  const original = messages[MesgNum.RECORD]!;
  messages[MesgNum.RECORD] = {
    ...original,
    fields: Object.fromEntries(
      Object.values(original.fields)
        .filter((f) => RECORD_FIELDS.has(f.name))
        .map((f) => [f.name, f]),
    ),
  };
  try {
    return fn();
  } finally {
    messages[MesgNum.RECORD] = original;
  }
}

/** A ride as one FIT activity file (see the module comment). */
export function buildRideFit(spec: RideSpec, opts: { fast?: boolean } = {}): Uint8Array {
  return opts.fast === false ? encodeRide(spec) : withTrimmedRecordProfile(() => encodeRide(spec));
}

function encodeRide(spec: RideSpec): Uint8Array {
  const samples = simulateRide(spec);
  const lapSeconds = spec.lapSeconds ?? 600;
  const start = spec.start;
  const at = (s: number) => new Date(start.getTime() + s * 1000);
  const n = spec.seconds;
  const encoder = new Encoder();
  const write = (m: FitMessage) => encoder.writeMesg(m as Parameters<Encoder['writeMesg']>[0]);

  write({
    mesgNum: MesgNum.FILE_ID,
    type: 'activity',
    manufacturer: 'garmin',
    product: 3122,
    serialNumber: 3312345678,
    timeCreated: start,
  });
  write({
    mesgNum: MesgNum.DEVICE_INFO,
    timestamp: start,
    deviceIndex: 'creator',
    manufacturer: 'garmin',
    product: 3122,
    softwareVersion: 9.75,
    sourceType: 'local',
  });
  write({
    mesgNum: MesgNum.DEVICE_INFO,
    timestamp: start,
    deviceIndex: 1,
    manufacturer: 'garmin',
    antDeviceNumber: 12345,
    antplusDeviceType: 'heartRate',
    sourceType: 'antplus',
  });
  write({
    mesgNum: MesgNum.DEVICE_INFO,
    timestamp: start,
    deviceIndex: 2,
    manufacturer: 'stagesCycling',
    antDeviceNumber: 23456,
    antplusDeviceType: 'bikePower',
    sourceType: 'antplus',
  });
  write({ mesgNum: MesgNum.EVENT, timestamp: start, event: 'timer', eventType: 'start', eventGroup: 0 });

  let lapIndex = 0;
  let lapStart = 0;
  for (let i = 0; i < n; i++) {
    const s = samples[i]!;
    write({
      mesgNum: MesgNum.RECORD,
      timestamp: at(i),
      positionLat: semicircles(s.lat),
      positionLong: semicircles(s.lon),
      distance: s.distance,
      enhancedSpeed: s.speed,
      enhancedAltitude: s.altitude,
      power: s.power,
      heartRate: s.heartRate,
      cadence: s.cadence,
    });
    const end = i + 1;
    if (end - lapStart === lapSeconds || end === n) {
      write({
        mesgNum: MesgNum.LAP,
        messageIndex: lapIndex++,
        timestamp: at(end),
        startTime: at(lapStart),
        startPositionLat: semicircles(samples[lapStart]!.lat),
        startPositionLong: semicircles(samples[lapStart]!.lon),
        endPositionLat: semicircles(s.lat),
        endPositionLong: semicircles(s.lon),
        ...summaryFields(samples, lapStart, end),
        event: 'lap',
        eventType: 'stop',
        lapTrigger: end === n ? 'sessionEnd' : 'time',
        sport: 'cycling',
        subSport: 'road',
      });
      lapStart = end;
    }
  }
  write({
    mesgNum: MesgNum.SESSION,
    messageIndex: 0,
    timestamp: at(n),
    startTime: start,
    startPositionLat: semicircles(samples[0]!.lat),
    startPositionLong: semicircles(samples[0]!.lon),
    ...summaryFields(samples, 0, n),
    sport: 'cycling',
    subSport: 'road',
    firstLapIndex: 0,
    numLaps: lapIndex,
    event: 'session',
    eventType: 'stop',
    trigger: 'activityEnd',
  });
  write({ mesgNum: MesgNum.EVENT, timestamp: at(n), event: 'timer', eventType: 'stopAll', eventGroup: 0 });
  write({
    mesgNum: MesgNum.ACTIVITY,
    timestamp: at(n),
    totalTimerTime: n,
    numSessions: 1,
    type: 'manual',
    event: 'activity',
    eventType: 'stop',
    localTimestamp: Utils.convertDateToDateTime(at(n)) + (spec.utcOffsetSeconds ?? 3600),
  });
  return encoder.close();
}

// ---------------------------------------------------------------------------------------------
// A synthetic history (the backfill benchmark's input), generated once and cached on disk.

export interface HistoryFile {
  /** Path inside the archive. */
  name: string;
  /** Absolute path of the file in the cache directory. */
  path: string;
  start: string;
  seconds: number;
}

export interface History {
  dir: string;
  /** In archive order (shuffled, not by date: the service must order them). */
  files: HistoryFile[];
  /** The zip archive of every file. */
  zip: string;
  /** Whether this call generated it (false: read from the cache). */
  generated: boolean;
  generateSeconds: number;
}

// yazl ships no types; the little of it used here (as in test/archive.test.ts):
interface YazlZipFile {
  addFile(realPath: string, name: string, options?: { compress?: boolean; mtime?: Date }): void;
  end(): void;
  outputStream: NodeJS.ReadableStream;
}

/** Distinct days for a history's rides: a seeded shuffle of the period's `days` (0 … days − 1); a history takes the first of them. */
export function shuffledDays(rand: () => number, days: number): number[] {
  const dayList = Array.from({ length: days }, (_, i) => i);
  for (let i = dayList.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [dayList[i], dayList[j]] = [dayList[j]!, dayList[i]!];
  }
  return dayList;
}

/** A zip archive of files on disk (yazl), each under its name in the archive, deflated or stored. */
export async function writeZip(zipPath: string, entries: { path: string; name: string; compress: boolean; mtime?: Date }[]): Promise<void> {
  const require = createRequire(import.meta.url);
  const yazl = require('yazl') as { ZipFile: new () => YazlZipFile };
  const zip = new yazl.ZipFile();
  for (const e of entries) zip.addFile(e.path, e.name, { compress: e.compress, ...(e.mtime ? { mtime: e.mtime } : {}) });
  zip.end();
  await pipeline(zip.outputStream, fs.createWriteStream(zipPath));
}

/**
 * `count` rides of 30 min to 3 h (or all of `seconds`), each starting on a distinct day (06:00–18:00 UTC) over about two
 * years, as FIT files named like a bulk export (`activities/<id>.fit`) and zipped (deflate).
 * Cached under the OS temporary directory, keyed by this module's source, fitsdk's version and the
 * parameters, so only the first run pays for the encoding (~0.1 s per hour of ride).
 */
export async function syntheticHistory(opts: {
  count: number;
  seed?: number;
  days?: number;
  seconds?: number;
  onProgress?: (done: number) => void;
}): Promise<History> {
  const require = createRequire(import.meta.url);
  const seed = opts.seed ?? 20240101;
  const days = opts.days ?? 730;
  if (opts.count > days) throw new Error(`${opts.count} rides on distinct days need more than ${days} days`);
  const fitsdkVersion = (require('@garmin/fitsdk/package.json') as { version: string }).version;
  const key = createHash('sha256')
    .update(fs.readFileSync(new URL(import.meta.url)))
    .update(JSON.stringify({ fitsdkVersion, count: opts.count, seed, days, ...(opts.seconds ? { seconds: opts.seconds } : {}) }))
    .digest('hex')
    .slice(0, 16);
  const dir = path.join(os.tmpdir(), 'tds-bench', `history-${key}`);
  const manifest = path.join(dir, 'manifest.json');
  if (fs.existsSync(manifest))
    return {
      ...(JSON.parse(fs.readFileSync(manifest, 'utf8')) as Omit<History, 'generated' | 'generateSeconds'>),
      generated: false,
      generateSeconds: 0,
    };

  const started = performance.now();
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(path.join(dir, 'activities'), { recursive: true });
  const rand = prng(seed);
  const dayList = shuffledDays(rand, days);
  const first = Date.UTC(2024, 0, 1);
  const files: HistoryFile[] = [];
  for (let i = 0; i < opts.count; i++) {
    const start = new Date(first + dayList[i]! * 86_400_000 + (6 * 3600 + Math.floor(rand() * 12 * 3600)) * 1000);
    const drawn = 1800 + Math.floor(rand() * (10_800 - 1800 + 1));
    const seconds = opts.seconds ?? drawn;
    const name = `activities/${10_000_000_000 + Math.floor(rand() * 9_000_000_000)}.fit`;
    const file = path.join(dir, name);
    fs.writeFileSync(file, buildRideFit({ start, seconds, seed: seed + i }));
    files.push({ name, path: file, start: start.toISOString(), seconds });
    opts.onProgress?.(i + 1);
  }
  const zipPath = path.join(dir, 'history.zip');
  await writeZip(
    zipPath,
    files.map((f) => ({ path: f.path, name: f.name, compress: true, mtime: new Date(f.start) })),
  );
  const result = { dir, files, zip: zipPath };
  fs.writeFileSync(manifest, JSON.stringify(result, null, 2));
  return { ...result, generated: true, generateSeconds: (performance.now() - started) / 1000 };
}
