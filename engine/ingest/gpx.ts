/**
 * GPX 1.0 and 1.1 activity files → Recordings (engine/ingest/recording.ts), read by the streaming
 * XML layer (engine/ingest/xml.ts); distance, speed, time and ordering rules are engine/ingest/track.ts's.
 *
 * What is read: each `trk`'s `type` and its `trkseg`s' `trkpt`s (`lat`/`lon` attributes, `ele`,
 * `time`, and GPX 1.0's `speed`), and in a trkpt's `extensions`, by local name whatever the prefix (or none), directly
 * under `extensions` or under a Garmin `TrackPointExtension` (v1 or v2) or `PowerExtension`:
 *   hr, heartrate → heart_rate       cad, cadence → cadence        atemp, temp → temperature
 *   speed → speed                    power, PowerInWatts → power   distance → distance (cumulative)
 * covering Garmin's TrackPointExtension, the bare `<power>` of Strava and Zwift exports, Garmin's
 * PowerExtension (`PowerInWatts`) and cluetrust's gpxdata (hr, cadence, temp, distance). A value
 * written twice for one point (a bare `<heartrate>` and `ns3:hr`) is one value (the last written).
 * Waypoints (`wpt`) and routes (`rte`) are not activities and are not read. The root's `creator`
 * is the device.
 *
 * **Segments and tracks.** Empty segments and tracks (no point with a time) are ignored. The
 * segments of a track are one activity; the time between one segment's last point and the next
 * one's first is a pause (Recording.pauses), as is a gap of more than 90 s between two points of a
 * segment (as for any file without timer events). Several tracks are one activity too — a GPS that
 * starts a track when it regains a fix, or a walk saved in parts, with the time between tracks a
 * pause — except that a track starts a new activity when
 *   - its first point lies on a later calendar day than the previous track's last point (days in
 *     the file's local time when its times carry a UTC offset, else in UTC), or
 *   - its `type` names another sport than the activity so far (the file says they differ).
 *
 * **Sport.** From the track's `type`: a Strava activity type, by number (Strava's GPX export) or
 * name (STRAVA_TYPES, which also holds a few common words: `Running`, `Biking`), or an
 * OpenSportTaxonomy string (lib/sports.ts) of a known sport (`cycling.road`, `running+stationary`). Anything else, or none, is `generic`, which the
 * upload's sport field replaces (engine/ingest/ingest.ts).
 *
 * Fails with IngestError: `empty_file`, `invalid_xml`/`xml_too_deep`/`xml_too_large` (xml.ts),
 * `no_timestamps` (track points but none with a `<time>`: a route or a planned course, not a
 * recording), `no_activity` (no track point at all), `too_many_samples`.
 */
import { normaliseSport, rootSport } from '../../lib/sports.ts';
import { IngestError, type Recording } from './recording.ts';
import { number, Points, trackRecording, type TrackChannel } from './track.ts';
import { readXml } from './xml.ts';

/** Strava activity types (its GPX export writes the number, its API and CSV the name) as OpenSportTaxonomy sports. */
export const STRAVA_TYPES: Record<string, string> = {
  '1': 'cycling',
  ride: 'cycling',
  '2': 'alpine_skiing',
  alpineski: 'alpine_skiing',
  '3': 'xc_skiing.backcountry',
  backcountryski: 'xc_skiing.backcountry',
  '4': 'hiking',
  hike: 'hiking',
  '5': 'ice_skating',
  iceskate: 'ice_skating',
  '6': 'inline_skating',
  inlineskate: 'inline_skating',
  '7': 'xc_skiing',
  nordicski: 'xc_skiing',
  '8': 'xc_skiing+roller',
  rollerski: 'xc_skiing+roller',
  '9': 'running',
  run: 'running',
  '10': 'walking',
  walk: 'walking',
  '11': 'training',
  workout: 'training',
  '12': 'snowboarding',
  snowboard: 'snowboarding',
  '16': 'swimming',
  swim: 'swimming',
  '17': 'cycling+stationary+virtual',
  virtualride: 'cycling+stationary+virtual',
  '18': 'cycling+electric',
  ebikeride: 'cycling+electric',
  virtualrun: 'running+stationary+virtual',
  trailrun: 'running.trail',
  mountainbikeride: 'cycling.mountain',
  gravelride: 'cycling.gravel',
  emountainbikeride: 'cycling.mountain+electric',
  rowing: 'rowing',
  virtualrow: 'rowing+stationary+virtual',
  kayaking: 'paddling.kayaking',
  canoeing: 'paddling.canoeing',
  standuppaddling: 'paddling.stand_up',
  biking: 'cycling',
  bike: 'cycling',
  cycling: 'cycling',
  running: 'running',
  walking: 'walking',
  hiking: 'hiking',
  swimming: 'swimming',
};

/** The sports a type may name directly as an OpenSportTaxonomy string (`cycling.road`), by their root. */
const KNOWN_ROOTS = new Set([...Object.values(STRAVA_TYPES).map((s) => rootSport(s)!), 'multisport', 'paddling', 'generic']);

/** A track's or activity's sport from its type or Sport text (module comment); `generic` when unknown. */
export function sportFromType(type: string | undefined): string {
  if (type === undefined || type.trim() === '') return 'generic';
  const key = type
    .trim()
    .toLowerCase()
    .replace(/[\s_-]+/g, '');
  const known = STRAVA_TYPES[key];
  if (known) return known;
  const sport = normaliseSport(type.trim());
  return sport !== undefined && KNOWN_ROOTS.has(rootSport(sport)!) ? sport : 'generic';
}

/** Extension element local names (lower-cased) → channels; read under EXTENSION_PARENTS only. */
const EXTENSION_VALUES: Record<string, TrackChannel> = {
  hr: 'heart_rate',
  heartrate: 'heart_rate',
  cad: 'cadence',
  cadence: 'cadence',
  atemp: 'temperature',
  temp: 'temperature',
  speed: 'speed',
  power: 'power',
  powerinwatts: 'power',
  distance: 'distance',
};
const EXTENSION_PARENTS = new Set(['extensions', 'trackpointextension', 'powerextension']);

interface Track {
  type: string | undefined;
  /** Its points [from, to) in the file's Points. */
  from: number;
  to: number;
}

/** Parse a GPX file into one Recording per activity (module comment). */
export function parseGpx(bytes: Uint8Array): Recording[] {
  if (bytes.byteLength === 0) throw new IngestError('empty_file', 'The file is empty (0 bytes).');
  const points = new Points();
  const tracks: Track[] = [];
  let creator: string | undefined;
  let track: Track | undefined;
  let inPoint = false;
  let isGpx = false;
  readXml(bytes, {
    open(name, attributes, path) {
      if (path.length === 1) {
        isGpx = name === 'gpx';
        creator = attributes['creator']?.trim() || undefined;
      } else if (name === 'trk' && path.length === 2) {
        track = { type: undefined, from: points.count, to: points.count };
      } else if (name === 'trkseg' && track) points.breakRun();
      else if (name === 'trkpt' && track) {
        inPoint = true;
        points.begin();
        points.set('latitude', number(attributes['lat'] ?? ''));
        points.set('longitude', number(attributes['lon'] ?? ''));
      }
    },
    close(name, text, path) {
      if (inPoint) {
        if (name === 'trkpt') {
          points.end();
          inPoint = false;
        } else if (path[path.length - 2] === 'trkpt') {
          if (name === 'time') points.setTime(text);
          else if (name === 'ele') points.set('altitude', number(text));
          else if (name === 'speed') points.set('speed', number(text)); // GPX 1.0's own element
        } else if (EXTENSION_PARENTS.has(path[path.length - 2]!.toLowerCase())) {
          const channel = EXTENSION_VALUES[name.toLowerCase()];
          if (channel) points.set(channel, number(text));
        }
      } else if (track && name === 'type' && path[path.length - 2] === 'trk') track.type = text;
      else if (track && name === 'trk') {
        track.to = points.count;
        tracks.push(track);
        track = undefined;
      }
    },
  });
  if (!isGpx) throw new IngestError('invalid_gpx', 'The file is XML but its root element is not <gpx>.');
  const timed = tracks.filter((t) => t.to > t.from);
  if (timed.length === 0) {
    if (points.untimed > 0)
      throw new IngestError(
        'no_timestamps',
        `The GPX file's ${points.untimed.toLocaleString('en-US')} track points have no <time>: it is a route or a course, not a recorded activity.`,
      );
    throw new IngestError(
      'no_activity',
      'The GPX file has no track points (<trk>/<trkseg>/<trkpt>); waypoints and routes are not activities.',
    );
  }
  const offset = points.offset ?? 0;
  return groupTracks(timed, points, offset).map((group) =>
    trackRecording(points, group.from, group.to, {
      sport: sportFromType(group.type),
      devices: creator ? [creator] : [],
      laps: [],
      utcOffsetSeconds: offset,
    }),
  );
}

/** Consecutive tracks as activities: a new one on a later day or another sport (module comment). */
function groupTracks(tracks: Track[], points: Points, offsetSeconds: number): Track[] {
  const day = (t: number) => Math.floor((t + offsetSeconds * 1000) / 86_400_000);
  const extreme = (tr: Track, pick: (a: number, b: number) => number) => {
    let v = points.times[tr.from]!;
    for (let k = tr.from + 1; k < tr.to; k++) v = pick(v, points.times[k]!);
    return v;
  };
  const firstTime = (tr: Track) => extreme(tr, Math.min);
  const lastTime = (tr: Track) => extreme(tr, Math.max);
  const groups: Track[] = [];
  for (const tr of tracks) {
    const group = groups[groups.length - 1];
    const sport = sportFromType(tr.type);
    const sameSport = !group || sport === 'generic' || sportFromType(group.type) === 'generic' || sport === sportFromType(group.type);
    if (group && sameSport && day(firstTime(tr)) <= day(lastTime(group))) {
      group.to = tr.to;
      group.type ??= tr.type;
    } else groups.push({ ...tr });
  }
  return groups;
}
