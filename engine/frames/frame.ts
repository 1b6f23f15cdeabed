/**
 * Data frames as the API serves them (API.md "Activities"): Parquet (zstd) by default, column-oriented
 * JSON (`{"timestamp":[…],"power":[…]}`) on request.
 *
 * A Frame is a list of equally long typed columns:
 *
 *   timestamptz  Float64Array of epoch ms (UTC), NaN → NULL. Parquet INT64 TIMESTAMP(isAdjustedToUTC =
 *                true, MICROS), DuckDB TIMESTAMP WITH TIME ZONE; JSON "2024-05-01T07:00:00Z".
 *   timestamp    Float64Array of naive local wall time as epoch ms of that wall time read as UTC, NaN →
 *                NULL. Parquet TIMESTAMP(isAdjustedToUTC = false, MICROS); JSON "2024-05-01T09:00:00".
 *   int32        Int32Array. Parquet INT32; JSON numbers.
 *   double       Float64Array, NaN → NULL. Parquet DOUBLE; JSON numbers (NaN/±Infinity → null; ±Infinity
 *                is kept as is in Parquet).
 *   string       dictionary-coded: Int32Array codes into `labels`, -1 → NULL. Parquet BYTE_ARRAY UTF8
 *                (DuckDB VARCHAR); JSON strings.
 *
 * Timestamps that are not finite (NaN, ±Infinity) are written as NULL. Sub-millisecond fractions of
 * epoch ms are kept in Parquet (rounded to µs) and truncated to ms in JSON (as Date does).
 *
 * Parquet writing (the way engine/samples/sample-file.ts found fastest with @duckdb/node-api 1.5.5): a JS table
 * function (engine/samples/array-source.ts), registered once per connection (inside `withConnection`), hands the typed arrays to
 * DuckDB in 2,048-row chunks (DOUBLE vectors for doubles and timestamps, NaN passed as is; INTEGER
 * vectors for int32 columns and string codes) straight into `COPY (SELECT …) TO file (FORMAT parquet,
 * COMPRESSION zstd, KV_METADATA {…})`, written beside the target and renamed over it. The SELECT does
 * the per-value work in DuckDB's vectorised code: NaN → NULL (`CASE WHEN isnan(x) …`), ms → µs
 * timestamps (`make_timestamptz(CAST(x * 1000 AS BIGINT))`) and code → label
 * (`list_element(CAST([labels…] AS VARCHAR[]), code + 1)`). Setting VARCHAR items from JS costs one
 * native call per value in `flush` (~5.5 ms for 20,000 rows) but does not grow with the number of
 * labels, while the list literal is parsed per write (20,000 rows: 2.4 ms with 6 labels, 4.2 ms with
 * 500, 21 ms with 5,000): string columns with more than MAX_LIST_LABELS labels are fed as VARCHAR.
 * One scan thread (rows leave in order; `preserve_insertion_order` is on in the store).
 *
 * Measured on this 2-core machine (other work running; min / median of 30, no fsync), 6 columns
 * (timestamptz, timestamp, 2 × double, int32, string): 1 row 1.6 / 1.8 ms, 1,500 rows 2.1 / 2.2 ms,
 * 20,000 rows 6.9 / 12 ms. DuckDB's own COPY of the same 20,000 rows from a table takes 4.4 ms
 * (3.5 ms with COMPRESSION_LEVEL 1), so the table function path adds ~2.5 ms (chunk hand-offs to the
 * JS thread, setItem loops ~0.6 ms). frameToJson: 1,500 rows 0.35 ms, 20,000 rows 5.5 ms (times are
 * formatted as bytes, ~65 ns each; toISOString per value was ~500 ns).
 *
 * Parquet → JSON streaming reads the file through DuckDB in row ranges (`file_row_number`, which
 * DuckDB prunes to the row groups it needs: 100,000 rows of a 20 M row file in 4 ms), materialised
 * natively one column × range at a time (small files: all non-string columns in one query), and
 * converts each 2,048-row chunk to JSON text outside the connection's queue, yielding to the event
 * loop between chunks. Strings come as JSON text aggregated by DuckDB, one string per 2,048 values
 * (decoding VARCHARs one by one through the vector API costs ~0.6 µs each, 4× more). Measured:
 * 1,500 × 6 in 4.3 ms, 20,000 × 6 in 12 ms, 200,000 × 6 in 100 ms.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import {
  DuckDBTypeId,
  type DuckDBBigIntVector,
  type DuckDBBooleanVector,
  type DuckDBDataChunk,
  type DuckDBDoubleVector,
  type DuckDBMaterializedResult,
  type DuckDBVarCharVector,
} from '@duckdb/node-api';
import { assertPlainPath, PARQUET_COPY_OPTIONS, sqlIdentifier, sqlString, type SampleStore } from '../samples/sample-file.ts';
import { arraySourceFunction, CHUNK_ROWS, type ArraySource, type SourceArray } from '../samples/array-source.ts';

export type FrameColumn =
  | { name: string; type: 'timestamptz'; values: Float64Array } // epoch ms UTC; NaN → null. Parquet INT64 TIMESTAMP(isAdjustedToUTC=true, MICROS)
  | { name: string; type: 'timestamp'; values: Float64Array } // naive wall time as epoch ms of that wall time read as UTC; NaN → null. TIMESTAMP(isAdjustedToUTC=false, MICROS)
  | { name: string; type: 'int32'; values: Int32Array } // Parquet INT32
  | { name: string; type: 'double'; values: Float64Array } // NaN → null. Parquet DOUBLE
  | { name: string; type: 'string'; codes: Int32Array; labels: string[] }; // dictionary-coded; code -1 → null. Parquet BYTE_ARRAY UTF8

export interface Frame {
  columns: FrameColumn[];
  /** Column names pandas should restore as the index (value-indexed frames); written as pandas metadata. */
  index?: string[];
  /** Extra Parquet key-value metadata (string values). */
  metadata?: Record<string, string>;
}

/** The media type of Parquet responses. */
export const PARQUET_MEDIA_TYPE = 'application/vnd.apache.parquet';


// ---------------------------------------------------------------------------------------------
// Shape

function columnLength(column: FrameColumn): number {
  return column.type === 'string' ? column.codes.length : column.values.length;
}

/** The number of rows (the first column's length; 0 without columns). */
export function frameLength(frame: Frame): number {
  const first = frame.columns[0];
  return first === undefined ? 0 : columnLength(first);
}

/** Validate a frame at the edge (types, equal lengths, unique names, codes in range, index, metadata); returns its length. */
function checkFrame(frame: Frame): number {
  const length = frameLength(frame);
  const names = new Set<string>();
  for (const column of frame.columns) {
    const label = JSON.stringify(column.name);
    if (typeof column.name !== 'string' || column.name === '') throw new RangeError('A frame column needs a non-empty name');
    if (names.has(column.name)) throw new RangeError(`Duplicate frame column ${label}`);
    names.add(column.name);
    switch (column.type) {
      case 'timestamptz':
      case 'timestamp':
      case 'double':
        if (!(column.values instanceof Float64Array)) throw new TypeError(`Column ${label} (${column.type}) must be a Float64Array`);
        break;
      case 'int32':
        if (!(column.values instanceof Int32Array)) throw new TypeError(`Column ${label} (int32) must be an Int32Array`);
        break;
      case 'string': {
        if (!(column.codes instanceof Int32Array)) throw new TypeError(`Column ${label} (string) codes must be an Int32Array`);
        if (!Array.isArray(column.labels)) throw new TypeError(`Column ${label} (string) labels must be an array`);
        for (const value of column.labels) {
          if (typeof value !== 'string') throw new TypeError(`Column ${label} has a label that is not a string`);
        }
        const { codes } = column;
        const count = column.labels.length;
        for (let i = 0; i < codes.length; i++) {
          const code = codes[i]!;
          if (code < -1 || code >= count) throw new RangeError(`Column ${label} has code ${code} at row ${i}; expected -1 … ${count - 1}`);
        }
        break;
      }
      default:
        throw new TypeError(`Column ${label} has unknown type ${JSON.stringify((column as { type: unknown }).type)}`);
    }
    if (columnLength(column) !== length) {
      throw new RangeError(`Column ${label} has ${columnLength(column)} rows, expected ${length} (all columns of a frame have the same length)`);
    }
  }
  if (frame.index !== undefined) {
    const seen = new Set<string>();
    for (const name of frame.index) {
      if (!names.has(name)) throw new RangeError(`Index column ${JSON.stringify(name)} is not a column of the frame`);
      if (seen.has(name)) throw new RangeError(`Index column ${JSON.stringify(name)} is named twice`);
      seen.add(name);
    }
  }
  if (frame.metadata !== undefined) {
    for (const [key, value] of Object.entries(frame.metadata)) {
      if (typeof value !== 'string') throw new TypeError(`Metadata ${JSON.stringify(key)} must be a string`);
      if (key === 'pandas' && frame.index !== undefined) throw new RangeError('Metadata key "pandas" is written from the frame\'s index');
    }
  }
  return length;
}

// ---------------------------------------------------------------------------------------------
// JSON

const MS_PER_DAY = 86_400_000;
/** 0000-01-01T00:00:00Z and 10000-01-01T00:00:00Z: the range where ISO text has a plain 4-digit year. */
const MIN_PLAIN_MS = -62_167_219_200_000;
const MAX_PLAIN_MS = 253_402_300_800_000;
/** The most bytes one time value takes in JSON: `,"+275760-09-13T00:00:00.000Z"` (extended years) is 31. */
const MAX_TIME_BYTES = 32;
const QUOTE = 0x22;
const COMMA = 0x2c;
const COLON = 0x3a;
const DOT = 0x2e;
const ZERO = 0x30;
const NULL_BYTES = [0x6e, 0x75, 0x6c, 0x6c]; // null

// The "YYYY-MM-DDT" bytes of the last day written: consecutive values are mostly on the same day.
let cachedDay = Number.NaN;
const cachedDayPrefix = new Uint8Array(11);

/**
 * Comma-separated JSON text of `values[start, end)` as ISO 8601 times: quoted "2024-05-01T07:00:00"
 * (whole seconds) or "2024-05-01T07:00:00.250" (truncated to ms, as Date does), with a "Z" when
 * `zoned`; null for NaN/±Infinity. The same text as `new Date(ms).toISOString()` (minus the zone
 * and a ".000"), written as ASCII bytes into one buffer: ~10× faster than formatting strings per
 * value (the date part is cached per day, the time of day is arithmetic).
 */
function timesJson(values: Float64Array, start: number, end: number, zoned: boolean): string {
  const bytes = Buffer.allocUnsafe(Math.max(0, end - start) * MAX_TIME_BYTES);
  let p = 0;
  for (let i = start; i < end; i++) {
    if (i > start) bytes[p++] = COMMA;
    const value = values[i]!;
    if (!Number.isFinite(value)) {
      for (const b of NULL_BYTES) bytes[p++] = b;
      continue;
    }
    const ms = Math.trunc(value);
    if (ms < MIN_PLAIN_MS || ms >= MAX_PLAIN_MS) {
      // Extended years ("+010000-…"): rare, the slow way (throws beyond ±8.64e15 ms, as Date does).
      const iso = new Date(ms).toISOString();
      const text = iso.endsWith('.000Z') ? iso.slice(0, -5) : iso.slice(0, -1);
      p += bytes.write(`"${text}${zoned ? 'Z' : ''}"`, p, 'latin1');
      continue;
    }
    const day = Math.floor(ms / MS_PER_DAY);
    if (day !== cachedDay) {
      cachedDayPrefix.set(Buffer.from(new Date(day * MS_PER_DAY).toISOString().slice(0, 11), 'latin1'));
      cachedDay = day;
    }
    const inDay = ms - day * MS_PER_DAY; // 0 ≤ inDay < 86,400,000
    const hours = Math.floor(inDay / 3_600_000);
    const minutes = Math.floor(inDay / 60_000) % 60;
    const seconds = Math.floor(inDay / 1000) % 60;
    const millis = inDay % 1000;
    bytes[p++] = QUOTE;
    for (let k = 0; k < 11; k++) bytes[p++] = cachedDayPrefix[k]!;
    bytes[p++] = ZERO + Math.floor(hours / 10);
    bytes[p++] = ZERO + (hours % 10);
    bytes[p++] = COLON;
    bytes[p++] = ZERO + Math.floor(minutes / 10);
    bytes[p++] = ZERO + (minutes % 10);
    bytes[p++] = COLON;
    bytes[p++] = ZERO + Math.floor(seconds / 10);
    bytes[p++] = ZERO + (seconds % 10);
    if (millis !== 0) {
      bytes[p++] = DOT;
      bytes[p++] = ZERO + Math.floor(millis / 100);
      bytes[p++] = ZERO + (Math.floor(millis / 10) % 10);
      bytes[p++] = ZERO + (millis % 10);
    }
    if (zoned) bytes[p++] = 0x5a; // Z
    bytes[p++] = QUOTE;
  }
  return bytes.toString('latin1', 0, p);
}

/** JSON text of a number: finite as JSON.stringify writes it, NaN/±Infinity → null. */
function numberJson(value: number): string {
  return Number.isFinite(value) ? String(value) : 'null';
}

function columnJson(column: FrameColumn): string {
  switch (column.type) {
    case 'double':
      // Array.from + JSON.stringify is native and writes NaN/±Infinity as null.
      return JSON.stringify(Array.from(column.values));
    case 'int32':
      return `[${column.values.join(',')}]`;
    case 'timestamptz':
    case 'timestamp':
      return `[${timesJson(column.values, 0, column.values.length, column.type === 'timestamptz')}]`;
    case 'string': {
      const labels = column.labels.map((label) => JSON.stringify(label));
      const { codes } = column;
      const parts = new Array<string>(codes.length);
      for (let i = 0; i < codes.length; i++) {
        const code = codes[i]!;
        parts[i] = code < 0 ? 'null' : labels[code]!;
      }
      return `[${parts.join(',')}]`;
    }
  }
}

/**
 * Column-oriented JSON text: {"col": [v, …], …} in column order. timestamptz → "2024-05-01T07:00:00Z"
 * (whole seconds as "…:SSZ", sub-second as "…:SS.sssZ"); timestamp → "2024-05-01T09:00:00" (no zone);
 * NaN/-1-coded → null; doubles as JSON numbers (±Infinity → null).
 */
export function frameToJson(frame: Frame): string {
  checkFrame(frame);
  return `{${frame.columns.map((column) => `${JSON.stringify(column.name)}:${columnJson(column)}`).join(',')}}`;
}

// ---------------------------------------------------------------------------------------------
// pandas metadata

const PANDAS_TYPES: Record<FrameColumn['type'], { pandas_type: string; numpy_type: string }> = {
  timestamptz: { pandas_type: 'datetimetz', numpy_type: 'datetime64[us]' },
  timestamp: { pandas_type: 'datetime', numpy_type: 'datetime64[us]' },
  int32: { pandas_type: 'int32', numpy_type: 'int32' },
  double: { pandas_type: 'float64', numpy_type: 'float64' },
  string: { pandas_type: 'unicode', numpy_type: 'object' },
};

/**
 * pyarrow's `pandas` schema metadata for the frame (the format pandas' developer docs describe:
 * "Storing pandas DataFrame objects in Apache Parquet format"): `index_columns` names the frame's
 * `index` columns, which pandas (through pyarrow) then restores as the DataFrame's index.
 */
export function pandasMetadata(frame: Frame): string {
  return JSON.stringify({
    index_columns: [...(frame.index ?? [])],
    column_indexes: [{ name: null, field_name: null, pandas_type: 'unicode', numpy_type: 'object', metadata: { encoding: 'UTF-8' } }],
    columns: frame.columns.map((column) => ({
      name: column.name,
      field_name: column.name,
      ...PANDAS_TYPES[column.type],
      metadata: column.type === 'timestamptz' ? { timezone: 'UTC' } : null,
    })),
    attributes: {},
    creator: { library: 'training-data-service', version: '1' },
    pandas_version: '2.2.3',
  });
}

// ---------------------------------------------------------------------------------------------
// Parquet writing

/** A string column with more labels than this is fed as VARCHAR values rather than codes + a SQL list. */
const MAX_LIST_LABELS = 1024;

/** Strings go through the SQL list lookup while their label list is short (the list literal is parsed per write). */
function feedsLabels(column: FrameColumn & { type: 'string' }): boolean {
  return column.labels.length > MAX_LIST_LABELS;
}

const frameSource = arraySourceFunction('frame_source__');

/** The SELECT expression turning source column `c{i}` into the frame column as written. */
function selectExpression(column: FrameColumn, i: number): string {
  const source = `c${i}`;
  const name = sqlIdentifier(column.name);
  switch (column.type) {
    case 'timestamptz':
      return `make_timestamptz(CAST(CASE WHEN isfinite(${source}) THEN ${source} * 1000 END AS BIGINT)) AS ${name}`;
    case 'timestamp':
      return `make_timestamp(CAST(CASE WHEN isfinite(${source}) THEN ${source} * 1000 END AS BIGINT)) AS ${name}`;
    case 'double':
      return `CASE WHEN isnan(${source}) THEN NULL ELSE ${source} END AS ${name}`;
    case 'int32':
      return `${source} AS ${name}`;
    case 'string':
      if (feedsLabels(column)) return `${source} AS ${name}`;
      return `CASE WHEN ${source} >= 0 THEN list_element(CAST([${column.labels.map(sqlString).join(', ')}] AS VARCHAR[]), ${source} + 1) END AS ${name}`;
  }
}

function kvMetadata(frame: Frame): string {
  const entries: [string, string][] = [];
  if (frame.index !== undefined) entries.push(['pandas', pandasMetadata(frame)]);
  for (const [key, value] of Object.entries(frame.metadata ?? {})) entries.push([key, value]);
  if (entries.length === 0) return '';
  return `, KV_METADATA {${entries.map(([key, value]) => `${sqlString(key)}: ${sqlString(value)}`).join(', ')}}`;
}

/** What createFrameWriter returns. */
export interface FrameWriter {
  /** Write `frame` to `filePath` (a plain path, no glob characters) and resolve when the file is complete. */
  writeParquet(frame: Frame, filePath: string): Promise<void>;
  /** Convenience: write to a temporary file under `tmpDir`, read it into a Buffer, remove the file. */
  toParquetBuffer(frame: Frame, tmpDir: string): Promise<Buffer>;
}

/** Writes frames to Parquet files through the sample store's DuckDB connection (zstd, row order kept). */
export function createFrameWriter(store: SampleStore): FrameWriter {
  async function writeParquet(frame: Frame, filePath: string): Promise<void> {
    assertPlainPath(filePath);
    const length = checkFrame(frame);
    if (frame.columns.length === 0) throw new RangeError('A Parquet frame needs at least one column');
    const source: ArraySource = {
      length,
      arrays: frame.columns.map((column): SourceArray => {
        if (column.type !== 'string') return column.values;
        return feedsLabels(column) ? { codes: column.codes, labels: column.labels } : column.codes;
      }),
    };
    // Written beside the target and renamed over it: a reader never sees a partial file.
    const tmp = `${filePath}.tmp-${randomBytes(8).toString('hex')}`;
    const sql = (id: number) =>
      `COPY (SELECT ${frame.columns.map(selectExpression).join(', ')} FROM ${frameSource.from(id)}) ` +
      `TO ${sqlString(tmp)} (${PARQUET_COPY_OPTIONS}${kvMetadata(frame)})`;
    await mkdir(path.dirname(filePath), { recursive: true });
    try {
      await store.withConnection((connection) => frameSource.withSource(connection, source, (id) => connection.run(sql(id))));
      await rename(tmp, filePath);
    } catch (error) {
      await rm(tmp, { force: true }).catch(() => undefined);
      throw error;
    }
  }

  async function toParquetBuffer(frame: Frame, tmpDir: string): Promise<Buffer> {
    const file = path.join(tmpDir, `frame-${randomBytes(8).toString('hex')}.parquet`);
    try {
      await writeParquet(frame, file);
      return await readFile(file);
    } finally {
      await rm(file, { force: true }).catch(() => undefined);
    }
  }

  return { writeParquet, toParquetBuffer };
}

// ---------------------------------------------------------------------------------------------
// Parquet → JSON streaming

/** Rows read per query when a file is read column by column (bounded native memory). */
const RANGE_ROWS = 131_072;
/** Files with at most this many cells are read in one query for all their (non-string) columns. */
const SMALL_CELLS = 1 << 20;

/**
 * How a column is read: `time`/`number` as DOUBLE with NULL → NaN (no validity mask: the vector
 * API's per-item validity test costs a BigInt operation), `bigint`/`boolean` as they are, `string`
 * as JSON text built by DuckDB, 2,048 values per row (decoding one VARCHAR per value from JS costs
 * ~0.6 µs each; one string per 2,048 values is ~4× faster).
 */
type Kind = 'instant' | 'local' | 'number' | 'bigint' | 'boolean' | 'string';

interface SourceColumn {
  name: string;
  kind: Kind;
  /** The SELECT expression producing what `kind` converts (for `string`: one value's JSON text). */
  expression: string;
}

const NAN = "CAST('NaN' AS DOUBLE)";

function sourceColumn(name: string, typeId: DuckDBTypeId): SourceColumn {
  const id = sqlIdentifier(name);
  switch (typeId) {
    case DuckDBTypeId.TIMESTAMP_TZ:
      return { name, kind: 'instant', expression: `coalesce(CAST(epoch_ms(${id}) AS DOUBLE), ${NAN})` };
    case DuckDBTypeId.TIMESTAMP:
    case DuckDBTypeId.TIMESTAMP_S:
    case DuckDBTypeId.TIMESTAMP_MS:
    case DuckDBTypeId.TIMESTAMP_NS:
      return { name, kind: 'local', expression: `coalesce(CAST(epoch_ms(${id}) AS DOUBLE), ${NAN})` };
    case DuckDBTypeId.TINYINT:
    case DuckDBTypeId.SMALLINT:
    case DuckDBTypeId.INTEGER:
    case DuckDBTypeId.UTINYINT:
    case DuckDBTypeId.USMALLINT:
    case DuckDBTypeId.UINTEGER:
    case DuckDBTypeId.FLOAT:
    case DuckDBTypeId.DOUBLE:
    case DuckDBTypeId.DECIMAL:
      return { name, kind: 'number', expression: `coalesce(CAST(${id} AS DOUBLE), ${NAN})` };
    case DuckDBTypeId.BIGINT:
      return { name, kind: 'bigint', expression: id };
    case DuckDBTypeId.BOOLEAN:
      return { name, kind: 'boolean', expression: id };
    case DuckDBTypeId.VARCHAR:
      return { name, kind: 'string', expression: `coalesce(CAST(to_json(${id}) AS VARCHAR), 'null')` };
    default:
      throw new TypeError(`Cannot write Parquet column ${JSON.stringify(name)} of DuckDB type ${DuckDBTypeId[typeId] ?? typeId} as JSON`);
  }
}

/** JSON text of the rows of one result vector, comma-separated. */
function chunkJson(chunk: DuckDBDataChunk, columnIndex: number, kind: Exclude<Kind, 'string'>): string {
  const n = chunk.rowCount;
  const parts = new Array<string>(n);
  switch (kind) {
    case 'instant':
    case 'local': {
      const vector = chunk.getColumnVector(columnIndex) as DuckDBDoubleVector;
      const values = new Float64Array(n);
      for (let i = 0; i < n; i++) values[i] = vector.getItem(i) ?? Number.NaN;
      return timesJson(values, 0, n, kind === 'instant');
    }
    case 'number': {
      const vector = chunk.getColumnVector(columnIndex) as DuckDBDoubleVector;
      for (let i = 0; i < n; i++) parts[i] = numberJson(vector.getItem(i) ?? Number.NaN);
      break;
    }
    case 'bigint': {
      const vector = chunk.getColumnVector(columnIndex) as DuckDBBigIntVector;
      for (let i = 0; i < n; i++) {
        const value = vector.getItem(i);
        parts[i] = value === null ? 'null' : String(value); // exact, also beyond 2^53
      }
      break;
    }
    case 'boolean': {
      const vector = chunk.getColumnVector(columnIndex) as DuckDBBooleanVector;
      for (let i = 0; i < n; i++) {
        const value = vector.getItem(i);
        parts[i] = value === null ? 'null' : value ? 'true' : 'false';
      }
      break;
    }
  }
  return parts.join(',');
}

function notFound(filePath: string, error: unknown): Error {
  if (/No files found/i.test((error as Error).message)) {
    return Object.assign(new Error(`Parquet file not found: ${filePath}`, { cause: error }), { code: 'ENOENT' });
  }
  return error as Error;
}

/**
 * Stream an existing Parquet file as column-oriented JSON (the conventions of frameToJson), one column
 * at a time, chunk by chunk. Never holds the whole file as JS values: DuckDB materialises (natively)
 * one column × up to RANGE_ROWS rows at a time (all non-string columns at once when the file is
 * small), converted 2,048 rows per piece outside the connection's queue, yielding to the event loop
 * between pieces. The file must not change while it is streamed.
 */
export async function* parquetToJsonStream(store: SampleStore, filePath: string): AsyncIterable<string> {
  assertPlainPath(filePath);
  const file = `read_parquet(${sqlString(filePath)})`;
  const numbered = `read_parquet(${sqlString(filePath)}, file_row_number = true)`;

  // Results are converted to JS values inside the connection's turn: reading a result's vectors
  // after other statements ran on the connection gave corrupt strings (seen with string_agg
  // results under concurrent requests), so nothing native is kept across a yield.
  const runWith = <T>(sql: string, convert: (result: DuckDBMaterializedResult) => T): Promise<T> =>
    store.withConnection(async (connection) => {
      let result: DuckDBMaterializedResult;
      try {
        result = await connection.run(sql);
      } catch (error) {
        throw notFound(filePath, error);
      }
      return convert(result);
    });

  const columns = await runWith(`SELECT * FROM ${file} LIMIT 0`, (schema) => {
    const out: SourceColumn[] = [];
    for (let i = 0; i < schema.columnCount; i++) out.push(sourceColumn(schema.columnName(i), schema.columnTypeId(i)));
    return out;
  });
  const rowCount = await runWith(`SELECT CAST(count(*) AS DOUBLE) FROM ${file}`, (counted) => (counted.getChunk(0).getColumnVector(0) as DuckDBDoubleVector).getItem(0) ?? 0);

  /** The pieces of column `columnIndex` of a materialised result: one per non-empty chunk, each but the first led by a comma. */
  async function* chunkPieces(texts: string[], first: { value: boolean }) {
    for (const text of texts) {
      yield first.value ? text : `,${text}`;
      first.value = false;
      await yieldToEventLoop();
    }
  }
  /** Column `columnIndex` of a result as JSON pieces, one per non-empty chunk. */
  const columnTexts = (columnIndex: number, kind: Exclude<Kind, 'string'>) => (result: DuckDBMaterializedResult) => {
    const texts: string[] = [];
    for (let c = 0; c < result.chunkCount; c++) {
      const chunk = result.getChunk(c);
      if (chunk.rowCount > 0) texts.push(chunkJson(chunk, columnIndex, kind));
    }
    return texts;
  };

  /** The pieces of a string column over rows [start, end) (all rows when `end` is undefined): DuckDB's JSON text, 2,048 values a piece. */
  async function* stringPieces(column: SourceColumn, start: number, end: number | undefined, first: { value: boolean }) {
    const where = end === undefined ? '' : ` WHERE file_row_number >= ${start} AND file_row_number < ${end}`;
    const texts = await runWith(
      `SELECT string_agg(${column.expression}, ',' ORDER BY file_row_number) FROM ${numbered}${where} ` +
        `GROUP BY file_row_number // ${CHUNK_ROWS} ORDER BY file_row_number // ${CHUNK_ROWS}`,
      (result) => {
        const out: string[] = [];
        for (let c = 0; c < result.chunkCount; c++) {
          const vector = result.getChunk(c).getColumnVector(0) as DuckDBVarCharVector;
          for (let i = 0; i < vector.itemCount; i++) out.push(vector.getItem(i) ?? '');
        }
        return out;
      },
    );
    for (const text of texts) {
      yield first.value ? text : `,${text}`;
      first.value = false;
      await yieldToEventLoop();
    }
  }

  const header = (c: number) => `${c === 0 ? '{' : ','}${JSON.stringify(columns[c]!.name)}:[`;
  if (columns.length === 0) {
    yield '{}';
    return;
  }
  if (rowCount * columns.length <= SMALL_CELLS) {
    // Small: one query for every non-string column, emitted column-major from DuckDB's chunks.
    const plain = columns.filter((column) => column.kind !== 'string');
    const texts =
      plain.length > 0
        ? await runWith(`SELECT ${plain.map((column) => column.expression).join(', ')} FROM ${file}`, (result) =>
            plain.map((column, i) => columnTexts(i, column.kind as Exclude<Kind, 'string'>)(result)),
          )
        : [];
    for (let c = 0; c < columns.length; c++) {
      const column = columns[c]!;
      yield header(c);
      if (column.kind === 'string') yield* stringPieces(column, 0, undefined, { value: true });
      else yield* chunkPieces(texts[plain.indexOf(column)]!, { value: true });
      yield ']';
    }
  } else {
    for (let c = 0; c < columns.length; c++) {
      const column = columns[c]!;
      yield header(c);
      const first = { value: true };
      for (let start = 0; start < rowCount; start += RANGE_ROWS) {
        const end = start + RANGE_ROWS;
        if (column.kind === 'string') {
          yield* stringPieces(column, start, end, first);
        } else {
          const texts = await runWith(`SELECT ${column.expression} FROM ${numbered} WHERE file_row_number >= ${start} AND file_row_number < ${end}`, columnTexts(0, column.kind));
          yield* chunkPieces(texts, first);
        }
      }
      yield ']';
    }
  }
  yield '}';
}

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

// ---------------------------------------------------------------------------------------------
// Content negotiation

const PARQUET_TYPES = [PARQUET_MEDIA_TYPE, 'application/octet-stream'];

/** The quality the Accept header gives `mediaType` (the most specific matching range wins; 0 when none matches). */
function quality(ranges: { type: string; subtype: string; q: number }[], mediaType: string): number {
  const [type, subtype] = mediaType.split('/') as [string, string];
  let best = -1;
  let q = 0;
  for (const range of ranges) {
    let specificity: number;
    if (range.type === type && range.subtype === subtype) specificity = 2;
    else if (range.type === type && range.subtype === '*') specificity = 1;
    else if (range.type === '*' && range.subtype === '*') specificity = 0;
    else continue;
    if (specificity > best) {
      best = specificity;
      q = range.q;
    }
  }
  return q;
}

/**
 * API.md's rule for frame responses: JSON when `format=json`, or when the Accept header prefers
 * application/json (a higher quality) over Parquet (application/vnd.apache.parquet or
 * application/octet-stream); `format=parquet` forces Parquet; otherwise (no header, ties, `*∕*`) Parquet.
 */
export function wantsJson(accept: string | undefined, format: string | undefined): boolean {
  const asked = format?.trim().toLowerCase();
  if (asked === 'json') return true;
  if (asked === 'parquet') return false;
  if (!accept) return false;
  const ranges: { type: string; subtype: string; q: number }[] = [];
  for (const item of accept.split(',')) {
    const [mediaRange, ...parameters] = item.split(';');
    const [type, subtype] = (mediaRange ?? '').trim().toLowerCase().split('/');
    if (!type || !subtype) continue;
    let q = 1;
    for (const parameter of parameters) {
      const [key, value] = parameter.split('=');
      if (key?.trim().toLowerCase() === 'q') {
        const parsed = Number(value?.trim());
        q = Number.isFinite(parsed) ? Math.min(1, Math.max(0, parsed)) : 1;
      }
    }
    ranges.push({ type, subtype, q });
  }
  const json = quality(ranges, 'application/json');
  const parquet = Math.max(...PARQUET_TYPES.map((mediaType) => quality(ranges, mediaType)));
  return json > 0 && json > parquet;
}
