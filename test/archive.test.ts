import { mkdir, mkdtemp, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import test from 'ava';
import {
  ArchiveError,
  DEFAULT_ARCHIVE_LIMITS,
  listArchive,
  openArchive,
  readArchiveEntry,
  readDirectory,
  readDirectoryEntry,
  type ArchiveEntry,
  type ArchiveErrorCode,
} from '../lib/archive.ts';
import { yazlZip } from './helpers/zip.ts';
import { poll } from './helpers/curves.ts';

let dir: string;
test.before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'archive-'));
});
test.after.always(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/**
 * How many bytes the raw-deflate and gunzip streams put out while `fn` ran (yauzl inflates with
 * zlib.createInflateRaw, the gzip reader with zlib.gunzip): the work a read did, counted, not timed.
 * Only for serial tests: it patches node:zlib's stream classes while `fn` runs.
 */
async function inflatedBytes(fn: () => Promise<unknown>): Promise<number> {
  let bytes = 0;
  const classes = [zlib.InflateRaw.prototype, zlib.Gunzip.prototype] as unknown as { push?: Readable['push'] }[];
  for (const proto of classes) {
    proto.push = function (this: Readable, chunk: unknown, encoding?: BufferEncoding) {
      if (chunk) bytes += (chunk as Buffer).length;
      return Readable.prototype.push.call(this, chunk, encoding);
    };
  }
  try {
    await fn();
  } finally {
    for (const proto of classes) delete proto.push;
  }
  return bytes;
}

let counter = 0;
async function save(bytes: Buffer, name = `a${counter++}.zip`): Promise<string> {
  const file = path.join(dir, 'zips', name);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, bytes);
  return file;
}

interface RawEntry {
  /** Written as is (UTF-8 flag set), so any bytes can be a name. */
  name: string | Buffer;
  /** The stored bytes (already deflated when method is 8). */
  data: Buffer;
  method?: number;
  crc?: number;
  /** Declared uncompressed size (default: data length for stored entries). */
  size?: number;
  flags?: number;
}

/** A zip built byte by byte, for what no honest writer produces (hostile names, lying sizes). */
function rawZip(entries: RawEntry[], opts: { entryCount?: number; aliases?: { name: string; of: number }[] } = {}): Buffer {
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  const headers: Buffer[] = []; // each entry's central record, for aliases
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.isBuffer(e.name) ? e.name : Buffer.from(e.name, 'utf8');
    const method = e.method ?? 0;
    const flags = (e.flags ?? 0) | 0x800;
    const crc = e.crc ?? zlib.crc32(e.data);
    const size = e.size ?? e.data.length;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(flags, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt32LE(crc >>> 0, 14);
    local.writeUInt32LE(e.data.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    const cd = Buffer.alloc(46);
    cd.writeUInt32LE(0x02014b50, 0);
    cd.writeUInt16LE(20, 4);
    cd.writeUInt16LE(20, 6);
    cd.writeUInt16LE(flags, 8);
    cd.writeUInt16LE(method, 10);
    cd.writeUInt32LE(crc >>> 0, 16);
    cd.writeUInt32LE(e.data.length, 20);
    cd.writeUInt32LE(size, 24);
    cd.writeUInt16LE(name.length, 28);
    cd.writeUInt32LE(offset, 42);
    parts.push(local, name, e.data);
    central.push(cd, name);
    headers.push(cd);
    offset += local.length + name.length + e.data.length;
  }
  // Central records over another entry's local header and data (the overlapping-file zip bomb).
  for (const alias of opts.aliases ?? []) {
    const name = Buffer.from(alias.name, 'utf8');
    const cd = Buffer.from(headers[alias.of]!);
    cd.writeUInt16LE(name.length, 28);
    central.push(cd, name);
  }
  const count = entries.length + (opts.aliases?.length ?? 0);
  const cdSize = central.reduce((n, b) => n + b.length, 0);
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0);
  eocd.writeUInt16LE(opts.entryCount ?? count, 8);
  eocd.writeUInt16LE(opts.entryCount ?? count, 10);
  eocd.writeUInt32LE(cdSize, 12);
  eocd.writeUInt32LE(offset, 16);
  return Buffer.concat([...parts, ...central, eocd]);
}

const deflated = (content: Buffer): RawEntry['data'] => zlib.deflateRawSync(content);

/** `mib` MiB of zeros, deflated without ever holding them (and their CRC-32). */
async function deflatedZeros(mib: number): Promise<{ data: Buffer; crc: number; size: number }> {
  const zeros = Buffer.alloc(1024 * 1024);
  const deflate = zlib.createDeflateRaw({ level: 9 });
  const out: Buffer[] = [];
  deflate.on('data', (c: Buffer) => out.push(c));
  const done = new Promise((resolve) => deflate.on('end', resolve));
  let crc = 0;
  for (let i = 0; i < mib; i++) {
    crc = zlib.crc32(zeros, crc);
    if (!deflate.write(zeros)) await new Promise((r) => deflate.once('drain', r));
  }
  deflate.end();
  await done;
  return { data: Buffer.concat(out), crc, size: mib * 1024 * 1024 };
}

const fitBytes = (n: number) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 31 + 7) & 0xff));
const csvBytes = Buffer.from('timestamp,power\n2024-01-01T00:00:00Z,200\n2024-01-01T00:00:01Z,210\n');

async function rejects(t: import('ava').ExecutionContext, promise: Promise<unknown>, code: ArchiveErrorCode) {
  const error = await t.throwsAsync(promise, { instanceOf: ArchiveError });
  t.is(error?.code, code, error?.message);
}

test('a normal archive: nested folders, case-insensitive extensions, litter left out, unsupported reported', async (t) => {
  const ride = fitBytes(5000);
  const run = fitBytes(1234).reverse();
  const inner = fitBytes(40_000);
  const file = await save(
    await yazlZip(
      [
        { name: '2024/01/ride.fit', data: ride },
        { name: '2024/02/RUN.FIT', data: run, compress: false },
        { name: '2023/walk.csv', data: csvBytes },
        { name: 'gz/old.FIT.gz', data: zlib.gzipSync(inner) },
        { name: 'gz/old.csv.GZ', data: zlib.gzipSync(csvBytes) },
        { name: 'notes.txt', data: Buffer.from('hello') },
        { name: '2024/ride.fit.zip', data: Buffer.from('x') },
        { name: '__MACOSX/2024/01/._ride.fit', data: Buffer.from('resource fork') },
        { name: '.DS_Store', data: Buffer.from('x') },
        { name: '2024/.hidden.fit', data: Buffer.from('x') },
        { name: 'été/ride é.fit', data: ride },
      ],
      ['2024/', '2024/01/', 'empty/'],
    ),
  );
  const listing = await listArchive(file);
  t.deepEqual(
    listing.entries.map((e) => [e.name, e.format, e.gzip, e.fileName]),
    [
      ['2024/01/ride.fit', 'fit', false, 'ride.fit'],
      ['2024/02/RUN.FIT', 'fit', false, 'RUN.FIT'],
      ['2023/walk.csv', 'csv', false, 'walk.csv'],
      ['gz/old.FIT.gz', 'fit', true, 'old.FIT'],
      ['gz/old.csv.GZ', 'csv', true, 'old.csv'],
      ['été/ride é.fit', 'fit', false, 'ride é.fit'],
    ],
  );
  t.deepEqual(
    listing.skipped.map((s) => [s.name, s.reason]),
    [
      ['notes.txt', 'unsupported'],
      ['2024/ride.fit.zip', 'unsupported'],
    ],
  );
  const rideEntry = listing.entries[0]!;
  t.is(rideEntry.index, 3, 'central-directory position (three directories first)');
  t.is(rideEntry.uncompressedSize, ride.length);
  t.true(rideEntry.compressedSize > 0);
  t.is(listing.entries[1]!.compressedSize, run.length, 'stored');
  t.is(
    listing.totalBytes,
    listing.entries.reduce((n, e) => n + e.uncompressedSize, 0),
  );

  t.deepEqual(await readArchiveEntry(file, '2024/01/ride.fit'), ride);
  t.deepEqual(await readArchiveEntry(file, listing.entries[1]!.index), run);
  t.deepEqual(await readArchiveEntry(file, listing.entries[2]!), csvBytes);
  t.deepEqual(await readArchiveEntry(file, 'gz/old.FIT.gz'), inner, 'gunzipped');
  t.deepEqual(await readArchiveEntry(file, 'été/ride é.fit'), ride);
  await rejects(t, readArchiveEntry(file, 'notes.txt'), 'unsupported');
  await rejects(t, readArchiveEntry(file, 'nope.fit'), 'not_found');
  await rejects(t, readArchiveEntry(file, 0), 'not_found'); // a directory entry
  await rejects(t, readArchiveEntry(file, '2024/01/ride.fit', 100), 'too_large');
  await rejects(t, readArchiveEntry(file, 'gz/old.FIT.gz', 39_999), 'too_large');
  t.deepEqual(await readArchiveEntry(file, 'gz/old.FIT.gz', 40_000), inner, 'exactly the cap is fine');

  // One open archive, many concurrent reads.
  const archive = await openArchive(file);
  try {
    const all = await Promise.all(archive.entries.map((e) => archive.read(e)));
    t.deepEqual(
      all.map((b) => b.length),
      [ride.length, run.length, csvBytes.length, inner.length, csvBytes.length, ride.length],
    );
  } finally {
    archive.close();
  }
});

test('hostile names are skipped (or refused on read) and nothing is written anywhere', async (t) => {
  const content = fitBytes(100);
  const names: (string | Buffer)[] = [
    '../evil.fit',
    'a/../../evil.fit',
    '/etc/evil.fit',
    'C:evil.fit',
    'C:/evil.fit',
    'a\\..\\evil.fit',
    Buffer.from('nul\0.fit'),
    'ctl\u0001.fit',
    'a//b.fit',
    './c.fit',
    '',
  ];
  const file = await save(rawZip([...names.map((name) => ({ name, data: content })), { name: 'good/ok.fit', data: content }]));
  const before = await readdir(path.dirname(dir));
  const listing = await listArchive(file);
  t.deepEqual(
    listing.entries.map((e) => e.name),
    ['good/ok.fit'],
  );
  t.is(listing.skipped.length, names.length);
  t.true(
    listing.skipped.every((s) => s.reason === 'unsafe_name'),
    JSON.stringify(listing.skipped),
  );
  t.deepEqual(
    listing.skipped.map((s) => s.index),
    names.map((_, i) => i),
  );

  await rejects(t, readArchiveEntry(file, '../evil.fit'), 'unsafe_name');
  await rejects(t, readArchiveEntry(file, 2), 'unsafe_name');
  t.deepEqual(await readArchiveEntry(file, 'good/ok.fit'), content);
  // Forging a listed entry with another name does not reach the hostile one.
  const forged: ArchiveEntry = { ...listing.entries[0]!, name: '../evil.fit' };
  await rejects(t, readArchiveEntry(file, forged), 'unsafe_name');

  // Nothing is ever extracted: no evil.fit next to the archive, above it, at the root or in the cwd.
  t.deepEqual(
    before.filter((n) => n.includes('evil')),
    [],
  );
  t.deepEqual(
    (await readdir(path.dirname(dir))).filter((n) => n.includes('evil')),
    [],
  );
  t.false((await readdir(path.join(dir, 'zips'))).some((n) => n.includes('evil')));
  for (const p of ['/evil.fit', '/etc/evil.fit', path.resolve('evil.fit'), path.join(dir, 'evil.fit')]) {
    t.false(
      await stat(p).then(
        () => true,
        () => false,
      ),
      p,
    );
  }
});

test.serial('zip bombs: skipped by declared size or ratio; a lying header or a gzip bomb stops at the cap', async (t) => {
  const big = await deflatedZeros(200);
  t.true(big.data.length < 1024 * 1024, `200 MiB of zeros deflate to ${big.data.length} bytes`);
  const mid = await deflatedZeros(32);
  const gzBomb = zlib.gzipSync(Buffer.alloc(100 * 1024 * 1024), { level: 9 });
  const file = await save(
    rawZip([
      { name: 'honest-200MiB.fit', data: big.data, method: 8, crc: big.crc, size: big.size },
      { name: 'ratio-32MiB.fit', data: mid.data, method: 8, crc: mid.crc, size: mid.size },
      { name: 'liar.fit', data: big.data, method: 8, crc: big.crc, size: 1000 },
      { name: 'bomb.fit.gz', data: gzBomb },
      { name: 'fine.fit', data: deflated(fitBytes(3000)), method: 8, crc: zlib.crc32(fitBytes(3000)), size: 3000 },
    ]),
  );
  const listing = await listArchive(file);
  t.deepEqual(
    listing.entries.map((e) => e.name),
    ['liar.fit', 'bomb.fit.gz', 'fine.fit'],
  );
  t.deepEqual(
    listing.skipped.map((s) => [s.name, s.reason]),
    [
      ['honest-200MiB.fit', 'too_large'],
      ['ratio-32MiB.fit', 'too_large'],
    ],
  );
  t.regex(listing.skipped[1]!.detail, /ratio/);

  const rss = process.memoryUsage().rss;
  // Aborted early: what the inflaters put out before the refusal, far from the 200 and 100 MiB the entries hold.
  const liarBytes = await inflatedBytes(() => rejects(t, readArchiveEntry(file, 'liar.fit'), 'too_large'));
  const gzBytes = await inflatedBytes(() => rejects(t, readArchiveEntry(file, 'bomb.fit.gz', 1024 * 1024), 'too_large'));
  // Read directly, the honest bomb is refused from its header before any inflating.
  t.is(await inflatedBytes(() => rejects(t, readArchiveEntry(file, 'honest-200MiB.fit', 64 * 1024 * 1024), 'too_large')), 0);
  const grown = (process.memoryUsage().rss - rss) / 2 ** 20;
  t.true(liarBytes < 2 ** 20, `the lying header (1,000 bytes declared) stopped after ${liarBytes} inflated bytes`);
  t.true(gzBytes < 2 * 2 ** 20, `the gzip bomb (1 MiB cap) stopped after ${gzBytes} inflated bytes`);
  t.true(grown < 64, `memory grew by ${grown.toFixed(0)} MiB`);
  t.deepEqual(await readArchiveEntry(file, 'fine.fit'), fitBytes(3000));
  t.log(`lying header aborted after ${liarBytes} inflated bytes, gzip bomb after ${gzBytes}`);

  // With custom limits, the honest entries pass the listing but not a smaller read cap.
  const lenient = await listArchive(file, { maxEntryBytes: 256 * 1024 * 1024, maxRatio: 1e6 });
  t.true(lenient.entries.some((e) => e.name === 'honest-200MiB.fit'));
  await rejects(t, readArchiveEntry(file, 'ratio-32MiB.fit', 16 * 1024 * 1024), 'too_large');
  // And the total: 200 + 32 MiB declared is over a 128 MiB budget.
  await rejects(t, listArchive(file, { maxEntryBytes: 256 * 1024 * 1024, maxRatio: 1e6, maxTotalBytes: 128 * 1024 * 1024 }), 'too_large');
});

test('corrupt entries: bad CRC, bad deflate data, bad gzip, encrypted, unknown method', async (t) => {
  const content = fitBytes(2000);
  const file = await save(
    rawZip([
      { name: 'crc.fit', data: content, crc: 12345 },
      { name: 'deflate.fit', data: Buffer.from('this is not deflate data at all'), method: 8, size: 2000 },
      { name: 'bad.fit.gz', data: Buffer.from('not gzip') },
      { name: 'encrypted.fit', data: Buffer.alloc(2012), flags: 1, size: 2000 },
      { name: 'bzip2.fit', data: content, method: 12 },
      { name: 'short.fit', data: deflated(content), method: 8, crc: zlib.crc32(content), size: 5000 },
    ]),
  );
  const listing = await listArchive(file);
  t.deepEqual(
    listing.entries.map((e) => e.name),
    ['crc.fit', 'deflate.fit', 'bad.fit.gz', 'short.fit'],
  );
  t.deepEqual(
    listing.skipped.map((s) => [s.name, s.reason]),
    [
      ['encrypted.fit', 'unsupported'],
      ['bzip2.fit', 'unsupported'],
    ],
  );
  await rejects(t, readArchiveEntry(file, 'crc.fit'), 'corrupt_entry');
  await rejects(t, readArchiveEntry(file, 'deflate.fit'), 'corrupt_entry');
  await rejects(t, readArchiveEntry(file, 'bad.fit.gz'), 'corrupt_entry');
  await rejects(t, readArchiveEntry(file, 'short.fit'), 'corrupt_entry');
  await rejects(t, readArchiveEntry(file, 'bzip2.fit'), 'unsupported');
});

test('zip bombs: entries over the same data are refused whole; files adding up to over maxRatio × the archive are too_large', async (t) => {
  // 1 MiB of zeros deflates to ~1 KiB: 40 central records over it would inflate to 40 MiB.
  const zeros = await deflatedZeros(1);
  const bomb = rawZip([{ name: 'a.fit', data: zeros.data, method: 8, crc: zeros.crc, size: zeros.size }], {
    aliases: Array.from({ length: 40 }, (_, i) => ({ name: `b${i}.fit`, of: 0 })),
  });
  await rejects(t, listArchive(await save(bomb)), 'invalid_archive');
  const error = await t.throwsAsync(listArchive(await save(bomb)));
  t.regex(error!.message, /overlap/);

  // Without overlap, the same ratio over several honest entries: each under the per-entry ratio check
  // (below RATIO_MIN_BYTES), together far over maxRatio × the archive.
  const small = zlib.deflateRawSync(Buffer.alloc(900 * 1024));
  const honest = rawZip(
    Array.from({ length: 12 }, (_, i) => ({
      name: `r${i}.fit`,
      data: small,
      method: 8,
      crc: zlib.crc32(Buffer.alloc(900 * 1024)),
      size: 900 * 1024,
    })),
  );
  await rejects(t, listArchive(await save(honest)), 'too_large');
  // A normal archive of the same files, stored: listed.
  const stored = rawZip(Array.from({ length: 3 }, (_, i) => ({ name: `s${i}.fit`, data: fitBytes(4096) })));
  t.is((await listArchive(await save(stored))).entries.length, 3);
});

test('entry count: 20,000 entries are listed, 20,001 refused before reading them; custom limit', async (t) => {
  const entries = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `d${i % 50}/f${i}.fit`, data: Buffer.alloc(0) }));
  const ok = await save(rawZip(entries(DEFAULT_ARCHIVE_LIMITS.maxEntries)));
  const t0 = performance.now();
  const listing = await listArchive(ok);
  t.log(`listing 20,000 entries took ${(performance.now() - t0).toFixed(0)} ms`);
  t.is(listing.entries.length, 20_000);
  await rejects(t, listArchive(await save(rawZip(entries(20_001)))), 'too_many_entries');
  await rejects(
    t,
    listArchive(await save(await yazlZip(entries(30).map((e) => ({ ...e, data: Buffer.from('x') })))), { maxEntries: 29 }),
    'too_many_entries',
  );
  t.is((await listArchive(ok, { maxEntries: 20_000 })).entries.length, 20_000);
});

test('not an archive → invalid_archive (never a crash); a missing file is a plain fs error', async (t) => {
  await rejects(t, listArchive(await save(Buffer.from('timestamp,power\n'))), 'invalid_archive');
  await rejects(t, listArchive(await save(Buffer.alloc(0))), 'invalid_archive');
  await rejects(t, listArchive(await save(fitBytes(100_000))), 'invalid_archive');
  const good = await yazlZip([{ name: 'a.fit', data: fitBytes(100) }]);
  await rejects(t, listArchive(await save(good.subarray(0, good.length - 30))), 'invalid_archive');
  // The end record claims more entries than the central directory holds.
  await rejects(t, listArchive(await save(rawZip([{ name: 'a.fit', data: fitBytes(10) }], { entryCount: 5 }))), 'invalid_archive');
  // Central directory garbage.
  const garbled = Buffer.from(good);
  garbled.fill(0x41, garbled.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02])), garbled.indexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06])));
  await rejects(t, listArchive(await save(garbled)), 'invalid_archive');
  const missing = await t.throwsAsync(listArchive(path.join(dir, 'missing.zip')));
  t.is((missing as NodeJS.ErrnoException).code, 'ENOENT');
  t.false(missing instanceof ArchiveError);
});

test('limits are validated', async (t) => {
  const file = await save(await yazlZip([{ name: 'a.fit', data: fitBytes(10) }]));
  await t.throwsAsync(listArchive(file, { maxEntries: -1 }), { instanceOf: RangeError });
  await t.throwsAsync(listArchive(file, { maxRatio: Number.NaN }), { instanceOf: RangeError });
});

test('the directory reader: same shape and rules, symlinks never lead out', async (t) => {
  const root = path.join(dir, 'tree');
  const outside = path.join(dir, 'outside');
  await mkdir(path.join(root, '2024', '01'), { recursive: true });
  await mkdir(path.join(root, '.hidden'), { recursive: true });
  await mkdir(path.join(root, '__MACOSX'), { recursive: true });
  await mkdir(outside, { recursive: true });
  const ride = fitBytes(2000);
  await writeFile(path.join(root, '2024', '01', 'ride.fit'), ride);
  await writeFile(path.join(root, '2024', 'walk.CSV'), csvBytes);
  await writeFile(path.join(root, '2024', 'old.fit.gz'), zlib.gzipSync(ride));
  await writeFile(path.join(root, 'notes.txt'), 'x');
  await writeFile(path.join(root, 'big.fit'), Buffer.alloc(3000));
  await writeFile(path.join(root, '.hidden', 'x.fit'), 'x');
  await writeFile(path.join(root, '__MACOSX', '._ride.fit'), 'x');
  await writeFile(path.join(root, 'back\\slash.fit'), 'x');
  await writeFile(path.join(outside, 'secret.fit'), 'secret');
  await symlink(path.join(root, '2024', '01', 'ride.fit'), path.join(root, 'link-in.fit'));
  await symlink(path.join(outside, 'secret.fit'), path.join(root, 'link-out.fit'));
  await symlink(outside, path.join(root, 'linkdir'));
  await symlink(path.join(root, '2024'), path.join(root, 'linkdir-in'));
  await symlink(path.join(root, 'nowhere.fit'), path.join(root, 'broken.fit'));

  const listing = await readDirectory(root, { maxEntryBytes: 2500 });
  t.deepEqual(
    listing.entries.map((e) => [e.name, e.format, e.gzip, e.fileName, e.uncompressedSize]),
    [
      ['2024/01/ride.fit', 'fit', false, 'ride.fit', 2000],
      ['2024/old.fit.gz', 'fit', true, 'old.fit', zlib.gzipSync(ride).length],
      ['2024/walk.CSV', 'csv', false, 'walk.CSV', csvBytes.length],
      ['link-in.fit', 'fit', false, 'link-in.fit', 2000],
    ],
  );
  t.deepEqual(listing.skipped.map((s) => [s.name, s.reason]).sort(), [
    ['back\\slash.fit', 'unsafe_name'],
    ['big.fit', 'too_large'],
    ['broken.fit', 'unsupported'],
    ['link-out.fit', 'unsafe_name'],
    ['linkdir', 'unsafe_name'],
    ['linkdir-in', 'unsupported'],
    ['notes.txt', 'unsupported'],
  ]);
  t.true(listing.entries.every((e) => e.compressedSize === e.uncompressedSize));

  t.deepEqual(await readDirectoryEntry(root, '2024/01/ride.fit'), ride);
  t.deepEqual(await readDirectoryEntry(root, listing.entries[1]!), ride, 'gunzipped');
  t.deepEqual(await readDirectoryEntry(root, 'link-in.fit'), ride);
  await rejects(t, readDirectoryEntry(root, 'link-out.fit'), 'unsafe_name');
  await rejects(t, readDirectoryEntry(root, '../outside/secret.fit'), 'unsafe_name');
  await rejects(t, readDirectoryEntry(root, '/etc/passwd.csv'), 'unsafe_name');
  await rejects(t, readDirectoryEntry(root, 'linkdir/secret.fit'), 'unsafe_name');
  t.deepEqual(await readDirectoryEntry(root, 'linkdir-in/walk.CSV'), csvBytes, 'a link inside the tree may be read through');
  await rejects(t, readDirectoryEntry(root, 'notes.txt'), 'unsupported');
  await rejects(t, readDirectoryEntry(root, 'missing.fit'), 'not_found');
  await rejects(t, readDirectoryEntry(root, '2024/01/ride.fit', 1999), 'too_large');
  await rejects(t, readDirectoryEntry(root, '2024/old.fit.gz', 1999), 'too_large');
  t.deepEqual(await readDirectoryEntry(root, '2024/01/ride.fit', 2000), ride);

  await rejects(t, readDirectory(root, { maxEntries: 5 }), 'too_many_entries');
  await rejects(t, readDirectory(root, { maxTotalBytes: 5000 }), 'too_large');
});

test.serial('no file descriptor is leaked, whether reads succeed, abort at the cap or fail', async (t) => {
  const openFds = async () => (await readdir('/proc/self/fd').catch(() => [])).length;
  const big = await deflatedZeros(8);
  const content = fitBytes(3000);
  const file = await save(
    rawZip([
      { name: 'ok.fit', data: deflated(content), method: 8, crc: zlib.crc32(content), size: content.length },
      { name: 'liar.fit', data: big.data, method: 8, crc: big.crc, size: 1000 },
      { name: 'crc.fit', data: content, crc: 1 },
      { name: 'bad.fit.gz', data: Buffer.from('not gzip') },
    ]),
  );
  const before = await openFds();
  for (let i = 0; i < 20; i++) {
    await readArchiveEntry(file, 'ok.fit');
    await t.throwsAsync(readArchiveEntry(file, 'liar.fit'));
    await t.throwsAsync(readArchiveEntry(file, 'crc.fit'));
    await t.throwsAsync(readArchiveEntry(file, 'bad.fit.gz'));
    await t.throwsAsync(readArchiveEntry(file, 'ok.fit', 10));
    await t.throwsAsync(listArchive(await save(Buffer.from('not a zip'), 'not-a-zip.zip')));
    const archive = await openArchive(file);
    await Promise.allSettled(archive.entries.map((e) => archive.read(e)));
    archive.close();
  }
  // Descriptors are closed asynchronously after a stream ends: wait until they are all back (or time out).
  await poll('file descriptors closed', async () => (await openFds()) === before, 10_000).catch(() => undefined);
  t.is(await openFds(), before);
});
