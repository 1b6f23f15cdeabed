import test from 'ava';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { openNestedHistory } from '../lib/archive-nested.ts';
import { cleanText, findActivitiesCsv, gearTag, readStravaExport, stravaSport } from '../lib/strava-export.ts';
import { yazlZip } from './helpers/zip.ts';

function tmp(t: { teardown(fn: () => void): void }) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nested-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const bytes = (s: string) => Buffer.from(s);

test('a zip inside a zip inside the archive is read (Garmin layout); its entries are named through it and read in any order', async (t) => {
  const dir = tmp(t);
  const deepest = await yazlZip([{ name: 'c.fit', data: bytes('level 2') }]);
  const inner = await yazlZip([
    { name: '2020/a.fit', data: bytes('inner a') },
    { name: 'b.fit.gz', data: gzipSync(bytes('inner b')) },
    { name: 'more.zip', data: deepest },
  ]);
  const other = await yazlZip([{ name: 'd.tcx', data: bytes('other d') }]);
  const outer = await yazlZip([
    { name: 'top.fit', data: bytes('top') },
    { name: 'DI_CONNECT/DI-Connect-Uploaded-Files/UploadedFiles_0-_Part1.zip', data: inner },
    { name: 'DI_CONNECT/DI-Connect-Uploaded-Files/UploadedFiles_0-_Part2.zip', data: other, compress: false },
    { name: 'DI_CONNECT/DI-Connect-Fitness/x.json', data: bytes('{}') },
  ]);
  const file = path.join(dir, 'garmin.zip');
  writeFileSync(file, outer);
  const history = await openNestedHistory(file, 'archive');
  t.teardown(() => history.close());
  const part1 = 'DI_CONNECT/DI-Connect-Uploaded-Files/UploadedFiles_0-_Part1.zip';
  const part2 = 'DI_CONNECT/DI-Connect-Uploaded-Files/UploadedFiles_0-_Part2.zip';
  t.deepEqual(
    history.entries.map((e) => [e.name, e.format, e.fileName]),
    [
      ['top.fit', 'fit', 'top.fit'],
      [`${part1}/2020/a.fit`, 'fit', 'a.fit'],
      [`${part1}/b.fit.gz`, 'fit', 'b.fit'],
      [`${part1}/more.zip/c.fit`, 'fit', 'c.fit'],
      [`${part2}/d.tcx`, 'tcx', 'd.tcx'],
    ],
  );
  t.is(history.containers, 3);
  t.deepEqual(
    history.skipped.map((s) => [s.name, s.reason]),
    [['DI_CONNECT/DI-Connect-Fitness/x.json', 'unsupported']],
  );
  const read = async (i: number) => (await history.read(history.entries[i]!)).toString();
  // Out of order: each read opens what it needs again.
  t.is(await read(4), 'other d');
  t.is(await read(3), 'level 2');
  t.is(await read(1), 'inner a');
  t.is(await read(2), 'inner b', 'gunzipped');
  t.is(await read(0), 'top');
  t.is(await read(4), 'other d');
});

test('a zip nested deeper than the limit is skipped as too_deep, nothing of it read', async (t) => {
  const dir = tmp(t);
  let zip = await yazlZip([{ name: 'bottom.fit', data: bytes('bottom') }]);
  for (let level = 3; level >= 1; level--)
    zip = await yazlZip([
      { name: `l${level}.fit`, data: bytes(`l${level}`) },
      { name: `z${level}.zip`, data: zip },
    ]);
  const file = path.join(dir, 'deep.zip');
  writeFileSync(file, zip);
  const history = await openNestedHistory(file, 'archive');
  t.teardown(() => history.close());
  t.deepEqual(
    history.entries.map((e) => e.name),
    ['l1.fit', 'z1.zip/l2.fit', 'z1.zip/z2.zip/l3.fit'],
  );
  t.like(history.skipped, [{ name: 'z1.zip/z2.zip/z3.zip', reason: 'too_deep' }]);
  const shallow = await openNestedHistory(file, 'archive', { maxDepth: 0 });
  shallow.close();
  t.deepEqual(
    shallow.skipped.map((s) => [s.name, s.reason]),
    [['z1.zip', 'too_deep']],
  );
});

test('hostile nested zips are skipped alone: too large, a compression bomb inside, over the entry budget, not a zip', async (t) => {
  const dir = tmp(t);
  const big = await yazlZip([{ name: 'x.fit', data: Buffer.alloc(200_000, 7), compress: false }]);
  const bomb = await yazlZip([{ name: 'zeros.fit', data: Buffer.alloc(50 * 1024 * 1024) }]);
  const many = await yazlZip(Array.from({ length: 30 }, (_, i) => ({ name: `m${i}.fit`, data: bytes(`m${i}`) })));
  const outer = await yazlZip([
    { name: 'ok.fit', data: bytes('ok') },
    { name: 'big.zip', data: big, compress: false },
    { name: 'bomb.zip', data: bomb },
    { name: 'many.zip', data: many },
    { name: 'fake.zip', data: bytes('not a zip at all') },
  ]);
  t.true(bomb.length < 200_000, 'the bomb is small');
  const file = path.join(dir, 'hostile.zip');
  writeFileSync(file, outer);
  const history = await openNestedHistory(file, 'archive', { maxEntryBytes: 100_000, maxEntries: 20 });
  t.teardown(() => history.close());
  t.deepEqual(
    history.entries.map((e) => e.name),
    ['ok.fit'],
  );
  const skipped = Object.fromEntries(history.skipped.map((s) => [s.name, s.reason]));
  t.is(skipped['big.zip/x.fit'], 'too_large', "a nested zip is bounded by the history's total, its entries by the entry cap");
  t.is(skipped['bomb.zip/zeros.fit'], 'too_large', 'its 50 MB entry is over the cap (and the ratio)');
  t.is(skipped['many.zip'], 'too_large', "its 30 entries are over what is left of the archive's 20");
  t.is(skipped['fake.zip'], 'unsupported');
  t.regex(history.skipped.find((s) => s.name === 'many.zip')!.detail, /entries/);
});

test('a nested zip too large for memory is spooled to a temporary file, read from there, removed when closed; a corrupt one is skipped alone, its file removed', async (t) => {
  const dir = tmp(t);
  const spoolDir = tmp(t);
  const files = Array.from({ length: 3 }, (_, i) => ({ name: `2021/ride${i}.fit`, data: randomBytes(50_000), compress: false }));
  const part = await yazlZip(files);
  const outer = await yazlZip([
    { name: 'ok.fit', data: bytes('ok') },
    { name: 'UploadedFiles_0-_Part1.zip', data: part, compress: false },
    { name: 'UploadedFiles_0-_Part2.zip', data: part, compress: false },
  ]);
  // Part 2 with one byte flipped inside the archive: its CRC-32 no longer matches.
  const second = outer.indexOf(part.subarray(0, 64), outer.indexOf(part.subarray(0, 64)) + 1);
  t.true(second > 0);
  outer[second + 1000] = outer[second + 1000]! ^ 0xff;
  const file = path.join(dir, 'garmin.zip');
  writeFileSync(file, outer);
  const spooled = () => readdirSync(spoolDir);

  // 64 KiB in memory at most: the 150 KB parts are spooled.
  const history = await openNestedHistory(file, 'archive', { maxInMemoryBytes: 64 * 1024 }, { spoolDir });
  t.deepEqual(
    history.entries.map((e) => e.name),
    ['ok.fit', ...files.map((f) => `UploadedFiles_0-_Part1.zip/${f.name}`)],
  );
  t.deepEqual(
    history.skipped.map((x) => [x.name, x.reason]),
    [['UploadedFiles_0-_Part2.zip', 'unsupported']],
  );
  t.regex(history.skipped[0]!.detail, /CRC-32/);
  t.deepEqual(spooled(), [], 'listed: every spooled file removed');
  for (const [i, f] of files.entries()) t.deepEqual(await history.read(history.entries[i + 1]!), f.data);
  t.is(spooled().length, 1, 'the part being read is on disk, once');
  t.regex(spooled()[0]!, /^\.nested-.*\.zip$/);
  history.close();
  t.deepEqual(spooled(), [], 'closed: removed');
});

test('a directory with a zip in it is read through the zip; a directory is level 0', async (t) => {
  const dir = tmp(t);
  mkdirSync(path.join(dir, 'garmin'));
  writeFileSync(path.join(dir, 'a.fit'), 'a');
  writeFileSync(path.join(dir, 'garmin', 'export.zip'), await yazlZip([{ name: 'b.gpx.gz', data: gzipSync(bytes('b')) }]));
  const history = await openNestedHistory(dir, 'directory');
  t.teardown(() => history.close());
  t.deepEqual(
    history.entries.map((e) => [e.name, e.format]),
    [
      ['a.fit', 'fit'],
      ['garmin/export.zip/b.gpx.gz', 'gpx'],
    ],
  );
  t.is((await history.read(history.entries[1]!)).toString(), 'b');
});

test("Strava's activities.csv: the first of repeated columns, names and descriptions cleaned and bounded, types mapped, gear as a tag", (t) => {
  const csv = [
    'Activity ID,Activity Date,Activity Name,Activity Type,Activity Description,Elapsed Time,Distance,Filename,Activity Gear,Elapsed Time,Distance',
    `1,"Jan 1, 2025, 7:00:00 AM",Morning <b>Ride</b>,Ride,"Line 1\r\nLine 2, with ""quotes""",3600,30.5,activities/1.fit.gz,Canyon Aeroad (2019),3600,30500`,
    `2,"Jan 2, 2025",Virtual,Virtual Ride,,60,1,activities/2.fit,,60,1000`,
    `3,"Jan 3, 2025",Gym,Weight Training,,60,0,,,60,0`,
    `4,"Jan 4, 2025",Evil,Run,,60,0,../../etc/passwd,,60,0`,
    `5,"Jan 5, 2025",A\u0000B${'x'.repeat(1_000_000)},Quidditch,D\u0000E\u0007F,60,0,activities/5.gpx,,60,0`,
  ].join('\n');
  const out = readStravaExport(Buffer.from(csv))!;
  t.like(out, { rows: 5, withoutFile: 1, unsafeNames: 1 });
  t.deepEqual(out.byFile.get('activities/1.fit.gz'), {
    name: 'Morning <b>Ride</b>',
    description: 'Line 1\nLine 2, with "quotes"',
    sport: 'cycling.road',
    tags: ['gear:Canyon Aeroad 2019'],
  });
  t.like(out.byFile.get('activities/2.fit'), { sport: 'cycling+stationary+virtual', description: null, tags: [] });
  const five = out.byFile.get('activities/5.gpx')!;
  t.is(five.name!.length, 255);
  t.true(five.name!.startsWith('A B'), 'NUL became a space');
  t.is(five.description, 'DEF', 'control characters removed');
  t.is(five.sport, null, 'an unknown type leaves the file its own sport');
  t.false([...out.byFile.keys()].some((k) => k.includes('..')));
  t.is(readStravaExport(Buffer.from('time,power\n0,100\n')), null, 'an activity CSV named activities.csv is no Strava export');
});

test('Strava types, text and gear tags', (t) => {
  t.is(stravaSport('TrailRun'), 'running.trail');
  t.is(stravaSport('Trail Run'), 'running.trail');
  t.is(stravaSport('NordicSki'), 'xc_skiing');
  t.is(stravaSport('E-Bike Ride'), 'cycling+electric');
  t.is(stravaSport('Nope'), null);
  t.is(cleanText('  \u0000 ', 10), null);
  t.is(cleanText('ab\ud800c', 10), 'ab\ufffdc');
  t.is(gearTag('(((('), null);
  t.is(gearTag('x'.repeat(100))!.length, 64);
  t.is(findActivitiesCsv(['a/activities.csv', 'activities.csv']), 'activities.csv');
  t.is(findActivitiesCsv(['export_1/activities.csv']), 'export_1/activities.csv');
  t.is(findActivitiesCsv(['a/b/activities.csv']), null);
});
