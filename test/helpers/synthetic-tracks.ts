import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { prng } from './prng.ts';
import { buildRideFit, type RideSpec, shuffledDays, simulateRide, writeZip } from './synthetic.ts';

/**
 * The synthetic rides of ./synthetic.ts written as GPX and TCX, in the layouts real exports use:
 * GPX 1.1 as Strava writes a Zwift ride (Garmin TrackPointExtension hr and cad, a bare `<power>`),
 * TCX as Garmin Connect exports an Edge ride (laps with their own totals, trackpoints with
 * DistanceMeters, HeartRateBpm, Cadence and the ActivityExtension v2 Speed and Watts). Times are UTC
 * (`Z`), one point a second. For tests and the history-import benchmark (bench/tracks.ts).
 */

const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

export function buildRideGpx(spec: RideSpec & { name?: string }): string {
  const samples = simulateRide(spec);
  const t0 = spec.start.getTime();
  const points = samples.map(
    (s, i) =>
      `<trkpt lat="${s.lat.toFixed(7)}" lon="${s.lon.toFixed(7)}"><ele>${s.altitude.toFixed(1)}</ele><time>${iso(t0 + i * 1000)}</time>` +
      `<extensions><power>${Math.round(s.power)}</power><gpxtpx:TrackPointExtension><gpxtpx:hr>${Math.round(s.heartRate)}</gpxtpx:hr>` +
      `<gpxtpx:cad>${Math.round(s.cadence)}</gpxtpx:cad></gpxtpx:TrackPointExtension></extensions></trkpt>`,
  );
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    '<gpx creator="StravaGPX" version="1.1" xmlns="http://www.topografix.com/GPX/1/1" ' +
    'xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v1" ' +
    'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n' +
    ` <metadata><time>${iso(t0)}</time></metadata>\n` +
    ` <trk><name>${spec.name ?? 'Synthetic ride'}</name><type>cycling</type><trkseg>\n${points.join('\n')}\n</trkseg></trk>\n</gpx>\n`
  );
}

export function buildRideTcx(spec: RideSpec): string {
  const samples = simulateRide(spec);
  const t0 = spec.start.getTime();
  const lapSeconds = spec.lapSeconds ?? 600;
  const laps: string[] = [];
  for (let from = 0; from < samples.length; from += lapSeconds) {
    const lap = samples.slice(from, Math.min(samples.length, from + lapSeconds));
    const sum = (f: (s: (typeof lap)[number]) => number) => lap.reduce((a, s) => a + f(s), 0);
    const points = lap.map(
      (s, k) =>
        `<Trackpoint><Time>${iso(t0 + (from + k) * 1000)}</Time><Position><LatitudeDegrees>${s.lat.toFixed(7)}</LatitudeDegrees>` +
        `<LongitudeDegrees>${s.lon.toFixed(7)}</LongitudeDegrees></Position><AltitudeMeters>${s.altitude.toFixed(1)}</AltitudeMeters>` +
        `<DistanceMeters>${s.distance.toFixed(2)}</DistanceMeters><HeartRateBpm><Value>${Math.round(s.heartRate)}</Value></HeartRateBpm>` +
        `<Cadence>${Math.round(s.cadence)}</Cadence><Extensions><ns3:TPX><ns3:Speed>${s.speed.toFixed(3)}</ns3:Speed>` +
        `<ns3:Watts>${Math.round(s.power)}</ns3:Watts></ns3:TPX></Extensions></Trackpoint>`,
    );
    const last = lap[lap.length - 1]!;
    const first = lap[0]!;
    laps.push(
      `<Lap StartTime="${iso(t0 + from * 1000)}"><TotalTimeSeconds>${lap.length}</TotalTimeSeconds>` +
        `<DistanceMeters>${(last.distance - first.distance).toFixed(2)}</DistanceMeters>` +
        `<MaximumSpeed>${Math.max(...lap.map((s) => s.speed)).toFixed(3)}</MaximumSpeed><Calories>${Math.round(sum((s) => s.power) / 1000)}</Calories>` +
        `<AverageHeartRateBpm><Value>${Math.round(sum((s) => s.heartRate) / lap.length)}</Value></AverageHeartRateBpm>` +
        `<MaximumHeartRateBpm><Value>${Math.round(Math.max(...lap.map((s) => s.heartRate)))}</Value></MaximumHeartRateBpm>` +
        `<Intensity>Active</Intensity><TriggerMethod>Manual</TriggerMethod><Track>\n${points.join('\n')}\n</Track>` +
        `<Extensions><ns3:LX><ns3:AvgWatts>${Math.round(sum((s) => s.power) / lap.length)}</ns3:AvgWatts></ns3:LX></Extensions></Lap>`,
    );
  }
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    '<TrainingCenterDatabase xmlns="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2" ' +
    'xmlns:ns3="http://www.garmin.com/xmlschemas/ActivityExtension/v2">\n' +
    ` <Activities><Activity Sport="Biking"><Id>${iso(t0)}</Id>\n${laps.join('\n')}\n` +
    '<Creator xsi:type="Device_t" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><Name>Edge 530</Name><UnitId>1</UnitId>' +
    '<ProductID>3121</ProductID></Creator></Activity></Activities>\n</TrainingCenterDatabase>\n'
  );
}

// ---------------------------------------------------------------------------------------------
// A Strava-style bulk export (the history-import benchmark's input), generated once and cached on disk.

export type ExportFormat = 'fit' | 'gpx' | 'tcx';

export interface ExportFile {
  /** Path inside the archive (`activities/<id>.<format>[.gz]`). */
  name: string;
  path: string;
  format: ExportFormat;
  gzip: boolean;
  start: string;
  seconds: number;
  /** The offset its local times are on: FIT rides are written at UTC+1, GPX and TCX in UTC. */
  utcOffsetSeconds: number;
  bytes: number;
}

export interface ExportHistory {
  dir: string;
  files: ExportFile[];
  /** The archive: `activities.csv` (Strava's columns) and `activities/`. */
  zip: string;
  generated: boolean;
  generateSeconds: number;
}

/** Strava's activities.csv header (the first columns; Strava repeats some names further on, as here `Distance`). */
const CSV_HEADER = [
  'Activity ID',
  'Activity Date',
  'Activity Name',
  'Activity Type',
  'Activity Description',
  'Elapsed Time',
  'Distance',
  'Max Heart Rate',
  'Relative Effort',
  'Commute',
  'Activity Private Note',
  'Activity Gear',
  'Filename',
  'Athlete Weight',
  'Bike Weight',
  'Elapsed Time',
  'Moving Time',
  'Distance',
];

/** Strava's `Activity Date`: `Mar 1, 2024, 8:05:09 AM`, in UTC. */
function stravaDate(d: Date): string {
  const month = d.toLocaleString('en-US', { month: 'short', timeZone: 'UTC' });
  const h = d.getUTCHours();
  const two = (n: number) => String(n).padStart(2, '0');
  return `${month} ${d.getUTCDate()}, ${d.getUTCFullYear()}, ${h % 12 || 12}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} ${h < 12 ? 'AM' : 'PM'}`;
}

const csvCell = (v: string) => (/[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);

/**
 * `count` rides of 30 min to 3 h on distinct days over `days`, as a platform's bulk export holds them: FIT 60 %,
 * GPX 25 %, TCX 15 % (drawn per file), every other file gzipped, named `activities/<id>.<ext>[.gz]` and listed in
 * `activities.csv` with a name, a description and a type. Cached under the OS temporary directory, keyed by this
 * module's source and the parameters.
 */
export async function syntheticExport(opts: {
  count: number;
  seed?: number;
  days?: number;
  onProgress?: (done: number) => void;
}): Promise<ExportHistory> {
  const seed = opts.seed ?? 20250101;
  const days = opts.days ?? 3650;
  if (opts.count > days) throw new Error(`${opts.count} rides on distinct days need more than ${days} days`);
  const key = createHash('sha256')
    .update(fs.readFileSync(new URL(import.meta.url)))
    .update(fs.readFileSync(new URL('./synthetic.ts', import.meta.url)))
    .update(JSON.stringify({ count: opts.count, seed, days }))
    .digest('hex')
    .slice(0, 16);
  const dir = path.join(os.tmpdir(), 'tds-bench', `export-${key}`);
  const manifest = path.join(dir, 'manifest.json');
  if (fs.existsSync(manifest))
    return {
      ...(JSON.parse(fs.readFileSync(manifest, 'utf8')) as Omit<ExportHistory, 'generated' | 'generateSeconds'>),
      generated: false,
      generateSeconds: 0,
    };
  const started = performance.now();
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(path.join(dir, 'activities'), { recursive: true });
  const rand = prng(seed);
  const dayList = shuffledDays(rand, days);
  const first = Date.UTC(2016, 0, 1);
  const files: ExportFile[] = [];
  const rows: string[] = [CSV_HEADER.join(',')];
  for (let i = 0; i < opts.count; i++) {
    const start = new Date(first + dayList[i]! * 86_400_000 + (6 * 3600 + Math.floor(rand() * 12 * 3600)) * 1000);
    const seconds = 1800 + Math.floor(rand() * (10_800 - 1800 + 1));
    const draw = rand();
    const format: ExportFormat = draw < 0.6 ? 'fit' : draw < 0.85 ? 'gpx' : 'tcx';
    const gzip = i % 2 === 1;
    const id = 1_000_000_000 + i;
    const spec = { start, seconds, seed: seed + i };
    const content = format === 'fit' ? buildRideFit(spec) : Buffer.from(format === 'gpx' ? buildRideGpx(spec) : buildRideTcx(spec));
    const bytes = gzip ? zlib.gzipSync(content, { level: 6 }) : content;
    const name = `activities/${id}.${format}${gzip ? '.gz' : ''}`;
    const file = path.join(dir, name);
    fs.writeFileSync(file, bytes);
    files.push({
      name,
      path: file,
      format,
      gzip,
      start: start.toISOString(),
      seconds,
      utcOffsetSeconds: format === 'fit' ? 3600 : 0,
      bytes: bytes.length,
    });
    const date = stravaDate(start);
    const cells = [
      String(id),
      date,
      `Ride ${i + 1}`,
      i % 10 === 0 ? 'VirtualRide' : 'Ride',
      `Synthetic ride ${i + 1}, "${format}"`,
      String(seconds),
      '0',
      '',
      '',
      'false',
      '',
      'Road bike',
      name,
      '',
      '',
      String(seconds),
      String(seconds),
      '0',
    ];
    rows.push(cells.map(csvCell).join(','));
    opts.onProgress?.(i + 1);
  }
  fs.writeFileSync(path.join(dir, 'activities.csv'), `${rows.join('\n')}\n`);
  const zipPath = path.join(dir, 'export.zip');
  // Already gzipped files are stored, as Strava's export stores them; the others deflated.
  await writeZip(zipPath, [
    { path: path.join(dir, 'activities.csv'), name: 'activities.csv', compress: true },
    ...files.map((f) => ({ path: f.path, name: f.name, compress: !f.gzip, mtime: new Date(f.start) })),
  ]);
  const result = { dir, files, zip: zipPath };
  fs.writeFileSync(manifest, JSON.stringify(result, null, 2));
  return { ...result, generated: true, generateSeconds: (performance.now() - started) / 1000 };
}
