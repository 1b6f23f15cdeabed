/**
 * The sample store's files (docs/architecture.md, "Data flow"; docs/api-clients.md, "What is stored"):
 * one Parquet file per activity, zstd, on a regular 1 Hz grid, read (and scanned, `withConnection`)
 * through one in-memory DuckDB instance per process and written through a second one that runs on one thread (see Writing).
 *
 * File layout (SAMPLE_COLUMNS), one row per second from the activity's start, in time order:
 *
 *   timestamp          TIMESTAMP WITH TIME ZONE: an instant, stored in Parquet as INT64
 *                      TIMESTAMP(isAdjustedToUTC = true, MICROS). Chosen over a naive TIMESTAMP so
 *                      every reader (DuckDB, pandas, polars, Arrow) sees UTC instants without being
 *                      told; `start + k·1000 ms` for row k.
 *   power … respiration_rate
 *                      DOUBLE, one column per CHANNELS entry, always all of them in CHANNELS order
 *                      (a channel the activity lacks is a column of NULLs), so any set of sample
 *                      files has the same schema and `read_parquet([...])` scans them together.
 *                      NULL where the activity has no sample (NaN in memory).
 *
 * Key-value metadata: `sample_file_version = '1'`.
 *
 * Writing (the fastest correct way found with @duckdb/node-api 1.5.5): a JS table function
 * registered on the connection hands the typed arrays to DuckDB in 2,048-row data chunks (an
 * INTEGER row index and one DOUBLE vector per channel, NaN passed as is) straight into
 * `COPY (SELECT …) TO file (FORMAT parquet, COMPRESSION zstd)`; the SELECT derives the timestamp
 * from the row index and turns NaN into NULL (`CASE WHEN isnan(x) THEN NULL ELSE x END`) in
 * DuckDB's vectorised code. No staging table, no appender (whose synchronous close/commit costs
 * ~10 ms on the event loop), no per-value NULL bookkeeping in JS. Measured on this machine for a
 * 4 h activity (14,400 rows × 12 channels): ~18 ms per write (appender + temp table + COPY:
 * ~40–50 ms; row-wise appender: ~70–90 ms), the event loop blocked ~0.3 ms per chunk; plus
 * ~10 ms for the fsync (ext4 here).
 * The writes have their own instance, with `threads = 1`: the table function's callbacks run on
 * the event loop, and while a COPY waits for one, DuckDB's other threads — and the libuv thread
 * that runs the statement — poll its scheduler for work. Measured in the backfill of 500 2 h rides
 * (worker process, 2 cores, a busy event loop): 33 → 27 ms of the worker's CPU per file, the COPY
 * 20 → 9 ms (mean); with one thread the statement runs on the thread that called it and simply
 * waits. Its own instance also means that a write never queues behind a scan of many files, nor a
 * scan behind a burst of writes; it costs ~4 MB and no thread of its own.
 * Reading: `read_parquet` with `coalesce(x, 'NaN')` so result vectors carry no NULLs and convert
 * to Float64Array with the public vector API, yielding to the event loop between chunks (~11 ms
 * for all 12 channels of a 4 h file, of which ~5 ms of JS).
 *
 * A DuckDB connection runs one statement at a time, so every use of a connection goes through
 * its FIFO queue (one for the reads and `withConnection`, one for the writes); concurrent jobs in
 * one worker process may call the store freely. Writes are atomic: the file is written as
 * `path + '.tmp-<random>'` in the target's directory (created when missing), fsynced, then
 * renamed over `path`; a failed write removes its temporary file. A read sees the old file or the
 * new one: DuckDB opens a file twice (its metadata at bind, its data at the scan), so a read that
 * fails while its file is replaced in between is tried again (READ_ATTEMPTS).
 *
 * Paths must not contain glob characters (`*`, `?`, `[`, `{`): DuckDB expands them in
 * `read_parquet`. Sample file paths are derived from ids (never from user input), so this is a
 * programming error and is refused loudly.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance, type DuckDBBigIntVector, type DuckDBConnection, type DuckDBDoubleVector } from '@duckdb/node-api';
import { CHANNELS, type Channel } from '../channels.ts';
import { arraySourceFunction } from './array-source.ts';

/** The time column of every sample file. */
export const TIMESTAMP_COLUMN = 'timestamp';
/** Every sample file's columns, in file order. Column names are the channel names as they are. */
export const SAMPLE_COLUMNS: readonly string[] = [TIMESTAMP_COLUMN, ...CHANNELS];
/** The DuckDB type of the time column (Parquet INT64 TIMESTAMP(isAdjustedToUTC=true, MICROS)). */
export const TIMESTAMP_TYPE = 'TIMESTAMP WITH TIME ZONE';
/** Written into every file's key-value metadata as `sample_file_version`. */
export const SAMPLE_FILE_VERSION = '1';
/** The COPY options sample files are written with (also right for other Parquet the engine writes). */
export const PARQUET_COPY_OPTIONS = 'FORMAT parquet, COMPRESSION zstd';

/** What is written: `length` samples at 1 Hz from `start`; absent channels are written as NULL columns. */
export interface SampleData {
  /** Epoch milliseconds (UTC) of sample 0 (an integer; normally a whole second). */
  start: number;
  /** Number of samples (≥ 1). */
  length: number;
  /** One array of `length` per channel present; NaN where there is no sample. */
  channels: Partial<Record<Channel, Float64Array>>;
}

/** What is read back: every requested channel (all-NaN when the file has only NULLs for it). */
export interface SampleFile {
  start: number;
  length: number;
  channels: Record<string, Float64Array>;
}

export interface SampleStoreOptions {
  /** DuckDB `threads` of the instance that reads and scans (default: DuckDB's, the number of cores); writes run on one thread. */
  threads?: number;
  /** DuckDB `memory_limit` of each instance, e.g. '512MB' (default: DuckDB's, 80 % of RAM). */
  memoryLimit?: string;
  /** fsync each file before the rename (default true): a crash never leaves a renamed empty file. */
  fsync?: boolean;
}

export interface SampleStore {
  /** Write one activity's sample file atomically at `filePath` (the arrays are read until the promise settles: do not change them before). */
  writeSampleFile(filePath: string, data: SampleData): Promise<void>;
  /** Read a sample file: its start, length and the requested channels (default: all CHANNELS). */
  readSampleFile(filePath: string, channels?: readonly string[]): Promise<SampleFile>;
  /**
   * Run `fn` with the store's reading connection, queued behind (and ahead of) every other read
   * and scan. For the modules that scan many sample files (`SELECT … FROM ${sampleFilesSql(paths)}`).
   * `fn` must not call the store itself (it would wait for its own turn forever).
   */
  withConnection<T>(fn: (connection: DuckDBConnection) => Promise<T>): Promise<T>;
  /** Wait for queued work, then close the connections and the instances. Idempotent. */
  close(): Promise<void>;
}

/** A SQL string literal. */
export function sqlString(value: string): string {
  if (value.includes('\0')) throw new RangeError('A SQL string cannot contain NUL');
  return `'${value.replaceAll("'", "''")}'`;
}

/** A quoted SQL identifier. */
export function sqlIdentifier(name: string): string {
  if (name.includes('\0')) throw new RangeError('A SQL identifier cannot contain NUL');
  return `"${name.replaceAll('"', '""')}"`;
}

const GLOB = /[*?[\]{}]/;

/** Refuse a path DuckDB would read as a glob pattern (or cannot take as a string). */
export function assertPlainPath(filePath: string): void {
  if (filePath === '' || GLOB.test(filePath) || filePath.includes('\0')) {
    throw new RangeError(`Not a plain file path for DuckDB (no glob characters *?[]{} or NUL): ${JSON.stringify(filePath)}`);
  }
}

/**
 * The table-function call that scans several sample files as one relation, e.g.
 * `SELECT … FROM ${sampleFilesSql(paths, { filename: true })}`. All sample files share one schema
 * (SAMPLE_COLUMNS); `filename: true` adds DuckDB's `filename` column to tell them apart.
 */
export function sampleFilesSql(paths: readonly string[], options: { filename?: boolean } = {}): string {
  if (paths.length === 0) throw new RangeError('sampleFilesSql needs at least one path');
  for (const p of paths) assertPlainPath(p);
  const list = `[${paths.map(sqlString).join(', ')}]`;
  return `read_parquet(${list}${options.filename ? ', filename = true' : ''})`;
}

const CHANNEL_SET = new Set<string>(CHANNELS);
const sampleSource = arraySourceFunction('sample_file_source__');

interface PendingWrite {
  length: number;
  /** Present channels, in CHANNELS order. */
  names: Channel[];
  arrays: Float64Array[];
}

export async function createSampleStore(options: SampleStoreOptions = {}): Promise<SampleStore> {
  const config: Record<string, string> = {};
  if (options.threads !== undefined) config.threads = String(options.threads);
  if (options.memoryLimit !== undefined) config.memory_limit = options.memoryLimit;
  const reads = await openInstance(config);
  let writes: Instance;
  try {
    writes = await openInstance({ ...config, threads: '1' });
  } catch (error) {
    reads.close();
    throw error;
  }
  const queue = reads.queue;
  const fsync = options.fsync ?? true;
  // Operations under way (close waits for them, including their file work outside the queue).
  let closed = false;
  const active = new Set<Promise<unknown>>();
  function track<A extends unknown[], T>(fn: (...args: A) => Promise<T>): (...args: A) => Promise<T> {
    return (...args: A) => {
      if (closed) return Promise.reject(new Error('The sample store is closed'));
      const run = fn(...args);
      const settled = run.catch(() => undefined);
      active.add(settled);
      void settled.then(() => active.delete(settled));
      return run;
    };
  }

  let closing: Promise<void> | undefined;
  function close(): Promise<void> {
    closing ??= (async () => {
      closed = true;
      await Promise.all(active);
      await Promise.all([reads.idle(), writes.idle()]);
      reads.close();
      writes.close();
    })();
    return closing;
  }

  return {
    writeSampleFile: track((filePath: string, data: SampleData) => writeSampleFile(writes, fsync, filePath, data)),
    readSampleFile: track((filePath: string, channels?: readonly string[]) => readSampleFile(queue, filePath, channels)),
    withConnection: track(queue) as SampleStore['withConnection'],
    close,
  };
}

/** Write one activity's sample file atomically: a temporary file beside it (COPY, fsync), renamed over it. */
async function writeSampleFile(writes: Instance, fsync: boolean, filePath: string, data: SampleData): Promise<void> {
  const write = checkWrite(filePath, data);
  const dir = path.dirname(filePath);
  await mkdir(dir, { recursive: true });
  const tmp = `${filePath}.tmp-${randomBytes(8).toString('hex')}`;
  assertPlainPath(tmp);
  const sql = copySql(data.start, write.names, tmp);
  try {
    await writes.queue((c) => sampleSource.withSource(c, write, (id) => c.run(sql(id))));
    if (fsync) await syncFile(tmp);
    await rename(tmp, filePath);
  } catch (error) {
    await rm(tmp, { force: true }).catch(() => undefined);
    throw error;
  }
}

/** The COPY of the source `id` (columns c0, c1, … the present channels, in CHANNELS order; `k` the row number) into `file`. */
function copySql(start: number, names: readonly Channel[], file: string): (id: number) => string {
  const startMicros = BigInt(start) * 1000n;
  const columns = CHANNELS.map((channel) => {
    const i = names.indexOf(channel);
    return i >= 0
      ? `CASE WHEN isnan(c${i}) THEN NULL ELSE c${i} END AS ${sqlIdentifier(channel)}`
      : `CAST(NULL AS DOUBLE) AS ${sqlIdentifier(channel)}`;
  });
  return (id: number) =>
    `COPY (SELECT make_timestamptz(${startMicros}::BIGINT + k::BIGINT * 1000000) AS ${sqlIdentifier(TIMESTAMP_COLUMN)}, ${columns.join(', ')} ` +
    `FROM ${sampleSource.from(id)}) TO ${sqlString(file)} (${PARQUET_COPY_OPTIONS}, KV_METADATA {sample_file_version: ${sqlString(SAMPLE_FILE_VERSION)}})`;
}

async function syncFile(file: string): Promise<void> {
  const handle = await open(file, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Read a sample file's start, length and `channels` (default: all CHANNELS), on the reading connection. */
async function readSampleFile(queue: Instance['queue'], filePath: string, channels: readonly string[] = CHANNELS): Promise<SampleFile> {
  assertPlainPath(filePath);
  const wanted = [...new Set(channels)];
  for (const name of wanted) {
    if (!CHANNEL_SET.has(name)) throw new RangeError(`Unknown channel ${JSON.stringify(name)}; expected one of ${CHANNELS.join(', ')}`);
  }
  const select = [
    `epoch_ms(${sqlIdentifier(TIMESTAMP_COLUMN)}) AS t`,
    ...wanted.map((name) => `coalesce(${sqlIdentifier(name)}, CAST('NaN' AS DOUBLE))`),
  ];
  const sql = `SELECT ${select.join(', ')} FROM read_parquet(${sqlString(filePath)})`;
  return queue(async (c) => sampleFileOf(await runRead(c, sql, filePath), wanted, filePath));
}

type ReadResult = Awaited<ReturnType<DuckDBConnection['run']>>;

/** Run a read of `filePath`, again when the file was replaced while DuckDB read it (READ_ATTEMPTS in all). */
async function runRead(c: DuckDBConnection, sql: string, filePath: string): Promise<ReadResult> {
  for (let attempt = 1; ; attempt++) {
    const before = await fileIdentity(filePath);
    try {
      return await c.run(sql);
    } catch (error) {
      if (/No files found/i.test((error as Error).message)) {
        throw Object.assign(new Error(`Sample file not found: ${filePath}`, { cause: error }), { code: 'ENOENT' });
      }
      // Replaced while DuckDB read it (it opens the file at bind and again at the scan, and
      // the second open finds the new file under the old metadata): read the new one.
      if (attempt < READ_ATTEMPTS && (await fileIdentity(filePath)) !== before) continue;
      throw error;
    }
  }
}

/** The result's rows (`t`, then the wanted channels) as a SampleFile, checked to be a 1 Hz grid; yields between chunks. */
async function sampleFileOf(result: ReadResult, wanted: readonly string[], filePath: string): Promise<SampleFile> {
  const length = result.rowCount;
  if (length === 0) throw new Error(`Sample file ${filePath} has no rows`);
  const arrays = wanted.map(() => new Float64Array(length));
  let row = 0;
  let start = Number.NaN;
  let last = Number.NaN;
  for (let chunkIndex = 0; chunkIndex < result.chunkCount; chunkIndex++) {
    const chunk = result.getChunk(chunkIndex);
    const n = chunk.rowCount;
    if (n === 0) continue;
    const t = chunk.getColumnVector(0) as DuckDBBigIntVector;
    if (row === 0) start = Number(t.getItem(0));
    last = Number(t.getItem(n - 1));
    for (let c = 0; c < arrays.length; c++) {
      const vector = chunk.getColumnVector(c + 1) as DuckDBDoubleVector;
      const target = arrays[c]!;
      for (let i = 0; i < n; i++) target[row + i] = vector.getItem(i) ?? Number.NaN;
    }
    row += n;
    await yieldToEventLoop(); // ~0.5 ms of conversion per 2,048-row chunk, not one long block
  }
  if (!(last - start === (length - 1) * 1000)) {
    throw new Error(`Sample file ${filePath} is not a 1 Hz grid (${length} rows from ${start} to ${last})`);
  }
  return { start, length, channels: Object.fromEntries(wanted.map((name, i) => [name, arrays[i]!])) };
}

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A read that fails while its file is replaced is tried again, up to this many times in all. */
const READ_ATTEMPTS = 3;

/** Which file is at `filePath` now (inode, change time, size), or '' when none is. */
async function fileIdentity(filePath: string): Promise<string> {
  try {
    const s = await stat(filePath, { bigint: true });
    return `${s.dev}:${s.ino}:${s.ctimeNs}:${s.size}`;
  } catch {
    return '';
  }
}

type Instance = Awaited<ReturnType<typeof openInstance>>;

/** An in-memory instance and its one connection, used one statement at a time (a FIFO of promises). */
async function openInstance(config: Record<string, string>) {
  const instance = await DuckDBInstance.create(':memory:', config);
  let connection: DuckDBConnection;
  try {
    connection = await instance.connect();
    await connection.run("SET TimeZone = 'UTC'");
    // The default, made explicit: COPY and read_parquet keep row order without an ORDER BY.
    await connection.run('SET preserve_insertion_order = true');
  } catch (error) {
    instance.closeSync();
    throw error;
  }
  let tail: Promise<unknown> = Promise.resolve();
  return {
    queue<T>(fn: (connection: DuckDBConnection) => Promise<T>): Promise<T> {
      const run = tail.then(() => fn(connection));
      tail = run.catch(() => undefined);
      return run;
    },
    /** Settles once everything queued so far has. */
    idle: () => tail,
    close() {
      connection.closeSync();
      instance.closeSync();
    },
  };
}

function checkWrite(filePath: string, data: SampleData): PendingWrite {
  assertPlainPath(filePath);
  const { start, length } = data;
  if (!Number.isSafeInteger(start)) throw new RangeError(`start must be an integer epoch in milliseconds, got ${start}`);
  if (!Number.isSafeInteger(length) || length < 1 || length > 2 ** 31 - 1)
    throw new RangeError(`length must be a positive integer, got ${length}`);
  const names: Channel[] = [];
  const arrays: Float64Array[] = [];
  for (const key of Object.keys(data.channels)) {
    if (!CHANNEL_SET.has(key)) throw new RangeError(`Unknown channel ${JSON.stringify(key)}`);
  }
  for (const channel of CHANNELS) {
    const array = data.channels[channel];
    if (array === undefined) continue;
    if (!(array instanceof Float64Array)) throw new TypeError(`Channel ${channel} must be a Float64Array`);
    if (array.length !== length) throw new RangeError(`Channel ${channel} has ${array.length} samples, expected ${length}`);
    names.push(channel);
    arrays.push(array);
  }
  return { length, names, arrays };
}
