/**
 * Frames (./frame.ts) as Parquet files.
 *
 * Writing (the way engine/samples/sample-file.ts found fastest with @duckdb/node-api 1.5.5): a JS table
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
 * JS thread, setItem loops ~0.6 ms).
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { assertPlainPath, PARQUET_COPY_OPTIONS, sqlIdentifier, sqlString, type SampleStore } from '../samples/sample-file.ts';
import { arraySourceFunction, CHUNK_ROWS, type ArraySource, type SourceArray } from '../samples/array-source.ts';
import { checkFrame, type Frame, type FrameColumn } from './frame.ts';

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

/**
 * Strings go through the SQL list lookup while their label list is short (the list literal is parsed
 * per write) and the frame is longer than one chunk: the lookup is DuckDB's work, off the event loop,
 * where feeding values is a native call per string on it. A frame of one chunk is fed its strings
 * (a curve's ~100 rows: the lookup made a response's COPY cost 5.1 ms of CPU, values 3.0 ms).
 */
function feedsLabels(column: FrameColumn & { type: 'string' }, rows: number): boolean {
  return column.labels.length > MAX_LIST_LABELS || rows <= CHUNK_ROWS;
}

const frameSource = arraySourceFunction('frame_source__');

/** The SELECT expression turning source column `c{i}` into the frame column as written. */
function selectExpression(column: FrameColumn, i: number, rows: number): string {
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
      if (feedsLabels(column, rows)) return `${source} AS ${name}`;
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
  /** The frame as a Parquet file at `target` (DuckDB's COPY). */
  async function copyTo(frame: Frame, target: string): Promise<void> {
    const length = checkFrame(frame);
    if (frame.columns.length === 0) throw new RangeError('A Parquet frame needs at least one column');
    const source: ArraySource = {
      length,
      arrays: frame.columns.map((column): SourceArray => {
        if (column.type !== 'string') return column.values;
        return feedsLabels(column, length) ? { codes: column.codes, labels: column.labels } : column.codes;
      }),
    };
    const sql = (id: number) =>
      `COPY (SELECT ${frame.columns.map((column, i) => selectExpression(column, i, length)).join(', ')} FROM ${frameSource.from(id)}) ` +
      `TO ${sqlString(target)} (${PARQUET_COPY_OPTIONS}${kvMetadata(frame)})`;
    await store.withConnection((connection) => frameSource.withSource(connection, source, (id) => connection.run(sql(id))));
  }

  async function writeParquet(frame: Frame, filePath: string): Promise<void> {
    assertPlainPath(filePath);
    // Written beside the target and renamed over it: a reader never sees a partial file.
    const tmp = `${filePath}.tmp-${randomBytes(8).toString('hex')}`;
    await mkdir(path.dirname(filePath), { recursive: true });
    try {
      await copyTo(frame, tmp);
      await rename(tmp, filePath);
    } catch (error) {
      await rm(tmp, { force: true }).catch(() => undefined);
      throw error;
    }
  }

  /** Temporary directories known to exist (made once per process, not per response). */
  const made = new Set<string>();

  async function toParquetBuffer(frame: Frame, tmpDir: string): Promise<Buffer> {
    // A name of its own that nobody else reads: written in place, read back, removed.
    const file = path.join(tmpDir, `frame-${randomBytes(8).toString('hex')}.parquet`);
    assertPlainPath(file);
    if (!made.has(tmpDir)) {
      await mkdir(tmpDir, { recursive: true });
      made.add(tmpDir);
    }
    try {
      await copyTo(frame, file);
      return await readFile(file);
    } catch (error) {
      // The directory removed meanwhile (a tmp cleaner): made again next time.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' || !(await stat(tmpDir).catch(() => undefined))) made.delete(tmpDir);
      throw error;
    } finally {
      // (unlink, not rm: rm's lstat and rimraf cost more than the COPY's file work)
      await unlink(file).catch(() => undefined);
    }
  }

  return { writeParquet, toParquetBuffer };
}
