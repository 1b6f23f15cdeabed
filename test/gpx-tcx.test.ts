import test from 'ava';
import { parseGpx, sportFromType } from '../engine/ingest/gpx.ts';
import { parseTcx } from '../engine/ingest/tcx.ts';
import { parseTime, stepDistance } from '../engine/ingest/track.ts';
import fc from 'fast-check';
import { parseInstant } from '../lib/time.ts';
import { MAX_XML_DEPTH, readXml, rootElement } from '../engine/ingest/xml.ts';
import { sniff } from '../engine/ingest/sniff.ts';
import { IngestError, type Recording } from '../engine/ingest/recording.ts';
import { ingestFile } from '../engine/ingest/ingest.ts';
import { buildRideGpx, buildRideTcx } from './helpers/synthetic-tracks.ts';

/**
 * The GPX and TCX readers (engine/ingest/gpx.ts, tcx.ts, track.ts) and their XML layer (xml.ts) on
 * small built files: each layout the real fixtures lack (test/tracks-upload.test.ts reads those),
 * and the XML attacks.
 */

const bytes = (text: string) => new TextEncoder().encode(text);
const T0 = Date.parse('2024-05-01T10:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();

function gpx(body: string, root = 'version="1.1" creator="Test GPS" xmlns="http://www.topografix.com/GPX/1/1"'): Uint8Array {
  return bytes(`<?xml version="1.0" encoding="UTF-8"?>\n<gpx ${root}>${body}</gpx>`);
}
function trkpt(at: number, extensions = '', lat = 45, lon = 7): string {
  return `<trkpt lat="${lat}" lon="${lon}"><ele>100</ele><time>${iso(at)}</time>${extensions ? `<extensions>${extensions}</extensions>` : ''}</trkpt>`;
}
/** `n` points one second apart from `from`, moving north ~5 m/s. */
function segment(from: number, n: number, extensions = ''): string {
  return `<trkseg>${Array.from({ length: n }, (_, i) => trkpt(from + i * 1000, extensions, 45 + (from - T0 + i * 1000) * 4.5e-8)).join('')}</trkseg>`;
}

function refusal(t: import('ava').ExecutionContext, fn: () => unknown, code: string, message?: RegExp) {
  const error = t.throws(fn, { instanceOf: IngestError });
  t.is(error?.code, code);
  if (message) t.regex(error!.message, message);
}

// ─── GPX ─────────────────────────────────────────────────────────────────────────────────────────

test('GPX 1.1: time, position, elevation; TrackPointExtension under any prefix or none; bare power, PowerInWatts, gpxdata', (t) => {
  const exts = [
    '<gpxtpx:TrackPointExtension><gpxtpx:hr>140</gpxtpx:hr><gpxtpx:cad>90</gpxtpx:cad><gpxtpx:atemp>21</gpxtpx:atemp></gpxtpx:TrackPointExtension><power>250</power>',
    '<ns3:TrackPointExtension><ns3:hr>141</ns3:hr><ns3:cad>91</ns3:cad><ns3:speed>5.5</ns3:speed></ns3:TrackPointExtension><gpxpx:PowerInWatts>251</gpxpx:PowerInWatts>',
    '<TrackPointExtension><hr>142</hr></TrackPointExtension><gpxdata:cadence>92</gpxdata:cadence><gpxdata:temp>22</gpxdata:temp>',
  ];
  const body = `<trk><type>Ride</type><trkseg>${exts.map((e, i) => trkpt(T0 + i * 1000, e)).join('')}</trkseg></trk>`;
  const [rec] = parseGpx(gpx(body));
  t.is(rec!.sport, 'cycling');
  t.deepEqual(rec!.devices, ['Test GPS']);
  t.deepEqual([...rec!.timestamps], [T0, T0 + 1000, T0 + 2000]);
  t.deepEqual([...rec!.channels.heart_rate!], [140, 141, 142]);
  t.deepEqual([...rec!.channels.cadence!], [90, 91, 92]);
  t.deepEqual([...rec!.channels.power!], [250, 251, Number.NaN]);
  t.deepEqual([...rec!.channels.temperature!], [21, Number.NaN, 22]);
  t.deepEqual([...rec!.channels.speed!], [Number.NaN, 5.5, Number.NaN], "the file's own speed, not one derived");
  t.deepEqual([...rec!.channels.altitude!], [100, 100, 100]);
  t.deepEqual([...rec!.channels.latitude!], [45, 45, 45]);
});

test('GPX: heart rate written twice per point (bare <heartrate> and ns3:hr) is one value per point', (t) => {
  const ext = (hr: number) => `<heartrate>${hr}</heartrate><ns3:TrackPointExtension><ns3:hr>${hr}</ns3:hr></ns3:TrackPointExtension>`;
  const [rec] = parseGpx(gpx(`<trk><trkseg>${trkpt(T0, ext(120))}${trkpt(T0 + 1000, ext(121))}</trkseg></trk>`));
  t.deepEqual([...rec!.channels.heart_rate!], [120, 121]);
  t.is(rec!.timestamps.length, 2);
});

test('GPX 1.0 without extensions; an hr outside a known extension parent is not read', (t) => {
  const body = `<trk><trkseg><trkpt lat="45" lon="7"><time>${iso(T0)}</time><speed>4.5</speed><foo><hr>99</hr></foo><extensions><x:meta><x:time>1999-01-01T00:00:00Z</x:time></x:meta></extensions></trkpt>${trkpt(T0 + 1000)}</trkseg></trk>`;
  const [rec] = parseGpx(gpx(body, 'version="1.0" xmlns="http://www.topografix.com/GPX/1/0"'));
  t.is(rec!.channels.heart_rate, undefined);
  t.is(rec!.channels.speed![0], 4.5, "GPX 1.0's own speed element");
  t.is(rec!.timestamps[0], T0, "a <time> of an extension is not the point's");
  t.deepEqual(rec!.devices, []);
  t.is(rec!.sport, 'generic');
});

test('GPX distance: the geodesic length of the track on WGS-84, and speed from it; gpxdata:distance when the file has one', (t) => {
  // 1° of latitude at the equator is 110,574 m on WGS-84, 1° of longitude 111,319.5 m.
  t.true(Math.abs(stepDistance(-0.5, 0, 0.5, 0) - 110_574) < 15);
  t.true(Math.abs(stepDistance(0, 0, 0, 1) - 111_319.5) < 1);
  t.true(Math.abs(stepDistance(0, 179.9995, 0, -179.9995) - 111.3) < 0.1, 'across the antimeridian');
  const [rec] = parseGpx(gpx(`<trk>${segment(T0, 11)}</trk>`));
  const d = rec!.channels.distance!;
  t.is(d[0], 0);
  t.true(Math.abs(d[10]! - 10 * 4.5e-5 * 111_132) < 1, `${d[10]} m`);
  t.true(Math.abs(rec!.channels.speed![5]! - 5) < 0.05);
  const withOwn = parseGpx(
    gpx(
      `<trk><trkseg>${[0, 1, 2].map((i) => trkpt(T0 + i * 1000, `<gpxdata:distance>${i * 7}</gpxdata:distance>`)).join('')}</trkseg></trk>`,
    ),
  );
  t.deepEqual([...withOwn[0]!.channels.distance!], [0, 7, 14]);
  t.deepEqual([...withOwn[0]!.channels.speed!], [Number.NaN, 7, 7]);
});

test('GPX segments: the time between segments is a pause, no distance across it; empty segments and tracks are ignored', (t) => {
  const body = `<trk><trkseg></trkseg>${segment(T0, 10)}<trkseg> </trkseg>${segment(T0 + 60_000, 10)}</trk><trk><trkseg/></trk>`;
  const recs = parseGpx(gpx(body));
  t.is(recs.length, 1);
  const rec = recs[0]!;
  t.deepEqual(rec.pauses, [{ start: T0 + 9000, end: T0 + 60_000 }]);
  const d = rec.channels.distance!;
  t.true(Math.abs(d[10]! - d[9]!) < 1e-9, 'no distance across the pause');
  t.true(Number.isNaN(rec.channels.speed![10]!));
});

test('GPX tracks: one activity for tracks on the same day, a new one on a later day or another sport', (t) => {
  const day = 86_400_000;
  const sameDay = parseGpx(gpx(`<trk>${segment(T0, 5)}</trk><trk>${segment(T0 + 3600_000, 5)}</trk>`));
  t.is(sameDay.length, 1);
  t.deepEqual(sameDay[0]!.pauses, [{ start: T0 + 4000, end: T0 + 3600_000 }]);
  const twoDays = parseGpx(gpx(`<trk>${segment(T0, 5)}</trk><trk>${segment(T0 + day, 5)}</trk>`));
  t.is(twoDays.length, 2);
  t.is(twoDays[1]!.start.getTime(), T0 + day);
  const twoSports = parseGpx(gpx(`<trk><type>Run</type>${segment(T0, 5)}</trk><trk><type>Ride</type>${segment(T0 + 600_000, 5)}</trk>`));
  t.deepEqual(
    twoSports.map((r) => r.sport),
    ['running', 'cycling'],
  );
  // Days are local when the times carry an offset: 23:30+02:00 and 00:30+02:00 the next day are two days in local time.
  const late = Date.parse('2024-05-01T21:30:00Z');
  const local = (ms: number) => `${new Date(ms + 7200_000).toISOString().slice(0, 19)}+02:00`;
  const pt = (ms: number) => `<trkpt lat="45" lon="7"><time>${local(ms)}</time></trkpt>`;
  const offsetDays = parseGpx(
    gpx(`<trk><trkseg>${pt(late)}${pt(late + 1000)}</trkseg></trk><trk><trkseg>${pt(late + 3600_000)}</trkseg></trk>`),
  );
  t.is(offsetDays.length, 2);
  t.is(offsetDays[0]!.utcOffsetSeconds, 7200);
  t.is(offsetDays[0]!.start.getTime(), late, 'instants with an offset are converted to UTC');
});

test('GPX time repeated or going backwards: the last of a repeated time kept, a backwards point left out, both counted', (t) => {
  const pts = [0, 1, 1, 2, 1.5, 0, 3].map((s, i) => trkpt(T0 + s * 1000, `<power>${i}</power>`)).join('');
  const [rec] = parseGpx(gpx(`<trk><trkseg>${pts}</trkseg></trk>`));
  t.deepEqual([...rec!.timestamps], [T0, T0 + 1000, T0 + 2000, T0 + 3000]);
  t.deepEqual([...rec!.channels.power!], [0, 2, 3, 6]);
  t.deepEqual(rec!.dropped, { duplicate_timestamp: 1, outside_session: 2 });
});

test('GPX sport from the track type: Strava numbers and names, sport strings, unknown → generic', (t) => {
  t.is(sportFromType('17'), 'cycling+stationary+virtual');
  t.is(sportFromType('9'), 'running');
  t.is(sportFromType('VirtualRide'), 'cycling+stationary+virtual');
  t.is(sportFromType('Trail Run'), 'running.trail');
  t.is(sportFromType('Running'), 'running');
  t.is(sportFromType('cycling.road'), 'cycling.road');
  t.is(sportFromType('Sport'), 'generic');
  t.is(sportFromType(undefined), 'generic');
});

test('GPX refusals: a route without times (no_timestamps), no track points, not GPX, empty', (t) => {
  refusal(t, () => parseGpx(gpx('<trk><trkseg><trkpt lat="1" lon="2"><ele>3</ele></trkpt></trkseg></trk>')), 'no_timestamps', /route/);
  refusal(t, () => parseGpx(gpx('<wpt lat="1" lon="2"><time>2024-05-01T10:00:00Z</time></wpt>')), 'no_activity');
  refusal(t, () => parseGpx(bytes('<kml></kml>')), 'invalid_gpx');
  refusal(t, () => parseGpx(new Uint8Array(0)), 'empty_file');
  refusal(t, () => parseGpx(bytes('<gpx><trk><trkseg>')), 'invalid_xml');
});

// ─── TCX ─────────────────────────────────────────────────────────────────────────────────────────

function tcx(activities: string, root = ''): Uint8Array {
  return bytes(
    `<?xml version="1.0" encoding="UTF-8"?><TrainingCenterDatabase xmlns="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2"${root}><Activities>${activities}</Activities></TrainingCenterDatabase>`,
  );
}
function tp(at: number, distance: number, extra = ''): string {
  return `<Trackpoint><Time>${iso(at)}</Time><DistanceMeters>${distance}</DistanceMeters><HeartRateBpm><Value>150</Value></HeartRateBpm><Cadence>80</Cadence>${extra}</Trackpoint>`;
}
function lap(start: number, seconds: number, inner: string, values = ''): string {
  return `<Lap StartTime="${iso(start)}"><TotalTimeSeconds>${seconds}</TotalTimeSeconds>${values}<Track>${inner}</Track></Lap>`;
}
const creator = '<Creator xsi:type="Device_t"><Name>Edge 530</Name></Creator>';

test('TCX: laps, trackpoints, TPX with a prefix or none, Creator; the laps totals as the device summary', (t) => {
  const pts1 = [0, 1, 2]
    .map((s) => tp(T0 + s * 1000, s * 8, `<Extensions><ns3:TPX><ns3:Speed>8</ns3:Speed><ns3:Watts>200</ns3:Watts></ns3:TPX></Extensions>`))
    .join('');
  const pts2 = [3, 4]
    .map((s) => tp(T0 + s * 1000, s * 8, `<Extensions><TPX><Speed>8</Speed><Watts>300</Watts></TPX></Extensions>`))
    .join('');
  const values = (d: number, hr: number, w: number) =>
    `<DistanceMeters>${d}</DistanceMeters><MaximumSpeed>9</MaximumSpeed><AverageHeartRateBpm><Value>${hr}</Value></AverageHeartRateBpm><MaximumHeartRateBpm><Value>${hr + 10}</Value></MaximumHeartRateBpm><Cadence>75</Cadence><Extensions><LX><AvgWatts>${w}</AvgWatts><MaxWatts>${w + 50}</MaxWatts></LX></Extensions>`;
  const file = tcx(
    `<Activity Sport="Biking"><Id>${iso(T0)}</Id>${lap(T0, 3, pts1, values(24, 140, 200))}${lap(T0 + 3000, 1, pts2, values(8, 160, 300))}${creator}</Activity>`,
  );
  const [rec] = parseTcx(file);
  t.is(rec!.sport, 'cycling');
  t.deepEqual(rec!.devices, ['Edge 530']);
  t.deepEqual([...rec!.channels.power!], [200, 200, 200, 300, 300]);
  t.deepEqual([...rec!.channels.speed!], [8, 8, 8, 8, 8]);
  t.deepEqual([...rec!.channels.distance!], [0, 8, 16, 24, 32]);
  t.deepEqual(
    rec!.laps.map((l) => [l.start.getTime() - T0, l.end.getTime() - T0]),
    [
      [0, 3000],
      [3000, 4000],
    ],
  );
  t.deepEqual(rec!.deviceSummary, {
    total_timer_time: 4,
    total_distance: 32,
    max_speed: 9,
    avg_heart_rate: 145,
    max_heart_rate: 170,
    avg_power: 225,
    max_power: 350,
    avg_cadence: 75,
  });
  // Garmin Connect writes each lap's highest cadence in Lap/Cadence: equal to its trackpoints' maximum, it is max_cadence.
  const maxed = tcx(`<Activity Sport="Biking">${lap(T0, 2, tp(T0, 0) + tp(T0 + 1000, 5), '<Cadence>80</Cadence>')}</Activity>`);
  t.like(parseTcx(maxed)[0]!.deviceSummary, { max_cadence: 80 });
  t.is(parseTcx(maxed)[0]!.deviceSummary!.avg_cadence, undefined);
});

test('TCX sport: case-insensitive; Other and unknown sports are generic; the root creator attribute is the device without <Creator>', (t) => {
  const act = (sport: string) => `<Activity Sport="${sport}"><Id>${iso(T0)}</Id>${lap(T0, 2, tp(T0, 0) + tp(T0 + 1000, 3))}</Activity>`;
  const sports = parseTcx(tcx(act('running') + act('BIKING') + act('Other') + act('Skydiving'), ' creator="runtastic"'));
  t.deepEqual(
    sports.map((r) => r.sport),
    ['running', 'cycling', 'generic', 'generic'],
  );
  t.deepEqual(sports[0]!.devices, ['runtastic']);
});

test('TCX: laps without trackpoints are laps and count in the device summary; an activity with none at all is no activity', (t) => {
  const empty = `<Lap StartTime="${iso(T0 + 5000)}"><TotalTimeSeconds>5</TotalTimeSeconds><DistanceMeters>20</DistanceMeters></Lap>`;
  const [rec] = parseTcx(
    tcx(
      `<Activity Sport="Running">${lap(T0, 5, [0, 1, 2, 3, 4].map((s) => tp(T0 + s * 1000, s * 4)).join(''), '<DistanceMeters>16</DistanceMeters>')}${empty}</Activity>`,
    ),
  );
  t.is(rec!.laps.length, 2);
  t.is(rec!.end.getTime(), T0 + 10_000, 'the last lap runs its TotalTimeSeconds');
  t.is(rec!.deviceSummary!.total_timer_time, 10);
  t.is(rec!.deviceSummary!.total_distance, 36);
  refusal(t, () => parseTcx(tcx(`<Activity Sport="Running">${empty}</Activity>`)), 'no_activity');
  refusal(t, () => parseTcx(bytes('<gpx/>')), 'invalid_tcx');
});

test('TCX MultiSportSession: one activity per leg', (t) => {
  const leg = (sport: string, at: number) =>
    `<Activity Sport="${sport}">${lap(at, 2, tp(at, 0) + tp(at + 1000, 5) + tp(at + 2000, 10))}</Activity>`;
  const file = bytes(
    `<TrainingCenterDatabase><MultiSportSession><Id>${iso(T0)}</Id><FirstSport>${leg('Running', T0)}</FirstSport><NextSport><Transition><TotalTimeSeconds>60</TotalTimeSeconds></Transition>${leg('Biking', T0 + 70_000)}</NextSport><NextSport>${leg('Running', T0 + 200_000)}</NextSport></MultiSportSession></TrainingCenterDatabase>`,
  );
  const recs = parseTcx(file);
  t.deepEqual(
    recs.map((r) => [r.sport, r.start.getTime() - T0]),
    [
      ['running', 0],
      ['cycling', 70_000],
      ['running', 200_000],
    ],
  );
});

test('TCX pauses: the gaps a lap timer says were stopped, longest first; a smart-recording gap in a running lap is not one', (t) => {
  // Lap 1: 100 s span, 70 s on the timer: the 30 s gap is the pause, the 10 s gap is not.
  const times1 = [0, 1, 2, 12, 13, 14, 44, ...Array.from({ length: 56 }, (_, i) => 45 + i)];
  const lap1 = lap(T0, 70, times1.map((s) => tp(T0 + s * 1000, s)).join(''));
  // Lap 2: its fractional start; 50 s span, 50 s timer: its 20 s gap stays running.
  const start2 = T0 + 100_000;
  const times2 = [0, 1, 21, 22, ...Array.from({ length: 27 }, (_, i) => 23 + i)];
  const lap2 = lap(start2, 50, times2.map((s) => tp(start2 + s * 1000 + 250, s)).join(''));
  const [rec] = parseTcx(tcx(`<Activity Sport="Running">${lap1}${lap2}</Activity>`));
  t.deepEqual(rec!.pauses, [{ start: T0 + 14_000, end: T0 + 44_000 }]);
  t.is(rec!.timestamps[times1.length]! - T0, 100_250, 'fractional-second times');
});

// ─── XML and its attacks ─────────────────────────────────────────────────────────────────────────

test('an external entity is never read: the file fails (a DTD is refused) and no value holds /etc/passwd', (t) => {
  const xxe = `<?xml version="1.0"?><!DOCTYPE gpx [<!ENTITY e SYSTEM "file:///etc/passwd">]><gpx><trk><name>&e;</name><trkseg>${trkpt(T0)}</trkseg></trk></gpx>`;
  refusal(t, () => parseGpx(bytes(xxe)), 'invalid_xml', /DOCTYPE/);
  // Without the DTD, the reference is an undefined entity: malformed, never expanded.
  refusal(
    t,
    () => parseGpx(bytes(`<gpx><trk><type>&e;</type><trkseg>${trkpt(T0)}</trkseg></trk></gpx>`)),
    'invalid_xml',
    /undefined entity/,
  );
  const tcxXxe = `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><TrainingCenterDatabase><Activities><Activity Sport="Running">${lap(T0, 1, tp(T0, 0))}<Creator><Name>&e;</Name></Creator></Activity></Activities></TrainingCenterDatabase>`;
  refusal(t, () => parseTcx(bytes(tcxXxe)), 'invalid_xml');
});

test('billion laughs: refused at once, nothing expanded, memory flat', (t) => {
  const entities = [
    '<!ENTITY lol "lol">',
    ...Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i ? i : ''};`.repeat(10)}">`),
  ];
  const bomb = bytes(`<?xml version="1.0"?><!DOCTYPE lolz [${entities.join('')}]><gpx><trk><name>&lol9;</name></trk></gpx>`);
  const before = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  refusal(t, () => parseGpx(bomb), 'invalid_xml');
  t.true(performance.now() - t0 < 100, `${performance.now() - t0} ms`);
  t.true(process.memoryUsage().heapUsed - before < 50 * 1024 * 1024);
  // The same without a DOCTYPE the parser would see: an undefined entity, not an expansion.
  refusal(t, () => parseTcx(bytes('<TrainingCenterDatabase>&lol9;</TrainingCenterDatabase>')), 'invalid_xml', /undefined entity/);
});

test('nesting: 50 levels (and 100,000) refused as xml_too_deep; the depth real files use is read', (t) => {
  const nest = (n: number) => `<gpx>${'<a>'.repeat(n - 1)}${'</a>'.repeat(n - 1)}</gpx>`;
  refusal(t, () => parseGpx(bytes(nest(50))), 'xml_too_deep', /32 levels/);
  const t0 = performance.now();
  refusal(t, () => parseGpx(bytes(nest(100_000))), 'xml_too_deep');
  t.true(performance.now() - t0 < 500);
  refusal(t, () => parseGpx(bytes(nest(MAX_XML_DEPTH))), 'no_activity', undefined);
  t.is(MAX_XML_DEPTH, 32);
});

test('the XML layer: local names whatever the prefix, element text, root detection after a BOM, declaration and comments', (t) => {
  const seen: string[] = [];
  readXml(bytes('\uFEFF<?xml version="1.0"?><a:root x:attr="1"><b:leaf> 5 </b:leaf><c/></a:root>'), {
    open: (name, attributes) => seen.push(`<${name}${attributes['attr'] ? ` attr=${attributes['attr']}` : ''}>`),
    close: (name, text, path) => seen.push(`</${name} "${text}" ${path.join('/')}>`),
  });
  t.deepEqual(seen, ['<root attr=1>', '<leaf>', '</leaf "5" root/leaf>', '<c>', '</c "" root/c>', '</root "" root>']);
  t.is(rootElement('\uFEFF<?xml version="1.0"?>\n<!-- a comment -->\n<?pi x?><ns:TrainingCenterDatabase>'), 'TrainingCenterDatabase');
  t.is(rootElement('<!DOCTYPE html><html>'), undefined);
});

test('sniff: GPX and TCX by their root element whatever the name; other XML refused with its root named', (t) => {
  t.deepEqual(sniff('ride.xml', gpx('')), { format: 'gpx' });
  t.deepEqual(sniff('ride.bin', tcx('')), { format: 'tcx' });
  t.deepEqual(sniff('ride.gpx', bytes('<?xml version="1.0"?>\n<!-- exported -->\n<gpx/>')), { format: 'gpx' });
  const kml = sniff('ride.gpx', bytes('<?xml version="1.0"?><kml/>'));
  t.true('unsupported' in kml && /root element <kml>, neither GPX/.test(kml.unsupported));
  const html = sniff('page.tcx', bytes('<!DOCTYPE html><html><body></body></html>'));
  t.true('unsupported' in html && /XML or HTML/.test(html.unsupported));
});

test('every reader hands a Recording the ingest can use: ascending timestamps, aligned channels', (t) => {
  const recs: Recording[] = [
    ...parseGpx(gpx(`<trk>${segment(T0, 20)}</trk>`)),
    ...parseTcx(tcx(`<Activity Sport="Running">${lap(T0, 3, tp(T0, 0) + tp(T0 + 1000, 3) + tp(T0 + 2000, 6))}</Activity>`)),
  ];
  for (const rec of recs) {
    for (let k = 1; k < rec.timestamps.length; k++) t.true(rec.timestamps[k]! > rec.timestamps[k - 1]!);
    for (const values of Object.values(rec.channels)) t.is(values!.length, rec.timestamps.length);
  }
});

test('a synthetic ride as TCX agrees with its laps within 1 %, and as GPX its geodesic distance with the TCX one', async (t) => {
  const spec = { start: new Date('2025-03-01T08:00:00Z'), seconds: 3600, seed: 7 };
  const tcxResult = await ingestFile({ format: 'tcx', bytes: bytes(buildRideTcx(spec)), sport: null });
  const gpxResult = await ingestFile({ format: 'gpx', bytes: bytes(buildRideGpx(spec)), sport: null });
  if (!tcxResult.ok || !gpxResult.ok) return t.fail(JSON.stringify([tcxResult, gpxResult]));
  const [fromTcx] = tcxResult.activities;
  const [fromGpx] = gpxResult.activities;
  const device = fromTcx!.deviceSummary!;
  const close = (ours: number | undefined, theirs: number | undefined, what: string) =>
    t.true(ours !== undefined && theirs !== undefined && Math.abs(ours - theirs) <= 0.01 * theirs, `${what}: ${ours} vs ${theirs}`);
  t.is(fromTcx!.laps.length, 6);
  t.deepEqual(fromTcx!.devices, ['Edge 530']);
  close(fromTcx!.timerSeconds, device.total_timer_time, 'timer');
  close(fromTcx!.distance ?? undefined, device.total_distance, 'distance');
  close(fromTcx!.summary.heart_rate?.mean, device.avg_heart_rate, 'heart rate');
  close(fromTcx!.summary.power?.mean, device.avg_power, 'power');
  t.is(fromGpx!.sport, 'cycling');
  close(fromGpx!.distance ?? undefined, device.total_distance, 'GPX geodesic distance beside the TCX DistanceMeters');
  close(fromGpx!.summary.power?.mean, device.avg_power, 'GPX power');
});

test("parseTime's fast path for `…Z` times gives parseInstant's instants, and refuses what it refuses", (t) => {
  const same = (text: string) => {
    const fast = parseTime(text);
    const plain = parseInstant(text);
    return plain.ok ? fast?.t === plain.t && fast.offset === undefined : fast === undefined;
  };
  for (const text of [
    '2024-02-29T23:59:59.5Z',
    '2023-02-29T10:00:00Z',
    '2024-13-01T00:00:00Z',
    '2024-03-01T24:00:00Z',
    '2024-03-01T08:60:00Z',
    '2024-03-01T08:00:60Z',
    '9999-12-31T23:59:59.999Z',
    '0001-01-01T00:00:00Z',
    '2024-03-01T08:00:00.123456789Z',
  ])
    t.true(same(text), text);
  t.is(parseTime('2024-03-01T08:00:00+01:00')?.offset, 3600);
  fc.assert(
    fc.property(fc.integer({ min: Date.UTC(1970, 0, 1), max: Date.UTC(2100, 0, 1) }), fc.boolean(), (ms, whole) => {
      const iso = new Date(ms).toISOString();
      return same(whole ? iso.replace(/\.\d+Z$/, 'Z') : iso);
    }),
    { numRuns: 20_000 },
  );
});

test('GPX and TCX points without a valid time are left out and counted (no_time), in the activity they lie in', (t) => {
  const untimed = '<trkpt lat="45" lon="7"><ele>100</ele><extensions><power>300</power></extensions></trkpt>';
  const badTime = '<trkpt lat="45" lon="7"><ele>100</ele><time>yesterday</time></trkpt>';
  const pts = [trkpt(T0), untimed, trkpt(T0 + 1000), badTime, trkpt(T0 + 2000), untimed].join('');
  const [rec] = parseGpx(gpx(`<trk><trkseg>${untimed}${pts}</trkseg></trk>`));
  t.deepEqual([...rec!.timestamps], [T0, T0 + 1000, T0 + 2000]);
  t.deepEqual(rec!.dropped, { no_time: 4 });
  t.false([...(rec!.channels.power ?? [])].includes(300), 'no value of an untimed point is kept');

  // Two tracks on different days: each counts its own.
  const day = 86_400_000;
  const two = parseGpx(
    gpx(
      `<trk><trkseg>${trkpt(T0)}${untimed}${trkpt(T0 + 1000)}</trkseg></trk><trk><trkseg>${untimed}${untimed}${trkpt(T0 + day)}${trkpt(T0 + day + 1000)}</trkseg></trk>`,
    ),
  );
  t.deepEqual(
    two.map((r) => r.dropped),
    [{ no_time: 1 }, { no_time: 2 }],
  );

  // A TCX trackpoint without <Time>.
  const [lapped] = parseTcx(
    tcx(
      `<Activity Sport="Biking"><Id>${iso(T0)}</Id>${lap(T0, 3, `${tp(T0, 0)}<Trackpoint><DistanceMeters>5</DistanceMeters></Trackpoint>${tp(T0 + 1000, 10)}${tp(T0 + 2000, 20)}`)}</Activity>`,
    ),
  );
  t.deepEqual(lapped!.dropped, { no_time: 1 });
});
