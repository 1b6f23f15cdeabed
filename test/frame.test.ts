import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { parquetMetadata, parquetReadObjects, parquetSchema, type FileMetaData } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { createFrameWriter, pandasMetadata, type FrameWriter } from '../engine/frames/parquet-writer.ts';
import { frameLength, type Frame, type FrameColumn } from '../engine/frames/frame.ts';
import { frameToJson } from '../engine/frames/json.ts';
import { parquetToJsonStream } from '../engine/frames/parquet-to-json.ts';
import { PARQUET_MEDIA_TYPE, wantsJson } from '../api/rest/activities/content-negotiation.ts';
import { createSampleStore, sqlString, type SampleStore } from '../engine/samples/sample-file.ts';

let dir: string;
let store: SampleStore;
let writer: FrameWriter;

test.before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'frame-'));
  store = await createSampleStore({ fsync: false });
  writer = createFrameWriter(store);
});

test.after.always(async () => {
  await store?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const T0 = Date.UTC(2024, 4, 1, 7, 0, 0);
const LABELS = ['cycling.road', 'running.trail', 'ünïcödé ✓ "quoted" \'single\' \\ back', '🚴 emoji', 'line\nbreak\ttab\u0001ctl', ''];

/** A frame with every column type, nulls in each nullable column, unicode labels; `length` rows. */
function everyType(length: number): Frame {
  return {
    columns: [
      // NaN every 7th row; a sub-second instant every 5th.
      {
        name: 'timestamp',
        type: 'timestamptz',
        values: Float64Array.from({ length }, (_, i) => (i % 7 === 3 ? Number.NaN : T0 + i * 1000 + (i % 5 === 1 ? 250 : 0))),
      },
      {
        name: 'timestamp_local',
        type: 'timestamp',
        values: Float64Array.from({ length }, (_, i) => (i % 11 === 4 ? Number.NaN : T0 + 7_200_000 + i * 1000)),
      },
      {
        name: 'power',
        type: 'double',
        values: Float64Array.from({ length }, (_, i) => (i % 13 === 0 ? Number.NaN : 150.25 + (i % 300) - i / 7)),
      },
      { name: 'duration', type: 'int32', values: Int32Array.from({ length }, (_, i) => (i % 2 === 0 ? i : -i * 1000)) },
      {
        name: 'sport',
        type: 'string',
        codes: Int32Array.from({ length }, (_, i) => (i % 9 === 8 ? -1 : i % LABELS.length)),
        labels: LABELS,
      },
      { name: 'weird "name" ✓', type: 'double', values: Float64Array.from({ length }, (_, i) => i * 0.1) },
    ],
    index: ['power'],
    metadata: { note: `{"json": "with 'quotes' and \\"escapes\\""}`, 'key with space': 'ü' },
  };
}

/** The ISO text a JSON time value should have, from Date (the reference the fast formatter must match). */
function iso(ms: number, zoned: boolean): string | null {
  if (!Number.isFinite(ms)) return null;
  const text = new Date(ms).toISOString();
  const trimmed = text.endsWith('.000Z') ? text.slice(0, -5) : text.slice(0, -1);
  return zoned ? `${trimmed}Z` : trimmed;
}

/** The plain JS values frameToJson should produce for a column. */
function expectedJson(column: FrameColumn): unknown[] {
  switch (column.type) {
    case 'timestamptz':
      return Array.from(column.values, (v) => iso(v, true));
    case 'timestamp':
      return Array.from(column.values, (v) => iso(v, false));
    case 'double':
      return Array.from(column.values, (v) => (Number.isFinite(v) ? v : null));
    case 'int32':
      return Array.from(column.values);
    case 'string':
      return Array.from(column.codes, (code) => (code < 0 ? null : column.labels[code]));
  }
}

function expectedObject(frame: Frame): Record<string, unknown[]> {
  return Object.fromEntries(frame.columns.map((column) => [column.name, expectedJson(column)]));
}

async function arrayBuffer(file: string): Promise<ArrayBuffer> {
  const bytes = await readFile(file);
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}

/** Read a Parquet file with hyparquet (timestamps as bigint microseconds, so they are checked exactly). */
async function readBack(file: string): Promise<{ metadata: FileMetaData; rows: Record<string, unknown>[] }> {
  const buffer = await arrayBuffer(file);
  const metadata = parquetMetadata(buffer);
  const rows = await parquetReadObjects({ file: buffer, compressors, parsers: { timestampFromMicroseconds: (micros: bigint) => micros } });
  return { metadata, rows };
}

async function streamText(file: string): Promise<{ text: string; pieces: number }> {
  let text = '';
  let pieces = 0;
  for await (const piece of parquetToJsonStream(store, file)) {
    text += piece;
    pieces++;
  }
  return { text, pieces };
}

/** Compare the rows hyparquet read with the frame, value by value (first mismatch reported). */
function checkRows(t: ExecutionContext, frame: Frame, rows: Record<string, unknown>[]) {
  const length = frameLength(frame);
  t.is(rows.length, length);
  for (const column of frame.columns) {
    for (let i = 0; i < length; i++) {
      const got = rows[i]![column.name];
      let want: unknown;
      switch (column.type) {
        case 'timestamptz':
        case 'timestamp': {
          const v = column.values[i]!;
          want = Number.isFinite(v) ? BigInt(Math.round(v * 1000)) : null;
          break;
        }
        case 'double': {
          const v = column.values[i]!;
          want = Number.isNaN(v) ? null : v;
          break;
        }
        case 'int32':
          want = column.values[i];
          break;
        case 'string': {
          const code = column.codes[i]!;
          want = code < 0 ? null : column.labels[code];
          break;
        }
      }
      if (got !== want) {
        t.fail(`${column.name}[${i}]: got ${String(got)}, want ${String(want)}`);
        return;
      }
    }
  }
  t.pass();
}

function checkSchema(t: ExecutionContext, metadata: FileMetaData, frame: Frame) {
  const schema = parquetSchema(metadata);
  t.deepEqual(
    schema.children.map((child) => child.element.name),
    frame.columns.map((column) => column.name),
    'column names and order',
  );
  const elements = schema.children.map((child) => child.element);
  frame.columns.forEach((column, i) => {
    const element = elements[i]!;
    t.is(element.repetition_type, 'OPTIONAL', column.name);
    switch (column.type) {
      case 'timestamptz':
        t.is(element.type, 'INT64', column.name);
        t.deepEqual(element.logical_type, { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' }, column.name);
        break;
      case 'timestamp':
        t.is(element.type, 'INT64', column.name);
        t.deepEqual(element.logical_type, { type: 'TIMESTAMP', isAdjustedToUTC: false, unit: 'MICROS' }, column.name);
        break;
      case 'double':
        t.is(element.type, 'DOUBLE', column.name);
        break;
      case 'int32':
        t.is(element.type, 'INT32', column.name);
        t.true(element.converted_type === undefined || element.converted_type === 'INT_32', column.name);
        break;
      case 'string':
        t.is(element.type, 'BYTE_ARRAY', column.name);
        t.true(element.converted_type === 'UTF8' || element.logical_type?.type === 'STRING', column.name);
        break;
    }
  });
  for (const rowGroup of metadata.row_groups) {
    for (const chunk of rowGroup.columns) t.is(chunk.meta_data?.codec, 'ZSTD');
  }
}

function kv(metadata: FileMetaData): Record<string, string | undefined> {
  return Object.fromEntries((metadata.key_value_metadata ?? []).map((entry) => [entry.key, entry.value]));
}

test('every column type round-trips through Parquet (several chunks, nulls, unicode, metadata)', async (t) => {
  const frame = everyType(5_000); // > 2 × 2,048 rows: three chunks from the table function
  const file = path.join(dir, 'every', 'type.parquet'); // the directory is created
  await writer.writeParquet(frame, file);
  const { metadata, rows } = await readBack(file);
  t.is(Number(metadata.num_rows), 5_000);
  checkSchema(t, metadata, frame);
  checkRows(t, frame, rows);

  const values = kv(metadata);
  t.is(values.note, frame.metadata!.note);
  t.is(values['key with space'], 'ü');
  const pandas = JSON.parse(values.pandas!) as {
    index_columns: string[];
    columns: { name: string; field_name: string; pandas_type: string; numpy_type: string; metadata: unknown }[];
  };
  t.deepEqual(pandas.index_columns, ['power']);
  t.deepEqual(
    pandas.columns.map((c) => c.name),
    frame.columns.map((c) => c.name),
  );
  t.deepEqual(
    pandas.columns.find((c) => c.name === 'timestamp'),
    { name: 'timestamp', field_name: 'timestamp', pandas_type: 'datetimetz', numpy_type: 'datetime64[us]', metadata: { timezone: 'UTC' } },
  );
  t.is(values.pandas, pandasMetadata(frame));
});

test('a frame of one chunk (its strings fed as values, not looked up) round-trips the same: nulls, unicode, metadata', async (t) => {
  const frame = everyType(300);
  const file = path.join(dir, 'every', 'one-chunk.parquet');
  await writer.writeParquet(frame, file);
  const { metadata, rows } = await readBack(file);
  t.is(Number(metadata.num_rows), 300);
  checkSchema(t, metadata, frame);
  checkRows(t, frame, rows);
  t.is(kv(metadata).pandas, pandasMetadata(frame));
});

test('frameToJson: column order, ISO times, nulls, numbers', (t) => {
  const frame = everyType(3_000);
  const text = frameToJson(frame);
  const parsed = JSON.parse(text) as Record<string, unknown[]>;
  t.deepEqual(
    Object.keys(parsed),
    frame.columns.map((c) => c.name),
  );
  t.deepEqual(parsed, expectedObject(frame));

  const small: Frame = {
    columns: [
      { name: 'timestamp', type: 'timestamptz', values: Float64Array.from([T0, T0 + 250, Number.NaN, -1, Number.POSITIVE_INFINITY, 1.9]) },
      {
        name: 'timestamp_local',
        type: 'timestamp',
        values: Float64Array.from([Date.UTC(2024, 4, 1, 9), Date.UTC(2024, 4, 1, 9, 0, 0, 5), Number.NaN, -86_400_000, 0, 59_999]),
      },
      { name: 'power', type: 'double', values: Float64Array.from([1.5, Number.NaN, 0, -2, Number.POSITIVE_INFINITY, 1e21]) },
      { name: 'duration', type: 'int32', values: Int32Array.from([1, 2, 3, -4, 2 ** 31 - 1, -(2 ** 31)]) },
      { name: 'sport', type: 'string', codes: Int32Array.from([0, -1, 1, 1, 0, -1]), labels: ['a"b', 'ü'] },
    ],
  };
  t.is(
    frameToJson(small),
    '{"timestamp":["2024-05-01T07:00:00Z","2024-05-01T07:00:00.250Z",null,"1969-12-31T23:59:59.999Z",null,"1970-01-01T00:00:00.001Z"],' +
      '"timestamp_local":["2024-05-01T09:00:00","2024-05-01T09:00:00.005",null,"1969-12-31T00:00:00","1970-01-01T00:00:00","1970-01-01T00:00:59.999"],' +
      '"power":[1.5,null,0,-2,null,1e+21],' +
      '"duration":[1,2,3,-4,2147483647,-2147483648],' +
      '"sport":["a\\"b",null,"ü","ü","a\\"b",null]}',
  );
  t.is(frameToJson({ columns: [] }), '{}');
});

test('frameToJson times match Date.toISOString over many days, years and fractions', (t) => {
  // A deterministic spread: ±300 years around 1970 plus extended years, with and without ms.
  let seed = 12345;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const values = Float64Array.from({ length: 5_000 }, (_, i) => {
    if (i === 0) return -62_167_219_200_000; // 0000-01-01
    if (i === 1) return 253_402_300_799_999; // 9999-12-31T23:59:59.999
    if (i === 2) return 253_402_300_800_000; // +010000
    if (i === 3) return -62_167_219_200_001; // -000001
    const ms = Math.round((next() - 0.5) * 2 * 300 * 365.25 * 86_400_000);
    return i % 3 === 0 ? ms - (ms % 1000) : ms + (i % 4 === 0 ? 0.75 : 0);
  });
  for (const type of ['timestamptz', 'timestamp'] as const) {
    const parsed = JSON.parse(frameToJson({ columns: [{ name: 't', type, values }] })) as { t: (string | null)[] };
    t.deepEqual(
      parsed.t,
      Array.from(values, (v) => iso(v, type === 'timestamptz')),
    );
  }
});

test('an empty frame (0 rows) writes a Parquet file with the schema and no rows', async (t) => {
  const frame = everyType(0);
  const file = path.join(dir, 'empty.parquet');
  await writer.writeParquet(frame, file);
  const { metadata, rows } = await readBack(file);
  t.is(Number(metadata.num_rows), 0);
  t.deepEqual(rows, []);
  checkSchema(t, metadata, frame);
  t.deepEqual(JSON.parse(kv(metadata).pandas!).index_columns, ['power']);

  const empty = Object.fromEntries(frame.columns.map((c) => [c.name, []]));
  t.deepEqual(JSON.parse(frameToJson(frame)), empty);
  t.deepEqual(JSON.parse((await streamText(file)).text), empty);
});

test('a single row', async (t) => {
  const frame = everyType(1);
  const file = path.join(dir, 'one.parquet');
  await writer.writeParquet(frame, file);
  const { metadata, rows } = await readBack(file);
  checkSchema(t, metadata, frame);
  checkRows(t, frame, rows);
  t.deepEqual(JSON.parse((await streamText(file)).text), expectedObject(frame));
});

test('a string column with many labels (fed as VARCHAR) and all-null columns', async (t) => {
  const labels = Array.from({ length: 3_000 }, (_, i) => `activity-${i}-ü`);
  const length = 7_000;
  const frame: Frame = {
    columns: [
      {
        name: 'activity_id',
        type: 'string',
        codes: Int32Array.from({ length }, (_, i) => (i % 10 === 9 ? -1 : (i * 7) % labels.length)),
        labels,
      },
      { name: 'none', type: 'string', codes: new Int32Array(length).fill(-1), labels: [] },
      { name: 'nan', type: 'double', values: new Float64Array(length).fill(Number.NaN) },
      { name: 'never', type: 'timestamptz', values: new Float64Array(length).fill(Number.NaN) },
    ],
  };
  const file = path.join(dir, 'labels.parquet');
  await writer.writeParquet(frame, file);
  const { metadata, rows } = await readBack(file);
  checkSchema(t, metadata, frame);
  checkRows(t, frame, rows);
  t.is(kv(metadata).pandas, undefined, 'no pandas metadata without an index');
  t.deepEqual(JSON.parse((await streamText(file)).text), expectedObject(frame));
});

test('parquetToJsonStream of frames matches frameToJson', async (t) => {
  for (const length of [1, 2_048, 2_049, 5_000]) {
    const frame = everyType(length);
    const file = path.join(dir, `stream-${length}.parquet`);
    await writer.writeParquet(frame, file);
    const { text, pieces } = await streamText(file);
    t.deepEqual(JSON.parse(text), JSON.parse(frameToJson(frame)), `${length} rows`);
    // Key order is column order.
    t.deepEqual(
      Object.keys(JSON.parse(text) as object),
      frame.columns.map((c) => c.name),
    );
    if (length > 2_048) t.true(pieces > frame.columns.length * 2 + 2, 'several pieces per column');
  }
});

test('parquetToJsonStream reads a large DuckDB-written file in row ranges, yielding to the event loop', async (t) => {
  // 300,000 rows × 5 columns: more cells than the single-query path takes, so each column is read
  // in ranges of 131,072 rows (three ranges, the last one partial).
  const rows = 300_000;
  const file = path.join(dir, 'large.parquet');
  await store.withConnection((c) =>
    c.run(
      `COPY (SELECT make_timestamptz(${T0}::BIGINT * 1000 + range * 1000000) AS ts, ` +
        `CASE WHEN range % 1000 = 7 THEN NULL ELSE make_timestamp(${T0}::BIGINT * 1000 + range * 1500000) END AS local, ` +
        `CAST(range AS INTEGER) AS i, range * 3000000000 AS big, ` +
        `CASE WHEN range % 5 = 0 THEN NULL WHEN range % 5 = 1 THEN 'ü "x"' ELSE 'act-' || (range // 3600) END AS s, ` +
        `CASE WHEN range % 3 = 0 THEN NULL ELSE range / 4 END AS d ` +
        `FROM range(${rows})) TO ${sqlString(file)} (FORMAT parquet, COMPRESSION zstd)`,
    ),
  );
  let ticks = 0;
  let ticking = true;
  const tick = () => {
    ticks++;
    if (ticking) setImmediate(tick);
  };
  setImmediate(tick);
  const started = performance.now();
  const { text, pieces } = await streamText(file);
  ticking = false;
  t.log(
    `streamed ${rows} rows × 6 columns (${(text.length / 1e6).toFixed(1)} MB of JSON) in ${(performance.now() - started).toFixed(0)} ms, ${pieces} pieces`,
  );
  t.true(ticks > 100, `the event loop ran between chunks (${ticks} ticks)`);
  const parsed = JSON.parse(text) as Record<string, unknown[]>;
  t.deepEqual(Object.keys(parsed), ['ts', 'local', 'i', 'big', 's', 'd']);
  let bad = 0;
  for (let r = 0; r < rows; r++) {
    const ts = iso(T0 + r * 1000, true);
    const local = r % 1000 === 7 ? null : iso(T0 + r * 1500, false);
    const s = r % 5 === 0 ? null : r % 5 === 1 ? 'ü "x"' : `act-${Math.floor(r / 3600)}`;
    const d = r % 3 === 0 ? null : r / 4;
    if (
      parsed.ts![r] !== ts ||
      parsed.local![r] !== local ||
      parsed.i![r] !== r ||
      parsed.big![r] !== r * 3_000_000_000 ||
      parsed.s![r] !== s ||
      parsed.d![r] !== d
    ) {
      if (bad++ === 0) t.log(`row ${r}:`, parsed.ts![r], parsed.local![r], parsed.i![r], parsed.big![r], parsed.s![r], parsed.d![r]);
    }
    for (const name of Object.keys(parsed)) if (parsed[name]!.length !== rows) bad++;
  }
  t.is(bad, 0);
  // BIGINT is written exactly, also beyond 2^53.
  const huge = path.join(dir, 'huge.parquet');
  await store.withConnection((c) =>
    c.run(`COPY (SELECT 9007199254740993::BIGINT AS b, true AS flag) TO ${sqlString(huge)} (FORMAT parquet)`),
  );
  t.is((await streamText(huge)).text, '{"b":[9007199254740993],"flag":[true]}');
});

test('parquetToJsonStream of a missing file rejects with ENOENT', async (t) => {
  await t.throwsAsync(streamText(path.join(dir, 'missing.parquet')), { code: 'ENOENT' });
  await t.throwsAsync(streamText(path.join(dir, 'glob*.parquet')), { instanceOf: RangeError });
});

test('toParquetBuffer returns the file and removes it; concurrent writes keep their own data', async (t) => {
  const tmp = path.join(dir, 'tmp');
  const frames = Array.from({ length: 8 }, (_, k) => everyType(100 + k * 500));
  const [buffers] = await Promise.all([
    Promise.all(frames.map((frame) => writer.toParquetBuffer(frame, tmp))),
    // Interleaved with the sample store's own use of the connection.
    store.writeSampleFile(path.join(dir, 'samples.parquet'), { start: T0, length: 10, channels: { power: new Float64Array(10).fill(1) } }),
  ]);
  t.deepEqual(await readdir(tmp), []);
  for (let k = 0; k < frames.length; k++) {
    const buffer = buffers[k]!;
    t.is(buffer.subarray(0, 4).toString('latin1'), 'PAR1');
    const ab = buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.byteLength) as ArrayBuffer;
    const rows = await parquetReadObjects({ file: ab, compressors, parsers: { timestampFromMicroseconds: (micros: bigint) => micros } });
    checkRows(t, frames[k]!, rows);
  }
});

test('a second store (another connection) registers the table function too', async (t) => {
  const other = await createSampleStore({ fsync: false });
  try {
    const file = path.join(dir, 'other.parquet');
    const frame = everyType(10);
    await createFrameWriter(other).writeParquet(frame, file);
    checkRows(t, frame, (await readBack(file)).rows);
  } finally {
    await other.close();
  }
});

test('bad frames and paths are refused', async (t) => {
  const ok = (): FrameColumn => ({ name: 'a', type: 'double', values: new Float64Array(3) });
  const cases: [string, Frame][] = [
    ['unequal lengths', { columns: [ok(), { name: 'b', type: 'int32', values: new Int32Array(2) }] }],
    ['code out of range', { columns: [ok(), { name: 'b', type: 'string', codes: Int32Array.from([0, 1, 2]), labels: ['x', 'y'] }] }],
    ['code below -1', { columns: [ok(), { name: 'b', type: 'string', codes: Int32Array.from([0, -2, 0]), labels: ['x'] }] }],
    ['duplicate names', { columns: [ok(), ok()] }],
    ['wrong array type', { columns: [ok(), { name: 'b', type: 'int32', values: new Float64Array(3) as unknown as Int32Array }] }],
    ['index not a column', { columns: [ok()], index: ['b'] }],
    ['pandas metadata twice', { columns: [ok()], index: ['a'], metadata: { pandas: '{}' } }],
  ];
  for (const [label, frame] of cases) {
    t.throws(() => frameToJson(frame), undefined, label);
    await t.throwsAsync(writer.writeParquet(frame, path.join(dir, 'bad.parquet')), undefined, label);
  }
  await t.throwsAsync(writer.writeParquet({ columns: [] }, path.join(dir, 'bad.parquet')), { instanceOf: RangeError });
  await t.throwsAsync(writer.writeParquet({ columns: [ok()] }, path.join(dir, 'bad[1].parquet')), { instanceOf: RangeError });
  t.deepEqual(
    (await readdir(dir)).filter((name) => name.startsWith('bad')),
    [],
  );
});

test("pandasMetadata follows pyarrow's layout", (t) => {
  const frame = everyType(1);
  const meta = JSON.parse(pandasMetadata(frame));
  t.deepEqual(meta.index_columns, ['power']);
  t.is(meta.column_indexes.length, 1);
  t.like(meta.creator, { library: 'training-data-service' });
  t.is(typeof meta.pandas_version, 'string');
  t.deepEqual(
    meta.columns.map((c: { pandas_type: string; numpy_type: string }) => [c.pandas_type, c.numpy_type]),
    [
      ['datetimetz', 'datetime64[us]'],
      ['datetime', 'datetime64[us]'],
      ['float64', 'float64'],
      ['int32', 'int32'],
      ['unicode', 'object'],
      ['float64', 'float64'],
    ],
  );
  t.deepEqual(JSON.parse(pandasMetadata({ columns: frame.columns })).index_columns, []);
});

test("wantsJson: format wins, then the Accept header's preference, default Parquet", (t) => {
  t.is(PARQUET_MEDIA_TYPE, 'application/vnd.apache.parquet');
  const cases: [string | undefined, string | undefined, boolean][] = [
    [undefined, undefined, false],
    ['', undefined, false],
    ['*/*', undefined, false],
    ['application/json', undefined, true],
    ['application/json; charset=utf-8', undefined, true],
    ['Application/JSON', undefined, true],
    ['application/json', 'parquet', false],
    ['application/vnd.apache.parquet', 'json', true],
    [undefined, 'json', true],
    [undefined, 'JSON', true],
    ['application/vnd.apache.parquet', undefined, false],
    ['application/octet-stream', undefined, false],
    ['application/json, application/vnd.apache.parquet', undefined, false],
    ['application/json, application/vnd.apache.parquet;q=0.5', undefined, true],
    ['application/vnd.apache.parquet;q=0.9, application/json', undefined, true],
    ['application/json;q=0.5, application/octet-stream', undefined, false],
    ['application/json, */*;q=0.1', undefined, true],
    ['application/*', undefined, false],
    ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', undefined, false],
    ['application/json;q=0', undefined, false],
    ['text/csv', undefined, false],
  ];
  for (const [accept, format, want] of cases) t.is(wantsJson(accept, format), want, `Accept ${accept} format ${format}`);
});

test('timings (logged, not asserted)', async (t) => {
  const file = path.join(dir, 'timing.parquet');
  for (const length of [1, 1_500, 20_000]) {
    const frame = everyType(length);
    frame.columns.splice(5, 1); // 5 columns + one more double: 6 columns
    frame.columns.push({ name: 'speed', type: 'double', values: Float64Array.from({ length }, (_, i) => i / 3) });
    for (let k = 0; k < 3; k++) await writer.writeParquet(frame, file);
    const times: number[] = [];
    for (let k = 0; k < 15; k++) {
      const started = performance.now();
      await writer.writeParquet(frame, file);
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    const json = performance.now();
    frameToJson(frame);
    const jsonMs = performance.now() - json;
    t.log(
      `${length} rows × 6 columns: writeParquet min ${times[0]!.toFixed(2)} ms, median ${times[7]!.toFixed(2)} ms; frameToJson ${jsonMs.toFixed(2)} ms`,
    );
  }
  t.pass();
});
