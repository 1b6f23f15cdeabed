import { mkdtemp, readdir, readFile, rm, mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { parquetMetadata, parquetReadObjects, parquetSchema } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { CHANNELS, type Channel } from '../engine/channels.ts';
import { createSampleStore, SAMPLE_COLUMNS, sampleFilesSql, type SampleData, type SampleStore } from '../engine/samples/sample-file.ts';

let dir: string;
let store: SampleStore;

test.before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'sample-file-'));
  store = await createSampleStore();
});

test.after.always(async () => {
  await store?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** A deterministic activity: power/heart_rate/speed/altitude with holes, the other channels absent. */
function activity(length: number, seed = 1, start = Date.UTC(2024, 4, 17, 6, 30, 0)): SampleData {
  const channels: Partial<Record<Channel, Float64Array>> = {
    power: Float64Array.from({ length }, (_, i) => (i % 17 === 3 ? Number.NaN : 150 + ((i * seed) % 300))),
    heart_rate: Float64Array.from({ length }, (_, i) => (i < 5 ? Number.NaN : 100 + (i % 60))),
    speed: Float64Array.from({ length }, (_, i) => 7.25 + Math.sin(i / 13 + seed) * 2.5),
    altitude: Float64Array.from({ length }, (_, i) => (i % 101 === 0 ? Number.NaN : -12.5 + i / 7)),
    latitude: Float64Array.from({ length }, () => Number.NaN), // present but empty
  };
  return { start, length, channels };
}

function sameValues(t: import('ava').ExecutionContext, got: Float64Array | undefined, want: Float64Array | undefined, label: string) {
  t.truthy(got, label);
  t.is(got!.length, want!.length, label);
  for (let i = 0; i < want!.length; i++) {
    if (!Object.is(got![i], want![i])) {
      t.fail(`${label}[${i}]: got ${got![i]}, want ${want![i]}`);
      return;
    }
  }
  t.pass();
}

test('round trip: values, NaN/NULL, absent channels, subsets', async (t) => {
  const data = activity(3_600, 3);
  const file = path.join(dir, 'rt', 'a', 'activity-1.parquet');
  await store.writeSampleFile(file, data);

  const all = await store.readSampleFile(file);
  t.is(all.start, data.start);
  t.is(all.length, data.length);
  t.deepEqual(Object.keys(all.channels), [...CHANNELS]);
  for (const channel of CHANNELS) {
    const want = data.channels[channel] ?? new Float64Array(data.length).fill(Number.NaN);
    sameValues(t, all.channels[channel], want, channel);
  }

  const some = await store.readSampleFile(file, ['speed', 'power', 'speed']);
  t.deepEqual(Object.keys(some.channels), ['speed', 'power']);
  sameValues(t, some.channels.speed, data.channels.speed, 'speed');
  sameValues(t, some.channels.power, data.channels.power, 'power');

  await t.throwsAsync(store.readSampleFile(file, ['watts']), { instanceOf: RangeError });
  await t.throwsAsync(store.readSampleFile(path.join(dir, 'rt', 'missing.parquet')), { code: 'ENOENT' });
  await t.throwsAsync(store.readSampleFile(file, ['power"; DROP TABLE x; --']), { instanceOf: RangeError });
});

test('extreme values survive; a single sample; a start with milliseconds', async (t) => {
  const values = Float64Array.from([0, -0, 1e-300, -1e300, Number.MAX_VALUE, Number.MIN_VALUE, Infinity, -Infinity, Number.NaN, 0.1 + 0.2]);
  const file = path.join(dir, 'extreme.parquet');
  await store.writeSampleFile(file, { start: 1_700_000_000_123, length: values.length, channels: { power: values } });
  const back = await store.readSampleFile(file, ['power']);
  t.is(back.start, 1_700_000_000_123);
  sameValues(t, back.channels.power, values, 'power');

  const one = path.join(dir, 'one.parquet');
  await store.writeSampleFile(one, { start: 0, length: 1, channels: { heart_rate: Float64Array.of(61) } });
  const oneBack = await store.readSampleFile(one, ['heart_rate', 'power']);
  t.is(oneBack.start, 0);
  t.is(oneBack.length, 1);
  t.deepEqual([...oneBack.channels.heart_rate!], [61]);
  t.true(Number.isNaN(oneBack.channels.power![0]));
});

test('bad input is refused before anything is written', async (t) => {
  const file = path.join(dir, 'bad', 'x.parquet');
  await t.throwsAsync(store.writeSampleFile(file, { start: 0, length: 0, channels: {} }), { instanceOf: RangeError });
  await t.throwsAsync(store.writeSampleFile(file, { start: 0.5, length: 1, channels: {} }), { instanceOf: RangeError });
  await t.throwsAsync(store.writeSampleFile(file, { start: 0, length: 3, channels: { power: new Float64Array(2) } }), {
    instanceOf: RangeError,
  });
  await t.throwsAsync(store.writeSampleFile(file, { start: 0, length: 1, channels: { watts: new Float64Array(1) } as never }), {
    instanceOf: RangeError,
  });
  await t.throwsAsync(store.writeSampleFile(path.join(dir, 'glob*', 'x.parquet'), activity(3)), { instanceOf: RangeError });
  await t.throwsAsync(readdir(path.join(dir, 'bad')), { code: 'ENOENT' });
});

test('an independent reader (hyparquet) sees the documented schema, types and values', async (t) => {
  const data = activity(5_000, 7);
  const file = path.join(dir, 'hyparquet.parquet');
  await store.writeSampleFile(file, data);
  const bytes = await readFile(file);
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;

  const metadata = parquetMetadata(buffer);
  t.is(Number(metadata.num_rows), data.length);
  const schema = parquetSchema(metadata);
  t.deepEqual(
    schema.children.map((c) => c.element.name),
    [...SAMPLE_COLUMNS],
  );
  const [ts, ...channels] = schema.children.map((c) => c.element);
  t.is(ts!.type, 'INT64');
  t.like(ts!.logical_type, { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' });
  for (const column of channels) {
    t.is(column.type, 'DOUBLE', column.name);
    t.is(column.repetition_type, 'OPTIONAL', column.name);
  }
  for (const rowGroup of metadata.row_groups) {
    for (const chunk of rowGroup.columns) t.is(chunk.meta_data?.codec, 'ZSTD');
  }
  t.deepEqual(
    metadata.key_value_metadata?.filter((kv) => kv.key === 'sample_file_version').map((kv) => kv.value),
    ['1'],
  );

  const rows = await parquetReadObjects({ file: buffer, compressors });
  t.is(rows.length, data.length);
  let bad = 0;
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    const instant = row.timestamp instanceof Date ? row.timestamp.getTime() : Number(row.timestamp) / 1000;
    if (instant !== data.start + i * 1000) bad++;
    for (const channel of CHANNELS) {
      const want = data.channels[channel]?.[i];
      const got = row[channel] as number | null;
      if (want === undefined || Number.isNaN(want) ? got !== null : got !== want) bad++;
    }
  }
  t.is(bad, 0, 'every timestamp and value as written, NULL where NaN or absent');
});

test('writes are atomic: no temporary files remain, a rewrite replaces the file, a failed write cleans up', async (t) => {
  const sub = path.join(dir, 'atomic');
  const file = path.join(sub, 'a.parquet');
  await store.writeSampleFile(file, activity(100, 1));
  await store.writeSampleFile(file, activity(200, 2));
  t.is((await store.readSampleFile(file, ['power'])).length, 200);

  // The target is a directory: the rename fails, the temporary file must go.
  const blocked = path.join(sub, 'blocked.parquet');
  await mkdir(path.join(blocked, 'inside'), { recursive: true });
  await t.throwsAsync(store.writeSampleFile(blocked, activity(10)));

  // DuckDB cannot write (a file where the directory should be): nothing is left either.
  await writeFile(path.join(sub, 'not-a-dir'), 'x');
  await t.throwsAsync(store.writeSampleFile(path.join(sub, 'not-a-dir', 'b.parquet'), activity(10)));

  const names = await readdir(sub);
  t.deepEqual(
    names.filter((n) => n.includes('.tmp-')),
    [],
  );
  t.deepEqual(names.sort(), ['a.parquet', 'blocked.parquet', 'not-a-dir']);
});

test('concurrent writes and reads from one store', async (t) => {
  const n = 12;
  const datas = Array.from({ length: n }, (_, i) => activity(600 + i * 250, i + 1, Date.UTC(2023, 0, 1 + i)));
  const files = datas.map((_, i) => path.join(dir, 'concurrent', String(i % 3), `${i}.parquet`));
  await Promise.all(datas.map((d, i) => store.writeSampleFile(files[i]!, d)));
  const back = await Promise.all(files.map((f) => store.readSampleFile(f)));
  for (let i = 0; i < n; i++) {
    t.is(back[i]!.start, datas[i]!.start);
    t.is(back[i]!.length, datas[i]!.length);
    sameValues(t, back[i]!.channels.power, datas[i]!.channels.power, `power ${i}`);
    sameValues(t, back[i]!.channels.altitude, datas[i]!.channels.altitude, `altitude ${i}`);
  }
  // Interleaved writes and reads of the same files, round after round: each read sees one whole
  // version of its file, the one before the write or the one after (DuckDB opens a file twice per
  // read; a replace in between is read again, not failed: this flaked under load before that).
  const rounds = 40;
  for (let r = 1; r <= rounds; r++) {
    const reads = await Promise.all([
      ...files.map((f, i) => store.writeSampleFile(f, datas[(i + r) % n]!).then(() => undefined)),
      ...files.map((f) => store.readSampleFile(f, ['power'])),
    ]);
    reads.slice(n).forEach((got, i) => {
      const version = [datas[(i + r - 1) % n]!, datas[(i + r) % n]!].find((d) => d.length === got!.length);
      if (!version) t.fail(`round ${r}, file ${i}: ${got!.length} rows is neither version`);
      else if (!got!.channels.power!.every((v, k) => Object.is(v, version.channels.power![k])))
        t.fail(`round ${r}, file ${i}: values of neither version`);
    });
  }
  const after = await Promise.all(files.map((f) => store.readSampleFile(f, ['power'])));
  after.forEach((a, i) => t.is(a.length, datas[(i + rounds) % n]!.length));
  for (const sub of ['0', '1', '2']) {
    t.deepEqual(
      (await readdir(path.join(dir, 'concurrent', sub))).filter((f) => f.includes('.tmp-')),
      [],
    );
  }

  // Many files scanned at once with the exported naming.
  const total = await store.withConnection(async (c) => {
    const reader = await c.runAndReadAll(
      `SELECT count(*)::INTEGER AS n, count(DISTINCT filename)::INTEGER AS files, count(power)::INTEGER AS p FROM ${sampleFilesSql(files, { filename: true })}`,
    );
    return reader.getRowObjectsJS()[0];
  });
  const expectedRows = files.reduce((s, _, i) => s + datas[(i + rounds) % n]!.length, 0);
  const expectedPower = files.reduce((s, _, i) => s + datas[(i + rounds) % n]!.channels.power!.filter((v) => !Number.isNaN(v)).length, 0);
  t.deepEqual(total, { n: expectedRows, files: n, p: expectedPower });
});

test('a 4 h activity (14,400 rows × 12 channels): write and read time', async (t) => {
  const length = 14_400;
  const channels = Object.fromEntries(
    CHANNELS.map((c, k) => [
      c,
      Float64Array.from({ length }, (_, i) => (i % 311 === k ? Number.NaN : Math.round(200 + 150 * Math.sin(i / (20 + k))))),
    ]),
  ) as Record<Channel, Float64Array>;
  const data: SampleData = { start: Date.UTC(2024, 5, 1, 5), length, channels };
  const file = path.join(dir, 'four-hours.parquet');
  const writes: number[] = [];
  const reads: number[] = [];
  for (let i = 0; i < 12; i++) {
    let t0 = performance.now();
    await store.writeSampleFile(file, data);
    writes.push(performance.now() - t0);
    t0 = performance.now();
    await store.readSampleFile(file);
    reads.push(performance.now() - t0);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const back = await store.readSampleFile(file);
  for (const c of CHANNELS) sameValues(t, back.channels[c], channels[c], c);
  const size = (await readFile(file)).byteLength;
  t.log(
    `4 h × 12 channels: write p50 ${median(writes).toFixed(1)} ms (min ${Math.min(...writes).toFixed(1)}), read p50 ${median(reads).toFixed(1)} ms (min ${Math.min(...reads).toFixed(1)}), ${(size / 1024).toFixed(0)} KiB`,
  );
});

test('close waits for queued work and refuses new work', async (t) => {
  const own = await createSampleStore({ threads: 1 });
  const file = path.join(dir, 'close.parquet');
  const writing = own.writeSampleFile(file, activity(1000));
  await own.close();
  await t.notThrowsAsync(writing);
  await t.throwsAsync(own.readSampleFile(file), { message: /closed/ });
  await own.close();
});
