/**
 * TCX (Garmin Training Center Database v2) activity files → Recordings (engine/ingest/recording.ts),
 * read by the streaming XML layer (engine/ingest/xml.ts); distance, speed, time and ordering rules
 * are engine/ingest/track.ts's. Elements are matched by local name, with any prefix or none.
 *
 * **Activities.** Each `Activity` element is one activity, wherever it lies: under `Activities`, or
 * as a leg of a `MultiSportSession` (`FirstSport`/`NextSport`), which so gives one activity per leg.
 * An Activity without any trackpoint with a time gives none; a file with none at all is `no_activity`.
 * Its sport is its `Sport` attribute, case-insensitively: Biking → cycling, Running → running,
 * Other and anything else → generic (which the upload's sport field replaces).
 * Its devices: its `Creator`'s `Name`, else the root element's `creator` attribute (Runtastic).
 *
 * **Trackpoints.** `Time`, `Position` (LatitudeDegrees, LongitudeDegrees), `AltitudeMeters`,
 * `DistanceMeters` (cumulative), `HeartRateBpm/Value`, `Cadence`, and under `Extensions`/`TPX`
 * (ActivityExtension v2) `Speed`, `Watts`, `RunCadence`.
 *
 * **Laps.** Each `Lap` (StartTime) is a lap of the activity, with or without trackpoints. It runs
 * from its StartTime to the next lap's; the last one to its StartTime + TotalTimeSeconds or its last
 * point, whichever is later; the activity ends there.
 *
 * **Pauses.** TCX has no timer events; its laps' timers say how long each lap was stopped: its span
 * less its TotalTimeSeconds (when at least 0.5 s). Within each lap the gaps between consecutive
 * points (the gap from a lap's last point to the next lap's first included) are taken for its
 * pauses, longest first (of equal ones the later: the second a lap button takes), each while the
 * total stays within the stopped time (+ 1 %, at least 0.5 s), until it covers the stopped time
 * (to 0.5 s); the other gaps are filled or left empty as resampling does for a running timer. A Garmin watch that auto-paused (a new
 * `Track` after each restart, or one Track with gaps) so gets its own timer time; a smart-recording
 * gap (16 s without a point while riding) stays part of the ride. An activity whose laps have no
 * TotalTimeSeconds has its gaps over 90 s taken for pauses, as any file without timer events.
 *
 * **The device's own summary** (Recording.deviceSummary, shown beside ours in the data checks): over
 * the activity's laps, total_timer_time = Σ TotalTimeSeconds, total_distance = Σ DistanceMeters (when
 * above 0), max_speed = the highest MaximumSpeed, max_heart_rate = the highest MaximumHeartRateBpm,
 * max_power = the highest LX MaxWatts, and avg_heart_rate (AverageHeartRateBpm), avg_power (LX
 * AvgWatts), avg_cadence (Cadence, or LX AvgRunCadence) and avg_speed (LX AvgSpeed) each the mean
 * of the laps that have it, weighted by their TotalTimeSeconds — except that a Cadence equal to
 * every lap's highest trackpoint cadence is taken for what it is, max_cadence (Garmin Connect's
 * export writes the lap's maximum there); a value of 0 is left out (a sensor
 * the device did not have: Polar writes speed 0 for an indoor ride).
 *
 * Fails with IngestError: `empty_file`, `invalid_xml`/`xml_too_deep`/`xml_too_large` (xml.ts),
 * `invalid_tcx` (XML whose root is not TrainingCenterDatabase), `no_activity`, `too_many_samples`.
 */
import { IngestError, type DeviceSummary, type Pause, type Recording } from './recording.ts';
import { number, parseTime, Points, TRACK_CHANNELS, trackRecording, type TrackChannel } from './track.ts';
import { readXml } from './xml.ts';

const SPORTS: Record<string, string> = { biking: 'cycling', running: 'running' };

const POINT_VALUES: Record<string, TrackChannel> = {
  LatitudeDegrees: 'latitude',
  LongitudeDegrees: 'longitude',
  AltitudeMeters: 'altitude',
  DistanceMeters: 'distance',
  Cadence: 'cadence',
};
const TPX_VALUES: Record<string, TrackChannel> = { Speed: 'speed', Watts: 'power', RunCadence: 'cadence' };

type LapValue = 'total' | 'distance' | 'maxSpeed' | 'avgHr' | 'maxHr' | 'cadence' | 'avgWatts' | 'maxWatts' | 'avgSpeed' | 'runCadence';
const LAP_VALUES: Record<string, LapValue> = {
  TotalTimeSeconds: 'total',
  DistanceMeters: 'distance',
  MaximumSpeed: 'maxSpeed',
  Cadence: 'cadence',
};
const LX_VALUES: Record<string, LapValue> = {
  AvgSpeed: 'avgSpeed',
  AvgWatts: 'avgWatts',
  MaxWatts: 'maxWatts',
  AvgRunCadence: 'runCadence',
};

interface TcxLap extends Partial<Record<LapValue, number>> {
  start: number;
  /** Its trackpoints [from, to) in the file's Points. */
  from: number;
  to: number;
}

interface TcxActivity {
  sport: string;
  laps: TcxLap[];
  devices: string[];
  from: number;
  to: number;
}

/** Parse a TCX file into one Recording per Activity (and per MultiSportSession leg) with points. */
export function parseTcx(bytes: Uint8Array): Recording[] {
  if (bytes.byteLength === 0) throw new IngestError('empty_file', 'The file is empty (0 bytes).');
  const points = new Points();
  const activities: TcxActivity[] = [];
  let activity: TcxActivity | undefined;
  let lap: TcxLap | undefined;
  let inPoint = false;
  let root = '';
  let creator: string | undefined;
  readXml(bytes, {
    open(name, attributes, path) {
      if (path.length === 1) {
        root = name;
        creator = attributes['creator']?.trim() || undefined;
      } else if (name === 'Activity') {
        const sport = SPORTS[(attributes['Sport'] ?? '').trim().toLowerCase()] ?? 'generic';
        activity = { sport, laps: [], devices: [], from: points.count, to: points.count };
        points.breakRun();
      } else if (name === 'Lap' && activity) {
        const start = parseTime(attributes['StartTime'] ?? '');
        lap = start ? { start: start.t, from: points.count, to: points.count } : undefined;
        if (lap) activity.laps.push(lap);
      } else if (name === 'Trackpoint' && activity) {
        inPoint = true;
        points.begin();
      }
    },
    close(name, text, path) {
      const parent = path[path.length - 2];
      if (inPoint) {
        if (name === 'Trackpoint') {
          points.end();
          inPoint = false;
        } else if (name === 'Time' && parent === 'Trackpoint') points.setTime(text);
        else if (name === 'Value' && parent === 'HeartRateBpm') points.set('heart_rate', number(text));
        else if (parent === 'Trackpoint' || parent === 'Position') {
          const channel = POINT_VALUES[name];
          if (channel) points.set(channel, number(text));
        } else if (parent === 'TPX' || parent === 'Extensions') {
          const channel = TPX_VALUES[name];
          if (channel) points.set(channel, number(text));
        }
        return;
      }
      if (!activity) return;
      if (lap) readLapValue(lap, name, text, path);
      if (name === 'Name' && parent === 'Creator' && text !== '' && !activity.devices.includes(text)) activity.devices.push(text);
      else if (name === 'Lap' && lap) {
        lap.to = points.count;
        lap = undefined;
      } else if (name === 'Activity') {
        activity.to = points.count;
        activities.push(activity);
        activity = undefined;
      }
    },
  });
  if (root !== 'TrainingCenterDatabase')
    throw new IngestError('invalid_tcx', 'The file is XML but its root element is not <TrainingCenterDatabase>.');
  const recordings = activities
    .filter((a) => a.to > a.from)
    .map((a) => {
      const laps = lapSpans(a, points);
      return trackRecording(points, a.from, a.to, {
        sport: a.sport,
        devices: a.devices.length ? a.devices : creator ? [creator] : [],
        laps: laps.map((l) => ({ start: new Date(l.start), end: new Date(l.end) })),
        ...(laps.length ? { end: laps[laps.length - 1]!.end } : {}),
        ...(laps.length && laps.every((l) => l.total !== undefined) ? { pauses: (ts: Float64Array) => lapPauses(ts, laps) } : {}),
        deviceSummary: deviceSummary(a.laps, lapCadenceIsMax(a.laps, points)),
        utcOffsetSeconds: points.offset ?? 0,
      });
    });
  if (recordings.length === 0)
    throw new IngestError(
      'no_activity',
      'The TCX file has no Activity with a trackpoint (Activities/Activity/Lap/Track/Trackpoint with a Time).',
    );
  return recordings;
}

/** A lap's own value, when `name` is one directly under the Lap, its heart rate elements or its LX extension. */
function readLapValue(lap: TcxLap, name: string, text: string, path: readonly string[]) {
  const parent = path[path.length - 2];
  let key: LapValue | undefined;
  if (parent === 'Lap') key = LAP_VALUES[name];
  else if (parent === 'LX') key = LX_VALUES[name];
  else if (name === 'Value' && path[path.length - 3] === 'Lap')
    key = parent === 'AverageHeartRateBpm' ? 'avgHr' : parent === 'MaximumHeartRateBpm' ? 'maxHr' : undefined;
  const v = number(text);
  if (key && !Number.isNaN(v)) lap[key] = v;
}

interface LapSpan {
  start: number;
  end: number;
  total: number | undefined;
}

/** Each lap from its StartTime to the next one's; the last to StartTime + TotalTimeSeconds or its last point, whichever is later. */
function lapSpans(a: TcxActivity, points: Points): LapSpan[] {
  const laps = [...a.laps].sort((x, y) => x.start - y.start);
  let last = -Infinity;
  for (let k = a.from; k < a.to; k++) last = Math.max(last, points.times[k]!);
  return laps.map((l, i) => {
    const next = laps[i + 1]?.start;
    const end = next ?? Math.max(l.start + (l.total ?? 0) * 1000, last);
    return { start: l.start, end: Math.max(end, l.start), total: l.total };
  });
}

/** The pauses the laps' timers say there were (module comment), among the gaps between the points `ts` (ascending). */
export function lapPauses(ts: Float64Array, laps: readonly LapSpan[]): Pause[] {
  const pauses: Pause[] = [];
  let k = 0;
  for (const lap of laps) {
    const gaps: Pause[] = [];
    while (k < ts.length && ts[k]! < lap.start) k++;
    for (; k + 1 < ts.length && ts[k]! < lap.end; k++) gaps.push({ start: ts[k]!, end: ts[k + 1]! });
    const stopped = (lap.end - lap.start) / 1000 - (lap.total ?? 0);
    if (stopped < MIN_STOPPED_SECONDS) continue;
    // Longest first; of equal gaps the later (the step into the next lap, where a lap button's second goes).
    gaps.reverse().sort((x, y) => y.end - y.start - (x.end - x.start));
    let sum = 0;
    for (const gap of gaps) {
      if (sum >= stopped - MIN_STOPPED_SECONDS) break;
      const length = (gap.end - gap.start) / 1000;
      if (sum + length > stopped + Math.max(MIN_STOPPED_SECONDS, 0.01 * stopped)) continue;
      sum += length;
      pauses.push(gap);
    }
  }
  return pauses.sort((x, y) => x.start - y.start);
}

/** A lap stopped for less than this (s) was not stopped: its timer and its span agree to rounding. */
const MIN_STOPPED_SECONDS = 0.5;

/**
 * Whether the laps' Cadence is their highest cadence rather than their mean: Garmin Connect's TCX
 * export writes each lap's maximum there (136 rpm over trackpoints averaging 54). True when every
 * lap with a Cadence and cadence trackpoints has it equal to its trackpoints' highest (rounded),
 * and at least one does.
 */
function lapCadenceIsMax(laps: readonly TcxLap[], points: Points): boolean {
  const cadence = points.columns[TRACK_CHANNELS.indexOf('cadence')]!;
  let matched = 0;
  for (const lap of laps) {
    if (lap.cadence === undefined) continue;
    let max = -Infinity;
    for (let k = lap.from; k < lap.to; k++) if (cadence[k]! > max) max = cadence[k]!; // (NaN is never greater)
    if (max === -Infinity) continue;
    if (Math.round(max) !== Math.round(lap.cadence)) return false;
    matched++;
  }
  return matched > 0;
}

/** The laps' own totals as the device's summary (module comment). */
function deviceSummary(laps: readonly TcxLap[], cadenceIsMax: boolean): DeviceSummary {
  const out: DeviceSummary = {};
  const sum = (key: LapValue) => laps.reduce((s, l) => s + (l[key] ?? 0), 0);
  const max = (key: LapValue) => {
    const values = laps.map((l) => l[key]).filter((v): v is number => v !== undefined);
    return values.length ? Math.max(...values) : undefined;
  };
  const weighted = (key: LapValue) => {
    const with_ = laps.filter((l) => l[key] !== undefined && (l.total ?? 0) > 0);
    const time = with_.reduce((s, l) => s + l.total!, 0);
    return time > 0 ? with_.reduce((s, l) => s + l[key]! * l.total!, 0) / time : undefined;
  };
  if (laps.some((l) => l.total !== undefined)) out.total_timer_time = sum('total');
  if (sum('distance') > 0) out.total_distance = sum('distance');
  const values: [keyof DeviceSummary, number | undefined][] = [
    ['max_speed', max('maxSpeed')],
    ['avg_speed', weighted('avgSpeed')],
    ['avg_heart_rate', weighted('avgHr')],
    ['max_heart_rate', max('maxHr')],
    ['avg_power', weighted('avgWatts')],
    ['max_power', max('maxWatts')],
    cadenceIsMax ? ['max_cadence', max('cadence')] : ['avg_cadence', weighted('cadence') ?? weighted('runCadence')],
  ];
  // A 0 is a sensor the device did not have (Polar writes speed 0 for an indoor ride without one).
  for (const [key, v] of values) if (v !== undefined && v > 0) out[key] = v;
  return out;
}
