import { appendFile, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { createSampleStore, type SampleStore } from '../engine/samples/sample-file.ts';
import { createChannelColumns, processLock, type ColumnActivity } from '../engine/samples/channel-columns.ts';
import { readColumnSlices, type ColumnPlace } from '../engine/samples/column-read.ts';
import { RECORD_BYTES, recordKey } from '../engine/samples/column-log.ts';
import { readChannelInto } from '../engine/samples/sample-scan.ts';
import { currentNumber } from '../engine/samples/column-log-cache.ts';
import { writeFileAtomic } from '../lib/storage.ts';
import { createEnginePool } from '../engine/pool.ts';
import { longitudinalAfter } from '../engine/curves/longitudinal.ts';

let dir: string;
let store: SampleStore;

test.before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'channel-columns-'));
  store = await createSampleStore();
});

test.after.always(async () => {
  await store?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const USER = '00000000-0000-4000-8000-000000000001';

/** Power with holes (NaN, stored as NULL: 0 in a column); whole watts (float32 entries) unless `fraction`. */
function power(length: number, seed: number, fraction = false): Float64Array {
  return Float64Array.from({ length }, (_, i) => (i % 23 === 5 ? Number.NaN : 100 + ((i * seed) % 250) + (fraction ? seed / 7 : 0)));
}

/** Write a sample file and describe it as a listing does. */
async function activity(
  root: string,
  length: number,
  seed: number,
  opts: { stamp?: number; fraction?: boolean } = {},
): Promise<ColumnActivity> {
  const id = randomUUID();
  const file = path.join(root, 'samples', `${id}.parquet`);
  await store.writeSampleFile(file, { start: Date.UTC(2024, 0, 1), length, channels: { power: power(length, seed, opts.fraction) } });
  return { id, stamp: opts.stamp ?? 1, samples: length, path: file };
}

function fresh(root: string, lock = processLock()) {
  return createChannelColumns(store, { dir: () => path.join(root, 'columns'), lock });
}

/** Each activity's values as the sample files give them (gaps as 0): what a column must hold. */
async function expected(activities: ColumnActivity[]): Promise<Float64Array[]> {
  const values = new Float64Array(activities.reduce((n, a) => n + a.samples, 0));
  await readChannelInto(
    store,
    activities.map((a) => a.path),
    'power',
    values,
  );
  let at = 0;
  return activities.map((a) => values.slice(at, (at += a.samples)));
}

function samePlaced(t: ExecutionContext, place: ColumnPlace, want: Float64Array[]) {
  const slices = readColumnSlices(place);
  t.is(slices.from.length, want.length);
  want.forEach((w, i) =>
    t.deepEqual(Array.from(slices.values.subarray(slices.from[i]!, slices.from[i]! + slices.length[i]!)), Array.from(w), `activity ${i}`),
  );
}

const columnFiles = async (root: string) => (await readdir(path.join(root, 'columns'))).sort();
const size = async (file: string) => (await stat(file)).size;

test('place fills the column from the sample files once: gaps as 0, any subset in any order, float32 only where exact', async (t) => {
  const root = await mkdtemp(path.join(dir, 'fill-'));
  const activities = [await activity(root, 3_000, 3), await activity(root, 17, 5, { fraction: true }), await activity(root, 4_500, 7)];
  const want = await expected(activities);
  t.true(want[0]![5] === 0 && want[0]!.every((v) => Number.isFinite(v)), 'a NULL sample reads as 0');
  const columns = fresh(root);
  const place = await columns.place(USER, 'power', activities);
  samePlaced(t, place, want);
  t.deepEqual(Array.from(place.width), [4, 8, 4], 'whole watts as float32, fractions as float64');
  t.deepEqual(await columnFiles(root), ['power.1.log', 'power.1.values', 'power.current']);
  t.is(await size(path.join(root, 'columns', 'power.1.log')), 3 * RECORD_BYTES);

  // Nothing is read from the sample files again: they are gone, another instance (process) places from the column alone.
  for (const a of activities) await rm(a.path);
  samePlaced(t, await fresh(root).place(USER, 'power', [activities[2]!, activities[0]!]), [want[2]!, want[0]!]);
});

test("an arrival appends one activity's bytes and one record; a new stamp is read again; a deletion zeroes its bytes", async (t) => {
  const root = await mkdtemp(path.join(dir, 'incremental-'));
  const history = await Promise.all(Array.from({ length: 5 }, (_, i) => activity(root, 2_000 + i, i + 2)));
  const columns = fresh(root);
  await columns.place(USER, 'power', history);
  const values = path.join(root, 'columns', 'power.1.values');
  const log = path.join(root, 'columns', 'power.1.log');
  const [valuesBefore, logBefore] = [await size(values), await size(log)];

  const added = await activity(root, 1_001, 11);
  await columns.append(USER, 'power', [{ id: added.id, stamp: added.stamp, values: power(1_001, 11) }]);
  t.is((await size(values)) - valuesBefore, Math.ceil((1_001 * 4) / 8) * 8, "one ride's float32 bytes, padded to 8");
  t.is((await size(log)) - logBefore, RECORD_BYTES);
  const all = [...history, added];
  samePlaced(t, await columns.place(USER, 'power', all), await expected(all));
  // Appending the same activity again (a retried job) adds nothing.
  await columns.append(USER, 'power', [{ id: added.id, stamp: added.stamp, values: power(1_001, 11) }]);
  t.is((await size(log)) - logBefore, RECORD_BYTES);

  // Re-derived (new stamp, new sample file): the column reads it again.
  await store.writeSampleFile(history[1]!.path, {
    start: Date.UTC(2024, 0, 1),
    length: history[1]!.samples,
    channels: { power: power(history[1]!.samples, 99, true) },
  });
  const restamped = { ...history[1]!, stamp: 2 };
  const now = [history[0]!, restamped, added];
  samePlaced(t, await columns.place(USER, 'power', now), await expected(now));

  // A deletion: a tombstone, and the entry's bytes are zeros on disk.
  const victim = history[3]!;
  const entry = await columns.place(USER, 'power', [victim]);
  await columns.remove(USER, [victim.id]);
  const bytes = await readFile(values);
  const start = entry.offset[0]!;
  t.true(
    bytes.subarray(start, start + victim.samples * 4).every((b) => b === 0),
    "the deleted activity's samples are overwritten",
  );
  t.false((await columns.held(USER, 'power')).has(victim.id));
  t.true((await columns.held(USER, 'power')).has(history[4]!.id));
  samePlaced(t, await columns.place(USER, 'power', [history[4]!, history[2]!]), await expected([history[4]!, history[2]!]));
});

test('dead bytes beyond the live ones are compacted into a new generation; the one before stays for readers in flight', async (t) => {
  const root = await mkdtemp(path.join(dir, 'compact-'));
  const keep = await activity(root, 3_000, 3);
  const churn = await activity(root, 200_000, 5, { fraction: true }); // 1.6 MB a version
  const columns = fresh(root);
  const first = await columns.place(USER, 'power', [keep, churn]);
  // Versions 2 and 3 leave 3.2 MB dead (under the 4 MiB floor); version 4 makes it 4.8 MB against 1.6 MB live.
  for (let stamp = 2; stamp <= 3; stamp++) await columns.place(USER, 'power', [keep, { ...churn, stamp }]);
  t.is((await readFile(path.join(root, 'columns', 'power.current'), 'utf8')).trim(), '1', 'not yet');
  const placed = await columns.place(USER, 'power', [keep, { ...churn, stamp: 4 }]);
  t.is((await readFile(path.join(root, 'columns', 'power.current'), 'utf8')).trim(), '2');
  t.true(placed.file.endsWith('power.2.values'), 'placed in the new generation');
  t.is(await size(path.join(root, 'columns', 'power.2.values')), 3_000 * 4 + 200_000 * 8, 'only the live entries');
  t.is(await size(path.join(root, 'columns', 'power.2.log')), 2 * RECORD_BYTES);
  samePlaced(t, placed, await expected([keep, churn]));
  // The first generation's readers still read it (kept until the next compaction).
  samePlaced(
    t,
    { ...first, offset: first.offset.subarray(0, 1), length: first.length.subarray(0, 1), width: first.width.subarray(0, 1) },
    await expected([keep]),
  );
});

test("a deletion zeroes the activity's bytes in every generation on disk, the one kept for readers in flight included", async (t) => {
  const root = await mkdtemp(path.join(dir, 'delete-gens-'));
  const gone = await activity(root, 3_000, 11);
  const churn = await activity(root, 200_000, 5, { fraction: true });
  const columns = fresh(root);
  await columns.place(USER, 'power', [gone, churn]);
  for (let stamp = 2; stamp <= 4; stamp++) await columns.place(USER, 'power', [gone, { ...churn, stamp }]);
  t.is((await readFile(path.join(root, 'columns', 'power.current'), 'utf8')).trim(), '2', 'compacted: generation 1 kept beside 2');
  const bytes = Buffer.from(Float32Array.from((await expected([gone]))[0]!).buffer);
  const holding = async () => {
    const names = (await columnFiles(root)).filter((n) => n.endsWith('.values'));
    const found: string[] = [];
    for (const name of names) if ((await readFile(path.join(root, 'columns', name))).includes(bytes)) found.push(name);
    return found;
  };
  t.deepEqual(await holding(), ['power.1.values', 'power.2.values']);
  await columns.remove(USER, [gone.id]);
  t.deepEqual(await holding(), [], 'no values file holds its samples');
  t.false((await columns.held(USER, 'power')).has(gone.id));
});

test('a damaged column is repaired from the sample files: a torn record, a record past the end, a lost directory, a legacy file', async (t) => {
  const root = await mkdtemp(path.join(dir, 'damaged-'));
  const activities = [await activity(root, 1_200, 3), await activity(root, 800, 5)];
  const want = await expected(activities);
  const columns = fresh(root);
  await columns.place(USER, 'power', activities);
  const cols = path.join(root, 'columns');
  // A writer killed mid-record: the half record is not read, and the next append realigns the log.
  await appendFile(path.join(cols, 'power.1.log'), Buffer.alloc(RECORD_BYTES / 2, 7));
  samePlaced(t, await columns.place(USER, 'power', activities), want);
  const more = await activity(root, 300, 9);
  samePlaced(t, await columns.place(USER, 'power', [...activities, more]), [...want, ...(await expected([more]))]);
  t.is((await size(path.join(cols, 'power.1.log'))) % RECORD_BYTES, 0);
  // Values cut short (records beyond the file's end): those activities are read again.
  await writeFile(path.join(cols, 'power.1.values'), (await readFile(path.join(cols, 'power.1.values'))).subarray(0, 100));
  samePlaced(t, await columns.place(USER, 'power', activities), want);
  // The whole directory gone: rebuilt, and the previous format's files are removed on the way.
  await rm(cols, { recursive: true });
  await (await import('node:fs/promises')).mkdir(cols);
  await writeFile(path.join(cols, 'power.json'), '{}');
  await writeFile(path.join(cols, 'power.abc.f64'), Buffer.alloc(8));
  samePlaced(t, await columns.place(USER, 'power', activities), want);
  t.deepEqual(await columnFiles(root), ['power.1.log', 'power.1.values', 'power.current']);
});

test('a log read before is read again only from where it grew, and whole when its files were made again at the same size', async (t) => {
  const root = await mkdtemp(path.join(dir, 'log-cache-'));
  const [a, b, c] = [await activity(root, 900, 3), await activity(root, 500, 5), await activity(root, 700, 7)];
  const want = await expected([a, b, c]);
  const columns = fresh(root);
  samePlaced(t, await columns.place(USER, 'power', [a, b]), want.slice(0, 2));
  // Grown by another writer (another process's append): the new record is taken.
  await fresh(root).append(USER, 'power', [{ id: c.id, stamp: c.stamp, values: want[2]! }]);
  samePlaced(t, await columns.place(USER, 'power', [a, b, c]), want);
  t.is(await size(path.join(root, 'columns', 'power.1.log')), 3 * RECORD_BYTES, 'nothing filled again');
  // The directory lost and filled again in another order: a log of the same length naming other offsets.
  await rm(path.join(root, 'columns'), { recursive: true });
  samePlaced(t, await fresh(root).place(USER, 'power', [c, b, a]), [want[2]!, want[1]!, want[0]!]);
  t.is(await size(path.join(root, 'columns', 'power.1.log')), 3 * RECORD_BYTES);
  samePlaced(t, await columns.place(USER, 'power', [a, b, c]), want);
});

test('a `.current` file is read again whenever it was replaced, and only then', async (t) => {
  const file = path.join(dir, `current-${randomUUID()}`, 'power.current');
  await mkdir(path.dirname(file), { recursive: true });
  t.is(await currentNumber(file), undefined, 'missing');
  await writeFileAtomic(file, Buffer.from('3\n'));
  t.is(await currentNumber(file), 3);
  t.is(await currentNumber(file), 3, 'unchanged: the same answer');
  for (const [text, want] of [
    ['4\n', 4],
    ['5\n', 5],
    ['x\n', undefined],
    ['0\n', undefined],
    ['12\n', 12],
  ] as const) {
    await writeFileAtomic(file, Buffer.from(text));
    t.is(await currentNumber(file), want, `replaced by ${JSON.stringify(text)}`);
  }
  await writeFile(file, '7\n'); // rewritten in place (never done by the service; its modification time moves)
  t.is(await currentNumber(file), 7);
  await rm(file);
  t.is(await currentNumber(file), undefined, 'removed');
});

test('concurrent fills of one column, in one process or two sharing the lock, store each activity once', async (t) => {
  const root = await mkdtemp(path.join(dir, 'concurrent-'));
  const activities = await Promise.all(Array.from({ length: 6 }, (_, i) => activity(root, 1_000 + i, i + 2)));
  const want = await expected(activities);
  const lock = processLock();
  const [a, b] = [fresh(root, lock), fresh(root, lock)];
  const places = await Promise.all([a, a, b, b].map((c, i) => c.place(USER, 'power', i % 2 ? activities : [...activities].reverse())));
  places.forEach((p, i) => samePlaced(t, p, i % 2 ? want : [...want].reverse()));
  t.is(await size(path.join(root, 'columns', 'power.1.log')), 6 * RECORD_BYTES, 'one record per activity');
  t.is(
    await size(path.join(root, 'columns', 'power.1.values')),
    want.reduce((n, w) => n + Math.ceil((w.length * 4) / 8) * 8, 0),
  );
});

test("the pool's threads read their chunk from the column file: the after-curves equal those computed from copies", async (t) => {
  const root = await mkdtemp(path.join(dir, 'pool-'));
  const activities = [await activity(root, 3_000, 3), await activity(root, 2_000, 7, { fraction: true }), await activity(root, 2_500, 5)];
  const place = await fresh(root).place(USER, 'power', activities);
  const pool = createEnginePool({ threads: 2 });
  try {
    const input = { thresholds: Float64Array.of(0, 50_000), durations: Int32Array.of(1, 5, 60, 600), step: 1 };
    const copy = (p: ColumnPlace, file = p.file): ColumnPlace => ({
      file,
      offset: p.offset.slice(),
      length: p.length.slice(),
      width: p.width.slice(),
    });
    const got = await pool.afterColumn({
      place: copy(place),
      ...input,
      thresholds: input.thresholds.slice(),
      durations: input.durations.slice(),
    });
    const copies = await expected(activities);
    const from = new Int32Array(3);
    const packed = new Float64Array(copies.reduce((n, c) => n + c.length, 0));
    copies.reduce((at, c, i) => ((from[i] = at), packed.set(c, at), at + c.length), 0);
    t.deepEqual(got, longitudinalAfter({ samples: { values: packed, from, length: Int32Array.from(copies, (c) => c.length) }, ...input }));
    // A file replaced meanwhile (a compaction) is a COLUMN_MOVED error the caller places again after.
    const moved = await t.throwsAsync(pool.afterColumn({ place: copy(place, `${place.file}.gone`), ...input }));
    t.regex(moved!.message, /^COLUMN_MOVED: /);
  } finally {
    await pool.close();
  }
});

test('a fill larger than one batch (2 M samples) is read and appended batch by batch, in the order asked', async (t) => {
  const root = await mkdtemp(path.join(dir, 'batches-'));
  const activities = [
    await activity(root, 1_500_000, 3),
    await activity(root, 900_000, 5, { fraction: true }),
    await activity(root, 40_000, 7),
  ];
  const columns = fresh(root);
  const place = await columns.place(USER, 'power', activities);
  samePlaced(t, place, await expected(activities));
  // Two batches: the first activity alone (the second would pass 2 M), then the other two; their records in that order.
  t.true(place.offset[0]! < place.offset[1]! && place.offset[1]! < place.offset[2]!);
  t.is(await size(path.join(root, 'columns', 'power.1.log')), 3 * RECORD_BYTES);
});

test("recordKey: a UUID's 32 lowercase hex digits, whatever its case; anything else is refused", (t) => {
  t.is(recordKey('0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b'), '0190a1b2c3d47e5f8a9b0c1d2e3f4a5b');
  t.is(recordKey('0190A1B2-C3D4-7E5F-8A9B-0C1D2E3F4A5B'), '0190a1b2c3d47e5f8a9b0c1d2e3f4a5b');
  t.is(recordKey('0190a1b2c3d47e5f8a9b0c1d2e3f4a5b'), '0190a1b2c3d47e5f8a9b0c1d2e3f4a5b');
  for (const bad of ['0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5g', '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5', 'abc', '../../etc/passwd', '']) {
    t.throws(() => recordKey(bad), { instanceOf: RangeError }, bad);
  }
});
