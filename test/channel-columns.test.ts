import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { createSampleStore, type SampleStore } from '../engine/samples/sample-file.ts';
import { createChannelColumns, slicesOf, type ColumnActivity, type ColumnListing } from '../engine/samples/channel-columns.ts';
import { readChannelInto } from '../engine/samples/sample-scan.ts';
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

/** Power with holes (NaN, stored as NULL: 0 in a column). */
function power(length: number, seed: number): Float64Array {
  return Float64Array.from({ length }, (_, i) => (i % 23 === 5 ? Number.NaN : 100 + ((i * seed) % 250) + seed / 8));
}

let next = 0;
/** Write a sample file and describe it as a listing does. */
async function activity(root: string, length: number, seed: number, stamp = 1): Promise<ColumnActivity> {
  const id = `a${String(++next).padStart(4, '0')}`;
  const file = path.join(root, 'samples', `${id}.parquet`);
  await store.writeSampleFile(file, { start: Date.UTC(2024, 0, 1) + next * 86_400_000, length, channels: { power: power(length, seed) } });
  return { id, stamp, samples: length, path: file };
}

async function rewrite(a: ColumnActivity, seed: number): Promise<void> {
  await store.writeSampleFile(a.path, { start: Date.UTC(2024, 0, 1), length: a.samples, channels: { power: power(a.samples, seed) } });
}

async function fresh(root: string) {
  return createChannelColumns(store, { maxBytes: 64 * 1024 * 1024, dir: () => path.join(root, 'columns') });
}

async function expected(activities: ColumnActivity[]): Promise<Float64Array[]> {
  const values = new Float64Array(activities.reduce((n, a) => n + a.samples, 0));
  await readChannelInto(store, activities.map((a) => a.path), 'power', values);
  let at = 0;
  return activities.map((a) => values.slice(at, (at += a.samples)));
}

function sameSlices(t: import('ava').ExecutionContext, column: Parameters<typeof slicesOf>[0], activities: ColumnActivity[], want: Float64Array[]) {
  const slices = slicesOf(column, activities);
  t.truthy(slices, 'every activity is in the column');
  t.true(slices!.values.buffer instanceof SharedArrayBuffer);
  activities.forEach((a, i) => {
    const got = slices!.values.subarray(slices!.from[i]!, slices!.from[i]! + slices!.length[i]!);
    t.deepEqual(Array.from(got), Array.from(want[i]!), a.id);
  });
}

test('a column holds each activity\'s samples, gaps as 0, for any subset in any order', async (t) => {
  const root = await mkdtemp(path.join(dir, 'subset-'));
  const activities = [await activity(root, 3_000, 3), await activity(root, 17, 5), await activity(root, 4_500, 7)];
  const columns = await fresh(root);
  const listing: ColumnListing = { version: '1', activities };
  const column = await columns.column(USER, 'power', '1', async () => listing);
  const want = await expected(activities);
  t.true(want[0]!.every((v) => Number.isFinite(v)) && want[0]![5] === 0, 'a NULL sample reads as 0');
  sameSlices(t, column, activities, want);
  sameSlices(t, column, [activities[2]!, activities[0]!], [want[2]!, want[0]!]);
  t.is(slicesOf(column, [{ id: 'nope', samples: 1 }]), undefined, 'an activity the column lacks');
  t.is(slicesOf(column, [{ id: activities[1]!.id, samples: 18 }]), undefined, 'another sample count is not the same activity');
});

test('a new version reads only what changed: kept slices come from the old column, new and re-stamped activities from their files', async (t) => {
  const root = await mkdtemp(path.join(dir, 'incremental-'));
  const [a, b, c] = [await activity(root, 2_000, 3), await activity(root, 1_500, 5), await activity(root, 900, 9)];
  const columns = await fresh(root);
  await columns.column(USER, 'power', '1', async () => ({ version: '1', activities: [a!, b!, c!] }));
  const wantA = (await expected([a!]))[0]!;

  // a's file is gone: version 2 can only be built if a's slice is reused rather than read again.
  await rm(a!.path);
  const d = await activity(root, 1_234, 11);
  const bAgain = { ...b!, stamp: 2 };
  await rewrite(bAgain, 13); // deleted and ingested again under the same id: a new stamp, new samples
  const v2 = await columns.column(USER, 'power', '2', async () => ({ version: '2', activities: [a!, bAgain, d] })); // c deleted
  t.is(v2.version, '2');
  sameSlices(t, v2, [a!, bAgain, d], [wantA, ...(await expected([bAgain, d]))]);
  t.is(slicesOf(v2, [c!]), undefined, 'a deleted activity is dropped');

  // The same version again is the same column, without listing.
  t.is(await columns.column(USER, 'power', '2', async () => t.fail('listed again') as never), v2);
});

test('a new newest activity grows the column in place: nothing copied, the old version\'s readers keep their view; any other change rebuilds', async (t) => {
  const root = await mkdtemp(path.join(dir, 'grow-'));
  const [a, b] = [await activity(root, 2_000, 3), await activity(root, 1_500, 5)];
  const columns = await fresh(root);
  const v1 = await columns.column(USER, 'power', '1', async () => ({ version: '1', activities: [a!, b!] }));
  const [wantA, wantB] = await expected([a!, b!]);
  t.true((v1.values.buffer as SharedArrayBuffer).growable, 'a column can grow');

  const c = await activity(root, 700, 7);
  const v2 = await columns.column(USER, 'power', '2', async () => ({ version: '2', activities: [a!, b!, c] }));
  t.is(v2.values.buffer, v1.values.buffer, 'the same shared memory, grown');
  t.is(v1.values.length, 3_500, 'the old version still ends where it did');
  sameSlices(t, v1, [a!, b!], [wantA!, wantB!]);
  sameSlices(t, v2, [a!, b!, c], [wantA!, wantB!, ...(await expected([c]))]);

  // Two versions built at once from v2 (each adds a different ride): one grows v2's buffer, the
  // other, finding it no longer ends where v2 does, copies. Each holds its own rides.
  const [d, e] = [await activity(root, 300, 9), await activity(root, 450, 13)];
  const [v3, v4] = await Promise.all([
    columns.column(USER, 'power', '3', async () => ({ version: '3', activities: [a!, b!, c, d] })),
    columns.column(USER, 'power', '4', async () => ({ version: '4', activities: [a!, b!, c, e] })),
  ]);
  t.is([v3, v4].filter((v) => v.values.buffer === v1.values.buffer).length, 1, 'one grew in place, the other copied');
  const [wantC, wantD, wantE] = await expected([c, d, e]);
  sameSlices(t, v3, [a!, b!, c, d], [wantA!, wantB!, wantC!, wantD!]);
  sameSlices(t, v4, [a!, b!, c, e], [wantA!, wantB!, wantC!, wantE!]);
  sameSlices(t, v2, [a!, b!, c], [wantA!, wantB!, wantC!]);
  const newest = v4.values.buffer === v1.values.buffer ? v3 : v4; // (the last one held)
  const other = newest === v3 ? e : d;
  const third = await columns.column(USER, 'power', '10', async () => ({ version: '10', activities: [a!, other] })); // b and c deleted
  t.not(third.values.buffer, newest.values.buffer, 'a deletion rebuilds');
  sameSlices(t, third, [a!, other], [wantA!, ...(await expected([other]))]);
  // An activity added before the newest (an old ride uploaded late) rebuilds too.
  const late = await activity(root, 400, 11);
  const fourth = await columns.column(USER, 'power', '11', async () => ({ version: '11', activities: [late, a!, other] }));
  t.not(fourth.values.buffer, third.values.buffer);
  sameSlices(t, fourth, [late, a!, other], [...(await expected([late])), wantA!, ...(await expected([other]))]);
});

test('on disk: another process loads the column without reading a sample file; a new version replaces it', async (t) => {
  const root = await mkdtemp(path.join(dir, 'disk-'));
  const activities = [await activity(root, 2_500, 3), await activity(root, 700, 5)];
  const want = await expected(activities);
  const first = await fresh(root);
  await first.column(USER, 'power', '7', async () => ({ version: '7', activities }));
  await first.saved();
  const files = await readdir(path.join(root, 'columns'));
  t.is(files.filter((f) => f.endsWith('.f64')).length, 1, 'one values file');

  for (const a of activities) await rm(a.path);
  const other = await fresh(root);
  sameSlices(t, await other.column(USER, 'power', '7', async () => ({ version: '7', activities })), activities, want);

  // A rebuild at a new version replaces the values file and removes the old one.
  const more = await activity(root, 300, 21);
  const third = await fresh(root);
  const v8 = await third.column(USER, 'power', '8', async () => ({ version: '8', activities: [...activities, more] }));
  await third.saved();
  sameSlices(t, v8, [...activities, more], [...want, ...(await expected([more]))]);
  t.is((await readdir(path.join(root, 'columns'))).filter((f) => f.endsWith('.f64')).length, 1, 'the replaced values file is removed');
});

test('a damaged cache on disk (index or values) is rebuilt from the sample files', async (t) => {
  const root = await mkdtemp(path.join(dir, 'damaged-'));
  const activities = [await activity(root, 1_200, 3), await activity(root, 800, 5)];
  const want = await expected(activities);
  const listing = async () => ({ version: '3', activities });
  const first = await fresh(root);
  await first.column(USER, 'power', '3', listing);
  await first.saved();
  const columnsDir = path.join(root, 'columns');
  const valuesFile = (await readdir(columnsDir)).find((f) => f.endsWith('.f64'))!;
  await writeFile(path.join(columnsDir, valuesFile), Buffer.alloc(16)); // truncated values
  sameSlices(t, await (await fresh(root)).column(USER, 'power', '3', listing), activities, want);
  await writeFile(path.join(columnsDir, 'power.json'), '{not json');
  sameSlices(t, await (await fresh(root)).column(USER, 'power', '3', listing), activities, want);
});

test('memory stays within maxBytes: the least recently used column is dropped first', async (t) => {
  const root = await mkdtemp(path.join(dir, 'lru-'));
  const columns = createChannelColumns(store, { maxBytes: 2 * 1_000 * 8, dir: () => path.join(root, 'columns') });
  const users = ['00000000-0000-4000-8000-00000000000a', '00000000-0000-4000-8000-00000000000b', '00000000-0000-4000-8000-00000000000c'];
  const listings = await Promise.all(users.map(async (_, i) => ({ version: '1', activities: [await activity(root, 1_000, i + 2)] })));
  await columns.column(users[0]!, 'power', '1', async () => listings[0]!);
  await columns.column(users[1]!, 'power', '1', async () => listings[1]!);
  t.is(columns.bytes, 16_000);
  await columns.column(users[0]!, 'power', '1', async () => t.fail('user a is still held') as never); // a is now the most recent
  await columns.column(users[2]!, 'power', '1', async () => listings[2]!);
  t.is(columns.bytes, 16_000, 'one column was dropped');
  await columns.column(users[0]!, 'power', '1', async () => t.fail('user a was dropped, not b') as never);
  let listedB = false;
  await columns.column(users[1]!, 'power', '1', async () => ((listedB = true), listings[1]!));
  t.true(listedB, 'b (least recently used) was dropped');
});

test('concurrent requests for one column share one build', async (t) => {
  const root = await mkdtemp(path.join(dir, 'flight-'));
  const activities = [await activity(root, 1_000, 3)];
  const columns = await fresh(root);
  let listed = 0;
  const list = async () => ((listed += 1), { version: '1', activities });
  const [x, y, z] = await Promise.all([1, 2, 3].map(() => columns.column(USER, 'power', '1', list)));
  t.is(listed, 1);
  t.true(x === y && y === z);
});

test('the pool reads a shared column in place: the after-curves equal those computed from copies', async (t) => {
  const root = await mkdtemp(path.join(dir, 'pool-'));
  const activities = [await activity(root, 3_000, 3), await activity(root, 2_000, 7), await activity(root, 2_500, 5)];
  const column = await (await fresh(root)).column(USER, 'power', '1', async () => ({ version: '1', activities }));
  const slices = slicesOf(column, activities)!;
  const pool = createEnginePool({ threads: 2 });
  try {
    const input = { thresholds: Float64Array.of(0, 50_000), durations: Int32Array.of(1, 5, 60, 600), step: 1 };
    const shared = await pool.run({ task: 'after', samples: slices, ...input, thresholds: input.thresholds.slice(), durations: input.durations.slice() });
    t.is(slices.values.length, column.values.length, 'the shared column is not detached');
    const copies = await expected(activities);
    const from = new Int32Array(3);
    const packed = new Float64Array(copies.reduce((n, c) => n + c.length, 0));
    copies.reduce((at, c, i) => ((from[i] = at), packed.set(c, at), at + c.length), 0);
    t.deepEqual(shared, longitudinalAfter({ samples: { values: packed, from, length: Int32Array.from(copies, (c) => c.length) }, ...input }));
  } finally {
    await pool.close();
  }
});
