import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import fc from 'fast-check';
import { Decoder, Stream } from '@garmin/fitsdk';
import { recordedAt } from '../engine/ingest/peek.ts';
import { parseFit } from '../engine/ingest/fit.ts';
import { fixturesDir } from './helpers/fixtures.ts';
import { buildActivityFit, encodeFit, fitSeconds, MesgNum } from './helpers/fit-builder.ts';
import { FitWriter } from './helpers/fit-writer.ts';

const FIT_EPOCH_MS = Date.UTC(1989, 11, 31);
/** FIT date_time values below 0x10000000 are relative (seconds since power-on), not instants. */
const isAbsolute = (d: unknown): d is Date => d instanceof Date && d.getTime() >= FIT_EPOCH_MS + 0x10000000 * 1000;

/** What Garmin's own decoder says: file_id.time_created, else the first message timestamp, in file order. */
function reference(bytes: Uint8Array): Date | null {
  let first: Date | undefined;
  const { messages } = new Decoder(Stream.fromByteArray(bytes)).read({
    mesgListener: (_num: number, message: Record<string, unknown>) => {
      if (first === undefined && isAbsolute(message.timestamp)) first = message.timestamp;
    },
  } as Parameters<Decoder['read']>[0]);
  const created = messages.fileIdMesgs?.[0]?.timeCreated;
  if (isAbsolute(created)) return created;
  return first ?? null;
}

const fixtureFiles = () => {
  const dir = join(fixturesDir(), 'fit');
  return readdirSync(dir)
    .filter((f) => f.toLowerCase().endsWith('.fit'))
    .map((f) => ({ name: f, bytes: new Uint8Array(readFileSync(join(dir, f))) }));
};

test('every real-device fixture: the same instant as @garmin/fitsdk, to the second', (t) => {
  const files = fixtureFiles();
  t.true(files.length >= 10);
  for (const { name, bytes } of files) {
    const want = reference(bytes);
    const got = recordedAt(bytes, 'fit');
    t.truthy(want, name);
    t.is(got?.toISOString(), want?.toISOString(), name);
  }
});

test('truncated, garbage and non-FIT input give null', (t) => {
  for (const { name, bytes } of fixtureFiles()) {
    for (const cut of [0, 1, 11, 12, 13, 14, 20, Math.floor(bytes.length / 2), bytes.length - 3, bytes.length - 2, bytes.length - 1]) {
      t.is(recordedAt(bytes.subarray(0, cut), 'fit'), null, `${name} cut at ${cut}`);
    }
    // A damaged header: wrong signature, wrong header size, wrong header CRC.
    const damaged = (at: number) => {
      const copy = Uint8Array.from(bytes);
      copy[at] = copy[at]! ^ 0x5a;
      return copy;
    };
    t.is(recordedAt(damaged(0), 'fit'), null, `${name} header size`);
    t.is(recordedAt(damaged(9), 'fit'), null, `${name} signature`);
    if (bytes[0] === 14 && (bytes[12] !== 0 || bytes[13] !== 0)) t.is(recordedAt(damaged(2), 'fit'), null, `${name} header CRC`);
  }
  t.is(recordedAt(new Uint8Array(0), 'fit'), null);
  t.is(recordedAt(new TextEncoder().encode('timestamp,power\n2024-01-01T00:00:00Z,1\n'), 'fit'), null);
  // A valid header over garbage.
  const header = fixtureFiles()[0]!.bytes.subarray(0, 14);
  const garbage = new Uint8Array(4096).map((_, i) => (i * 73 + 11) & 0xff);
  const withGarbage = new Uint8Array(header.length + garbage.length);
  withGarbage.set(header);
  withGarbage.set(garbage, header.length);
  new DataView(withGarbage.buffer).setUint32(4, garbage.length - 2, true);
  withGarbage[12] = 0;
  withGarbage[13] = 0;
  t.is(recordedAt(withGarbage, 'fit'), null);

  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 512 }), fc.constantFrom('fit' as const, 'csv' as const), (bytes, format) => {
      const got = recordedAt(bytes, format);
      return got === null || (got instanceof Date && !Number.isNaN(got.getTime()));
    }),
    { numRuns: 2000 },
  );
  // Bytes flipped anywhere in a real file: never a throw, never an invalid Date.
  const real = fixtureFiles().find((f) => f.name === 'Garmin830_with_Stages.fit')!.bytes;
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.nat(real.length - 1), fc.integer({ min: 1, max: 255 })), { minLength: 1, maxLength: 8 }), (flips) => {
      const copy = Uint8Array.from(real);
      for (const [at, x] of flips) copy[at] = copy[at]! ^ x;
      const got = recordedAt(copy, 'fit');
      return got === null || !Number.isNaN(got.getTime());
    }),
    { numRuns: 500 },
  );
});

test('synthetic FIT (fitsdk encoder): without time_created, or with a relative one, the first timestamp', (t) => {
  const t0 = new Date('2024-03-05T06:07:08Z');
  const at = (s: number) => new Date(t0.getTime() + s * 1000);
  const withoutCreated = encodeFit([
    { mesgNum: MesgNum.FILE_ID, type: 'activity', manufacturer: 'garmin', product: 3122, serialNumber: 1 },
    { mesgNum: MesgNum.DEVICE_INFO, deviceIndex: 'creator', manufacturer: 'garmin' }, // no timestamp
    { mesgNum: MesgNum.EVENT, timestamp: at(3), event: 'timer', eventType: 'start' },
    { mesgNum: MesgNum.RECORD, timestamp: at(4), power: 100 },
  ]);
  t.is(recordedAt(withoutCreated, 'fit')?.toISOString(), at(3).toISOString());
  t.is(reference(withoutCreated)?.toISOString(), at(3).toISOString());

  const relativeCreated = encodeFit([
    {
      mesgNum: MesgNum.FILE_ID,
      type: 'activity',
      manufacturer: 'garmin',
      product: 3122,
      serialNumber: 1,
      timeCreated: new Date(FIT_EPOCH_MS + 1000 * 1000),
    },
    { mesgNum: MesgNum.RECORD, timestamp: new Date(FIT_EPOCH_MS + 5000 * 1000), power: 1 }, // relative too
    { mesgNum: MesgNum.RECORD, timestamp: at(10), power: 100 },
  ]);
  t.is(recordedAt(relativeCreated, 'fit')?.toISOString(), at(10).toISOString());
  t.is(reference(relativeCreated)?.toISOString(), at(10).toISOString());

  const noTime = encodeFit([{ mesgNum: MesgNum.FILE_ID, type: 'activity', manufacturer: 'garmin', product: 3122, serialNumber: 1 }]);
  t.is(recordedAt(noTime, 'fit'), null);

  // An activity with developer fields on its records (fitsdk writes the developer-flag definitions).
  const start = new Date('2023-07-01T05:00:00Z');
  const dev = buildActivityFit({
    sessions: [
      {
        sport: 'cycling',
        start,
        seconds: 30,
        developerFields: [
          { name: 'core_temperature', value: (i) => 37 + i / 100 },
          { name: 'SmO2', value: (i) => (i % 2 ? 60 : undefined) },
        ],
      },
    ],
  });
  t.is(recordedAt(dev, 'fit')?.toISOString(), start.toISOString());
  t.is(reference(dev)?.toISOString(), start.toISOString());
});

const le32 = (v: number) => [v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, v >>> 24];
const be32 = (v: number) => le32(v).reverse();

test('hand-written FIT: big-endian, developer fields, compressed timestamps, 12-byte header', (t) => {
  const created = fitSeconds(new Date('2022-02-02T02:02:02Z'));
  const later = fitSeconds(new Date('2022-02-02T03:00:00Z'));
  const UINT32 = 0x86;
  const UINT8 = 0x02;
  const ENUM = 0x00;

  // Big-endian file_id with time_created after a type field.
  const be = new FitWriter()
    .define(
      0,
      0,
      [
        [0, 1, ENUM],
        [4, 4, UINT32],
      ],
      { bigEndian: true },
    )
    .data(0, 4, ...be32(created))
    .finish();
  t.is(recordedAt(be, 'fit')?.toISOString(), '2022-02-02T02:02:02.000Z');
  t.is(reference(be)?.toISOString(), '2022-02-02T02:02:02.000Z');
  t.is(recordedAt(be.slice(0), 'fit')?.getTime(), recordedAt(be, 'fit')?.getTime());

  // file_id without time_created; records with developer fields and no timestamp; then a
  // big-endian event with one. Mis-sized developer data would derail everything after it.
  const dev = new FitWriter()
    .define(0, 0, [[0, 1, ENUM]])
    .data(0, 4)
    .define(1, 207, [
      [3, 1, UINT8],
      [0, 1, UINT8],
    ]) // developer_data_id: developer_data_index, application_id (1 byte)
    .data(1, 0, 1)
    .define(2, 20, [[3, 1, UINT8]], {
      developer: [
        [0, 3, 0],
        [1, 2, 0],
      ],
    })
    .data(2, 120, 0xaa, 0xbb, 0xcc, 0xdd, 0xee)
    .data(2, 121, 0x40, 0x41, 0x42, 0x43, 0x44)
    .define(
      3,
      21,
      [
        [253, 4, UINT32],
        [0, 1, ENUM],
      ],
      { bigEndian: true },
    )
    .data(3, ...be32(later), 0)
    .finish();
  t.is(recordedAt(dev, 'fit')?.toISOString(), '2022-02-02T03:00:00.000Z');

  // Compressed-timestamp records before and after the first explicit timestamp (12-byte header).
  const compressed = new FitWriter()
    .define(0, 0, [[0, 1, ENUM]])
    .data(0, 4)
    .define(1, 20, [[7, 2, 0x84]]) // record: power (uint16)
    .compressed(1, 3, 0xc8, 0x00) // relative to nothing yet: not an instant
    .compressed(1, 4, 0xc9, 0x00)
    .define(2, 20, [
      [253, 4, UINT32],
      [7, 2, 0x84],
    ])
    .data(2, ...le32(later), 0xca, 0x00)
    .compressed(1, (later + 1) & 0x1f, 0xcb, 0x00)
    .finish(12);
  t.is(recordedAt(compressed, 'fit')?.toISOString(), '2022-02-02T03:00:00.000Z');

  // An unknown local message type, or a definition running past the data: null.
  t.is(recordedAt(new FitWriter().data(5, 1, 2, 3).finish(), 'fit'), null);
  t.is(
    recordedAt(
      new FitWriter()
        .define(0, 0, [[4, 4, UINT32]])
        .data(0, 1)
        .finish(),
      'fit',
    ),
    null,
  );
  t.is(recordedAt(new FitWriter().define(0, 0, [[4, 4, UINT32]]).finish(), 'fit'), null);
  // An invalid time_created (0xFFFFFFFF) and no timestamp anywhere: null.
  t.is(
    recordedAt(
      new FitWriter()
        .define(0, 0, [[4, 4, UINT32]])
        .data(0, ...le32(0xffffffff))
        .finish(),
      'fit',
    ),
    null,
  );
});

const csv = (text: string) => new TextEncoder().encode(text);
const iso = (d: Date | null) => d?.toISOString() ?? null;

test("CSV: the first data row's timestamp, with an offset, else null", (t) => {
  t.is(iso(recordedAt(csv('timestamp,power\n2024-05-01T06:00:00Z,200\n2024-05-01T06:00:01Z,201\n'), 'csv')), '2024-05-01T06:00:00.000Z');
  t.is(iso(recordedAt(csv('power,Timestamp ,hr\r\n200,2024-05-01T08:00:00+02:00,120\r\n'), 'csv')), '2024-05-01T06:00:00.000Z');
  t.is(
    iso(recordedAt(csv('\uFEFFtimestamp,power\n2024-05-01T06:00:00.250-0330,200'), 'csv')),
    '2024-05-01T09:30:00.250Z',
    'BOM, ±hhmm, fraction, no final newline',
  );
  t.is(
    iso(recordedAt(csv('"sport","time, local","timestamp"\n\n  \n"cycling","x, y"," 2024-05-01 06:00:00+01 "\n'), 'csv')),
    '2024-05-01T05:00:00.000Z',
    'quoted cells, blank lines, space separator',
  );
  t.is(
    iso(recordedAt(csv('note,timestamp\n"line one\nline two",2024-05-01T06:00:00z\n'), 'csv')),
    '2024-05-01T06:00:00.000Z',
    'a quoted newline',
  );
  t.is(iso(recordedAt(csv('timestamp\r2020-02-29T23:59:59Z\r'), 'csv')), '2020-02-29T23:59:59.000Z', 'CR line ends, leap day');

  t.is(recordedAt(csv('timestamp,power\n2024-05-01T06:00:00,200\n'), 'csv'), null, 'naive');
  t.is(recordedAt(csv('time,power\n2024-05-01T06:00:00Z,200\n'), 'csv'), null, 'no timestamp column');
  t.is(recordedAt(csv('timestamp,TIMESTAMP\n2024-05-01T06:00:00Z,2024-05-01T06:00:00Z\n'), 'csv'), null, 'duplicated column');
  t.is(recordedAt(csv('timestamp,power\n'), 'csv'), null, 'no data row');
  t.is(recordedAt(csv('timestamp,power\n,200\n'), 'csv'), null, 'empty cell');
  t.is(recordedAt(csv('power,timestamp\n200\n'), 'csv'), null, 'short row');
  t.is(recordedAt(csv('timestamp\n2023-02-29T00:00:00Z\n'), 'csv'), null, 'not a leap year');
  t.is(recordedAt(csv('timestamp\n2024-05-01T24:00:00Z\n'), 'csv'), null);
  t.is(recordedAt(csv('timestamp\n2024-05-01T06:00:00+15:00\n'), 'csv'), null, 'offset beyond ±14:00');
  t.is(recordedAt(csv('timestamp\n1714543200\n'), 'csv'), null, 'epoch seconds');
  t.is(recordedAt(csv(''), 'csv'), null);
  t.is(recordedAt(csv('timestamp\n"2024-05-01T06:00:00Z'), 'csv'), null, 'unterminated quote');
  t.is(recordedAt(csv(`timestamp,x\n2024-05-01T06:00:00Z,${'y'.repeat(70_000)}\n`), 'csv'), null, 'first row beyond 64 KiB');
  t.is(
    iso(recordedAt(csv(`timestamp,x\n2024-05-01T06:00:00Z,1\n${'2024-05-01T06:00:01Z,1\n'.repeat(10_000)}`), 'csv')),
    '2024-05-01T06:00:00.000Z',
    'a long file',
  );
  t.is(recordedAt(fixtureFiles()[0]!.bytes, 'csv'), null, 'FIT bytes as CSV');
});

/** `bytes` behind a proxy that counts the reads of its elements (peek reads only by index and length). */
function countingReads(bytes: Uint8Array) {
  const read = { size: 0 };
  const proxy = new Proxy(bytes, {
    get(target, key) {
      if (typeof key === 'string' && /^\d+$/.test(key)) read.size++;
      const value = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { proxy, read };
}

test('peek is much cheaper than a full parse: it reads a small part of the file (biggest fixture; timings printed)', async (t) => {
  const biggest = fixtureFiles().sort((a, b) => b.bytes.length - a.bytes.length)[0]!;
  // The work counted, not timed: a full parse reads every byte (to check the file CRC, at least);
  // peek must find the answer in under 1% of them.
  const { proxy, read } = countingReads(biggest.bytes);
  const answer = recordedAt(proxy, 'fit');
  t.truthy(answer);
  t.deepEqual(answer, recordedAt(biggest.bytes, 'fit'));
  t.true(read.size * 100 < biggest.bytes.length, `at least 100× less to read: ${read.size} byte reads for ${biggest.bytes.length} bytes`);

  const time = (n: number, fn: () => unknown) => {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) fn();
    return (performance.now() - t0) / n;
  };
  time(200, () => recordedAt(biggest.bytes, 'fit'));
  const peek = time(5000, () => recordedAt(biggest.bytes, 'fit'));
  const fitsdk = time(3, () => new Decoder(Stream.fromByteArray(biggest.bytes)).read());
  const t0 = performance.now();
  await parseFit(biggest.bytes);
  const parser = performance.now() - t0;
  t.log(
    `${biggest.name} (${(biggest.bytes.length / 1024).toFixed(0)} KiB): peek made ${read.size} byte reads in ${(peek * 1000).toFixed(1)} µs, fitsdk Decoder ${fitsdk.toFixed(1)} ms, fit-file-parser (parseFit) ${parser.toFixed(1)} ms`,
  );
});

test('GPX and TCX: the first track point’s time, the activity’s Id or its first lap’s StartTime; a route without times is null', (t) => {
  const dir = join(fixturesDir(), 'tracks');
  const expected: Record<string, string | null> = {
    'amazfit_run_hr_twice.gpx': '2018-05-14T09:54:12.000Z',
    'gpsbabel_gpx10_8trk.gpx': '2010-08-05T14:23:59.000Z',
    'strava_export_zwift_ride_power.gpx': '2016-04-22T16:44:13.000Z',
    'strava_route_no_time.gpx': null,
    'suunto_movescount_gpxdata.gpx': '2014-01-16T18:48:44.340Z',
    'urbanbiker_android_ride_3seg.gpx': '2019-04-18T14:12:19.000Z',
    'garmin_edge1000_ride_power_3laps.tcx': '2015-05-31T16:58:41.000Z',
    'garmin_fr910xt_velodrome_power_7laps_nogps.tcx': '2017-08-26T15:42:53.000Z',
    'garmin_fr945_treadmill_runcadence_nogps.tcx': '2020-02-02T11:19:00.000Z',
    'polar_vantagev_indoor_bike_3laps_nogps.tcx': '2020-02-05T16:25:14.909Z',
    'runtastic_run_short.tcx': '2015-05-10T14:13:32.000Z',
  };
  const names = readdirSync(dir).filter((n) => /\.(gpx|tcx)$/.test(n));
  t.deepEqual(names.sort(), Object.keys(expected).sort());
  for (const name of names) {
    const format = name.endsWith('.gpx') ? 'gpx' : 'tcx';
    t.is(recordedAt(readFileSync(join(dir, name)), format)?.toISOString() ?? null, expected[name] ?? null, name);
  }
  const text = (s: string) => new TextEncoder().encode(s);
  // A namespace prefix; the metadata's time is not a track point's.
  t.is(
    recordedAt(
      text(
        '<g:gpx><g:metadata><g:time>2020-01-01T00:00:00Z</g:time></g:metadata><g:trk><g:trkseg><g:trkpt lat="1" lon="2"><g:time>2021-02-03T04:05:06+01:00</g:time>',
      ),
      'gpx',
    )?.toISOString(),
    '2021-02-03T03:05:06.000Z',
  );
  // No Id: the first lap's StartTime; a naive time is no instant.
  t.is(
    recordedAt(
      text('<TrainingCenterDatabase><Activities><Activity Sport="Biking"><Lap StartTime=\'2022-05-06T07:08:09Z\'>'),
      'tcx',
    )?.toISOString(),
    '2022-05-06T07:08:09.000Z',
  );
  t.is(recordedAt(text('<gpx><trk><trkseg><trkpt lat="1" lon="2"><time>2021-02-03T04:05:06</time>'), 'gpx'), null);
  t.is(recordedAt(text('<gpx><trk><trkseg><trkpt lat="1" lon="2"><time>yesterday</time>'), 'gpx'), null);
  // A time only beyond the first 64 KiB is not looked for.
  t.is(recordedAt(text(`<gpx><trk><trkseg><trkpt lat="1" lon="2">${' '.repeat(70_000)}<time>2021-02-03T04:05:06Z</time>`), 'gpx'), null);
});
