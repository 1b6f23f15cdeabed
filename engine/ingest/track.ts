/**
 * What the GPX and TCX readers (engine/ingest/gpx.ts, engine/ingest/tcx.ts) share: the points read
 * from a file, column by column, and how a run of them becomes a Recording (engine/ingest/recording.ts).
 *
 * **Time.** A point's time is an ISO 8601 instant; one with a UTC offset is converted to UTC, and
 * the activity's utcOffsetSeconds is the offset of its first point's time when the file writes one
 * (`+02:00`), else 0 (`Z`, the usual case, says UTC and nothing about local time). A time without
 * `Z` or an offset is taken as UTC (GPX and TCX define their times as UTC). A point without a
 * (valid) time is left out.
 *
 * **Order.** Points are taken in file order, as FIT records are, with two rules for a clock that
 * does not advance: a point whose time repeats the previous kept point's replaces it (the last in
 * the file is kept) and is counted as `duplicate_timestamp`; a point whose time is before the
 * previous kept point's (time going backwards) is left out and counted as `outside_session`: its
 * time lies outside the span the recording had reached (sorting it in, as a clock reset to 2000
 * would, could make a decade-long activity out of a ride).
 *
 * **Distance.** The file's own cumulative distance per point (TCX DistanceMeters, GPX
 * gpxdata:distance) when any point has one; else, when points have a position, the geodesic length
 * of the track: the sum of the distances between consecutive positioned points, horizontal only
 * (altitude is left out, as devices do), not across a pause (a GPX segment break, a TCX timer stop:
 * where the athlete went while the timer was stopped is not part of the activity). Each step is
 * the distance on the WGS-84 ellipsoid in the local tangent plane at the mean latitude φ of its two
 * points (the "flat-Earth" ellipsoidal approximation, as in Mapbox's cheap-ruler):
 *
 *   d = √((M·Δφ)² + (N·cos φ·Δλ)²),  M = a(1 − e²)/W³,  N = a/W,  W = √(1 − e² sin² φ)
 *
 * with a = 6,378,137 m and e² = 0.00669437999014 (WGS-84), M and N the meridional and prime-vertical
 * radii of curvature. Between GPS fixes metres apart it differs from Vincenty's ellipsoidal
 * inverse by far less than 0.01 % (under 0.1 % up to hundreds of kilometres), at the cost of one
 * sine and one cosine, while haversine on a sphere (R = 6,371,008.8 m) is off by up to 0.5 %
 * depending on latitude and heading — half the 1 % the data checks allow.
 *
 * **Speed.** The file's own speed when any point has one; else, from the distance: each point's
 * speed is the distance covered since the previous point over the time between them, when both
 * are in the same run (no pause between) and at most MAX_FILL_SECONDS apart (resample.ts), else
 * missing.
 */
import { IngestError, type DeviceSummary, type DroppedRecords, type Lap, type Pause, type Recording } from './recording.ts';
import type { Channel } from '../channels.ts';
import { parseInstant } from '../../lib/time.ts';
import { MAX_RECORDS, tooManyRecords } from './limits.ts';
import { MAX_FILL_SECONDS } from './resample.ts';

export const TRACK_CHANNELS = [
  'power',
  'heart_rate',
  'speed',
  'cadence',
  'altitude',
  'distance',
  'latitude',
  'longitude',
  'temperature',
] as const satisfies readonly Channel[];
export type TrackChannel = (typeof TRACK_CHANNELS)[number];
const INDEX = Object.fromEntries(TRACK_CHANNELS.map((c, i) => [c, i])) as Record<TrackChannel, number>;

/** `YYYY-MM-DDTHH:MM:SS[.fff]Z`, what nearly every producer writes: the hour, minute, second and fraction. */
const UTC_TIME = /^(\d{4}-\d\d-\d\dT[01]\d|\d{4}-\d\d-\d\dT2[0-3]):([0-5]\d):([0-5]\d)(\.\d{1,9})?Z$/;
/** The last hour read in the fast path and its instant: a file's points share their hour thousands of times. */
let lastHour = '';
let lastHourMs = Number.NaN;

/** An ISO 8601 time as epoch ms and its UTC offset (undefined for `Z` or none), or undefined when it is not a time. */
export function parseTime(text: string): { t: number; offset: number | undefined } | undefined {
  // The fast path: the hour validated and converted by parseInstant once, then minutes, seconds and the fraction added
  // (the same sum parseInstant makes: whole milliseconds, then the fraction).
  const m = UTC_TIME.exec(text);
  if (m) {
    if (m[1] !== lastHour) {
      const hour = parseInstant(`${m[1]}:00:00Z`);
      if (!hour.ok) return undefined;
      [lastHour, lastHourMs] = [m[1]!, hour.t];
    }
    const fraction = m[4] ? Number(`0${m[4]}`) * 1000 : 0;
    return { t: lastHourMs + Number(m[2]) * 60_000 + Number(m[3]) * 1000 + fraction, offset: undefined };
  }
  const parsed = parseInstant(text);
  if (parsed.ok) return { t: parsed.t, offset: /[+-]\d\d(?::?\d\d)?$/.test(text) ? parsed.offsetSeconds : undefined };
  if (!parsed.naive) return undefined;
  const utc = parseInstant(`${text}Z`);
  return utc.ok ? { t: utc.t, offset: undefined } : undefined;
}

/** A decimal number from an element's text, or NaN. */
export function number(text: string): number {
  if (text === '') return Number.NaN;
  const v = Number(text);
  return Number.isFinite(v) ? v : Number.NaN;
}

/** The points read from one file, in file order, column by column; `run[k]` numbers the unbroken run (GPX segment) point k belongs to. */
export class Points {
  readonly times: number[] = [];
  readonly run: number[] = [];
  readonly columns: number[][] = TRACK_CHANNELS.map(() => []);
  /** The UTC offset of the first time written with one. */
  offset: number | undefined;
  /** Points with at least one value but no valid time (GPX routes). */
  untimed = 0;
  /** Where each of those came: the number of timed points before it. */
  readonly untimedAt: number[] = [];
  private runNumber = 0;
  private time: number | undefined;
  private readonly current = new Float64Array(TRACK_CHANNELS.length);
  private any = false;

  get count(): number {
    return this.times.length;
  }

  /** The points that follow are a new run (a GPX segment or track). */
  breakRun(): void {
    this.runNumber++;
  }

  begin(): void {
    this.time = undefined;
    this.current.fill(Number.NaN);
    this.any = false;
  }

  setTime(text: string): void {
    const parsed = parseTime(text);
    if (!parsed) return;
    this.time = parsed.t;
    if (this.offset === undefined && parsed.offset !== undefined) this.offset = parsed.offset;
  }

  /** A channel's value for the current point (the last written wins: a value written twice counts once). */
  set(channel: TrackChannel, value: number): void {
    if (Number.isNaN(value)) return;
    this.current[INDEX[channel]] = value;
    this.any = true;
  }

  end(): void {
    if (this.time === undefined) {
      if (this.any) {
        this.untimed++;
        this.untimedAt.push(this.times.length);
      }
      return;
    }
    if (this.times.length >= MAX_RECORDS) throw tooManyRecords();
    this.times.push(this.time);
    this.run.push(this.runNumber);
    for (let c = 0; c < TRACK_CHANNELS.length; c++) this.columns[c]!.push(this.current[c]!);
  }
}

/** What a reader knows of one activity besides its points. */
export interface TrackMeta {
  sport: string;
  devices: string[];
  laps: Lap[];
  /** The activity's end when the file says (TCX laps' timers); else (and at least) the last point's time. */
  end?: number;
  /** When the file's timers say the recording was stopped, from the kept points' times; undefined: pauses are runs' breaks and long gaps. */
  pauses?: (timestamps: Float64Array) => Pause[];
  deviceSummary?: DeviceSummary;
  utcOffsetSeconds: number;
}

/**
 * The points [from, to) of `points` kept in time order (see the module comment), with what was
 * dropped: also the points without a time among them (`no_time`: those after the previous range's
 * last timed point and before this range's last, or after it when the range ends the file).
 */
export function orderedPoints(points: Points, from: number, to: number): { keep: number[]; dropped: DroppedRecords } {
  const keep: number[] = [];
  const dropped: DroppedRecords = {};
  const untimed = points.untimedAt.filter((p) => p >= from && (p < to || (p === to && to === points.count))).length;
  if (untimed) dropped.no_time = untimed;
  for (let k = from; k < to; k++) {
    const t = points.times[k]!;
    const last = keep.length ? points.times[keep[keep.length - 1]!]! : -Infinity;
    if (t < last) dropped.outside_session = (dropped.outside_session ?? 0) + 1;
    else if (t === last) {
      keep[keep.length - 1] = k;
      dropped.duplicate_timestamp = (dropped.duplicate_timestamp ?? 0) + 1;
    } else keep.push(k);
  }
  return { keep, dropped };
}

/** A Recording of the points [from, to) (at least one with a time), with distance and speed derived where the file has none. */
export function trackRecording(points: Points, from: number, to: number, meta: TrackMeta): Recording {
  const { keep, dropped } = orderedPoints(points, from, to);
  if (keep.length === 0) throw new IngestError('no_activity', 'The activity has no point with a time.');
  const timestamps = Float64Array.from(keep, (k) => points.times[k]!);
  const channels: Recording['channels'] = {};
  for (const channel of TRACK_CHANNELS) {
    const column = points.columns[INDEX[channel]]!;
    const values = Float64Array.from(keep, (k) => column[k]!);
    if (values.some((v) => !Number.isNaN(v))) channels[channel] = values;
  }
  const runs = Int32Array.from(keep, (k) => points.run[k]!);
  const pauses = meta.pauses ? meta.pauses(timestamps) : runPauses(timestamps, runs);
  const paused = pausedSteps(timestamps, runs, pauses);
  if (!channels.distance && channels.latitude && channels.longitude)
    channels.distance = geodesicDistance(channels.latitude, channels.longitude, paused);
  if (!channels.speed && channels.distance) channels.speed = speedFromDistance(timestamps, channels.distance, paused);
  const first = timestamps[0]!;
  const start = Math.min(first, ...meta.laps.map((l) => l.start.getTime()));
  const end = Math.max(meta.end ?? 0, timestamps[timestamps.length - 1]!);
  return {
    sport: meta.sport,
    start: new Date(start),
    end: new Date(end),
    utcOffsetSeconds: meta.utcOffsetSeconds,
    devices: meta.devices,
    laps: meta.laps,
    timestamps,
    channels,
    pauses,
    ...(meta.deviceSummary && Object.keys(meta.deviceSummary).length ? { deviceSummary: meta.deviceSummary } : {}),
    dropped,
  };
}

/** Without the file's timers: a pause between runs (GPX segments, tracks) and across every gap longer than MAX_FILL_SECONDS. */
function runPauses(ts: Float64Array, runs: Int32Array): Pause[] {
  const pauses: Pause[] = [];
  for (let k = 0; k + 1 < ts.length; k++) {
    if (runs[k + 1] !== runs[k] || ts[k + 1]! - ts[k]! > MAX_FILL_SECONDS * 1000) pauses.push({ start: ts[k]!, end: ts[k + 1]! });
  }
  return pauses;
}

/** paused[k] = 1 when the step from point k − 1 to point k crosses a pause or a run's break (no distance, no speed across it). */
function pausedSteps(ts: Float64Array, runs: Int32Array, pauses: readonly Pause[]): Uint8Array {
  const out = new Uint8Array(ts.length);
  let p = 0;
  for (let k = 1; k < ts.length; k++) {
    while (p < pauses.length && pauses[p]!.end <= ts[k - 1]!) p++;
    if (runs[k] !== runs[k - 1] || (p < pauses.length && pauses[p]!.start < ts[k]!)) out[k] = 1;
  }
  return out;
}

const WGS84_A = 6_378_137;
const WGS84_E2 = 0.00669437999014;
const RAD = Math.PI / 180;

/** The distance (m) between two positions on the WGS-84 ellipsoid, in the tangent plane at their mean latitude (module comment). */
export function stepDistance(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const phi = ((lat1 + lat2) / 2) * RAD;
  const sin = Math.sin(phi);
  const w2 = 1 - WGS84_E2 * sin * sin;
  const w = Math.sqrt(w2);
  const m = (WGS84_A * (1 - WGS84_E2)) / (w2 * w);
  const n = WGS84_A / w;
  let dLon = lon2 - lon1;
  if (dLon > 180) dLon -= 360;
  else if (dLon < -180) dLon += 360;
  const dy = m * (lat2 - lat1) * RAD;
  const dx = n * Math.cos(phi) * dLon * RAD;
  return Math.sqrt(dx * dx + dy * dy);
}

/** Cumulative distance along the positioned points (NaN before the first), not across a paused step. */
function geodesicDistance(lat: Float64Array, lon: Float64Array, paused: Uint8Array): Float64Array {
  const out = new Float64Array(lat.length).fill(Number.NaN);
  let total = Number.NaN;
  let prev = -1;
  for (let k = 0; k < lat.length; k++) {
    if (Number.isNaN(lat[k]!) || Number.isNaN(lon[k]!)) continue;
    if (prev < 0) total = 0;
    else {
      let crossed = false;
      for (let j = prev + 1; j <= k && !crossed; j++) crossed = paused[j] === 1;
      if (!crossed) total += stepDistance(lat[prev]!, lon[prev]!, lat[k]!, lon[k]!);
    }
    out[k] = total;
    prev = k;
  }
  return out;
}

/** Each point's speed: the distance since the previous point over the time between them (module comment). */
function speedFromDistance(ts: Float64Array, distance: Float64Array, paused: Uint8Array): Float64Array {
  const out = new Float64Array(ts.length).fill(Number.NaN);
  for (let k = 1; k < ts.length; k++) {
    const dt = (ts[k]! - ts[k - 1]!) / 1000;
    const dd = distance[k]! - distance[k - 1]!;
    if (paused[k] || !(dt > 0) || dt > MAX_FILL_SECONDS || !(dd >= 0)) continue;
    out[k] = dd / dt;
  }
  return out;
}
