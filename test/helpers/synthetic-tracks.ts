import { simulateRide, type RideSpec } from './synthetic.ts';

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
