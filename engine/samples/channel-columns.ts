/**
 * Channel columns: one user's samples of one channel, every activity's, in one file on disk, so a
 * curve with `after` reads only the bytes of the activities in its range (no Parquet file opened, no
 * whole history copied), from the OS page cache that every process on the host shares. The sample
 * files stay the source of truth (docs/architecture.md, "Channel columns"); a column is derived from them and
 * can always be rebuilt: deleting `dir(userId)` costs only a rebuild, activity by activity, as
 * requests need them.
 *
 * Files under `dir(userId)`, per channel:
 *
 *   <channel>.current        the generation in use (a number), replaced atomically by a compaction
 *   <channel>.<gen>.values   the samples: each activity's 1 Hz values back to back (gaps as 0), as
 *                            float32 when every value is exactly a float32 (power in whole watts),
 *                            else float64; each entry starts at a multiple of 8. Appended to only.
 *   <channel>.<gen>.log      48-byte records (./column-log.ts): activity id, stamp (its row's
 *                            updated_at), where its entry lies, or a tombstone. Appended to only.
 *
 * Incremental: an activity's arrival appends its entry and one record (the ingest job does so after
 * its commit: power always, other channels once a request has started their column, so that storage
 * grows with what is asked; a request that finds an activity missing or of another stamp reads its
 * sample file and appends it); a deletion appends a tombstone and overwrites the entry's bytes with zeros. Either is
 * one activity's bytes. When the dead bytes (superseded, deleted, or left by a writer killed between
 * its two appends) outweigh the live ones, the writer compacts: the live entries into a new
 * generation, then `.current` is switched; the generation before stays for readers in flight.
 *
 * Writers of one (user, channel) take `lock` (a PostgreSQL advisory lock in the service: any number
 * of processes, on any hosts sharing DATA_DIR); readers take none: they see a values file that only
 * grows, records that name only bytes written before them, and check every record against the file's
 * size. A record is trusted only for an activity whose id, stamp and sample count match the database.
 *
 * Reading is the engine threads' (./column-read.ts): `place` gives them the file and the entries.
 *
 * A derived column holds, per activity, an entry computed from its samples rather than the samples
 * themselves (the fatigue grid: engine/curves/after-grid.ts); it is kept, checked and removed the
 * same way, its records matched by id and stamp.
 */
import { mkdir, open, readdir, type FileHandle } from 'node:fs/promises';
import type { SampleStore } from './sample-file.ts';
import { readChannelInto } from './sample-scan.ts';
import { encodeRecords, entryBytes, RECORD_BYTES, recordKey, replayLog, type ColumnRecord } from './column-log.ts';
import { readColumnSlices, type ColumnPlace } from './column-read.ts';
import { liveRecords } from './column-log-cache.ts';
import {
  compactIfWorthIt,
  currentGeneration,
  generation,
  generationsBefore,
  recordsOf,
  startColumn,
  writeAll,
  zeroEntries,
  zeroRecords,
} from './column-generations.ts';

/**
 * A derived column's entries for some activities (one array each, in their order), computed from
 * what they hold elsewhere (another column, the sample files); its records are matched by id and
 * stamp, an entry's length being the deriver's business.
 */
export type DeriveEntries = (activities: ColumnActivity[], signal?: AbortSignal) => Promise<Float64Array[]>;

/** Runs `fn` while no other writer of `key` (in any process) runs. */
export type ColumnLock = <T>(key: string, fn: () => Promise<T>) => Promise<T>;

/** An activity as a column needs it: its id (a UUID), its stamp, its sample count and its sample file. */
export interface ColumnActivity {
  id: string;
  stamp: number;
  samples: number;
  path: string;
}

export interface ChannelColumnsOptions {
  /** Where a user's columns are kept. */
  dir: (userId: string) => string;
  /** Mutual exclusion of writers across processes (default: within this process only). */
  lock?: ColumnLock;
  /**
   * `fn` while these activities' sample files are at their `path`s (a remote store's copies fetched
   * first, kept until `fn` ends); default: they always are.
   */
  withSampleFiles?: <T>(userId: string, activities: readonly ColumnActivity[], fn: () => Promise<T>) => Promise<T>;
}

/**
 * A fill reads sample files in batches of at most this many samples (16 MiB as float64), at most
 * FILL_SLOTS batches at once per process: however many users' first requests arrive together, the
 * memory of fills stays under FILL_SLOTS × 16 MiB (DuckDB reads one query at a time anyway).
 */
const FILL_BATCH_SAMPLES = 2 * 1024 * 1024;
const FILL_SLOTS = 2;

/** Consecutive groups of activities of at most FILL_BATCH_SAMPLES samples (an activity longer than that alone). */
function batches<A extends { samples: number }>(activities: readonly A[]): A[][] {
  const out: A[][] = [];
  let batch: A[] = [];
  let samples = 0;
  for (const a of activities) {
    if (batch.length && samples + a.samples > FILL_BATCH_SAMPLES) {
      out.push(batch);
      batch = [];
      samples = 0;
    }
    batch.push(a);
    samples += a.samples;
  }
  if (batch.length) out.push(batch);
  return out;
}

/** At most `slots` functions running at once, the others waiting their turn in order. */
function limiter(slots: number) {
  let running = 0;
  const waiting: (() => void)[] = [];
  return {
    async run<T>(fn: () => Promise<T>): Promise<T> {
      if (running >= slots) await new Promise<void>((resolve) => waiting.push(resolve));
      else running++;
      try {
        return await fn();
      } finally {
        const next = waiting.shift();
        if (next) next();
        else running--;
      }
    },
  };
}

/** Within this process only: each key's writers one after the other. */
export function processLock(): ColumnLock {
  const tails = new Map<string, Promise<unknown>>();
  return (key, fn) => {
    const previous = tails.get(key) ?? Promise.resolve();
    const run = previous.then(fn, fn);
    const tail = run.catch(() => undefined);
    tails.set(key, tail);
    void tail.then(() => tails.get(key) === tail && tails.delete(key));
    return run;
  };
}

/** The narrowest exact encoding of the values (gaps as 0): float32 when every value is one. */
function encodeValues(values: Float64Array): { width: 4 | 8; bytes: Uint8Array } {
  const zeroed = new Float64Array(values.length);
  let narrow = true;
  for (let i = 0; i < values.length; i++) {
    const x = values[i]!;
    const v = x === x ? x : 0;
    zeroed[i] = v;
    if (narrow && Math.fround(v) !== v) narrow = false;
  }
  if (narrow) {
    const f32 = Float32Array.from(zeroed);
    return { width: 4, bytes: new Uint8Array(f32.buffer) };
  }
  return { width: 8, bytes: new Uint8Array(zeroed.buffer) };
}

/** What the operations of one createChannelColumns share. */
interface Columns {
  store: SampleStore;
  options: ChannelColumnsOptions;
  lock: ColumnLock;
  /** The fills under way, by `${userId}/${channel}`: concurrent requests of one column share one. */
  filling: Map<string, Promise<void>>;
  fillSlots: ReturnType<typeof limiter>;
}

/** An activity's entry to append: its values as they are in memory or in its sample file (NaN gaps). */
interface ColumnItem {
  id: string;
  stamp: number;
  values: Float64Array;
}

export function createChannelColumns(store: SampleStore, options: ChannelColumnsOptions) {
  const columns: Columns = { store, options, lock: options.lock ?? processLock(), filling: new Map(), fillSlots: limiter(FILL_SLOTS) };
  return {
    place: (userId: string, channel: string, activities: readonly ColumnActivity[], signal?: AbortSignal, derive?: DeriveEntries) =>
      place(columns, userId, channel, activities, signal, derive),
    append: (userId: string, channel: string, items: ColumnItem[], opts: { ifStarted?: boolean } = {}) =>
      append(columns, userId, channel, items, opts),
    remove: (userId: string, ids: readonly string[]) => remove(columns, userId, ids),
    held: (userId: string, channel: string) => held(columns, userId, channel),
  };
}

/**
 * Under the lock: append entries for the activities (values as they are in memory or in their
 * sample files: NaN gaps become 0), skipping those already present with the same stamp and length.
 * With `ifStarted`, only to a column that exists already (a channel some request asked for).
 */
async function append(c: Columns, userId: string, channel: string, items: ColumnItem[], opts: { ifStarted?: boolean } = {}): Promise<void> {
  if (!items.length) return;
  const dir = c.options.dir(userId);
  if (opts.ifStarted && !(await currentGeneration(dir, channel))) return;
  await c.lock(`columns/${userId}/${channel}`, () => appendLocked(dir, channel, items));
}

async function appendLocked(dir: string, channel: string, items: ColumnItem[]): Promise<void> {
  await mkdir(dir, { recursive: true });
  const g = (await currentGeneration(dir, channel)) ?? (await startColumn(dir, channel));
  const values = await open(g.values, 'r+');
  const log = await open(g.log, 'r+');
  try {
    const [logBytes, { size }] = await Promise.all([log.readFile(), values.stat()]);
    const { live, whole } = await replayWhole(log, logBytes);
    const { chunks, records, end } = newEntries(items, live, size);
    if (!records.length) return;
    const start = Math.ceil(size / 8) * 8;
    if (start > size) chunks.unshift(new Uint8Array(start - size));
    await writeAll(values, Buffer.concat(chunks), size);
    await writeAll(log, encodeRecords(records), whole);
    await compactIfWorthIt(dir, channel, g, live, end);
  } finally {
    await Promise.all([values.close(), log.close()]);
  }
}

/** The log's live records; a record torn by a killed writer is cut off first, so that the next records stay aligned. */
async function replayWhole(log: FileHandle, logBytes: Buffer): Promise<{ live: Map<string, ColumnRecord>; whole: number }> {
  const whole = logBytes.length - (logBytes.length % RECORD_BYTES);
  if (whole !== logBytes.length) await log.truncate(whole);
  return { live: replayLog(logBytes.subarray(0, whole)), whole };
}

/**
 * The entries to append after the values file's `size` (each at a multiple of 8), and their records,
 * for the items the column lacks (or holds for another stamp or length); `live` takes the new records.
 */
function newEntries(
  items: ColumnItem[],
  live: Map<string, ColumnRecord>,
  size: number,
): { chunks: Uint8Array[]; records: ColumnRecord[]; end: number } {
  let end = Math.ceil(size / 8) * 8;
  const chunks: Uint8Array[] = [];
  const records: ColumnRecord[] = [];
  for (const item of items) {
    const key = recordKey(item.id);
    const old = live.get(key);
    if (old && old.stamp === item.stamp && old.samples === item.values.length && old.offset + old.samples * old.width <= size) continue;
    const { width, bytes } = encodeValues(item.values);
    const padded = entryBytes(item.values.length, width);
    chunks.push(bytes);
    if (padded > bytes.length) chunks.push(new Uint8Array(padded - bytes.length));
    const record = { key, width, stamp: item.stamp, offset: end, samples: item.values.length };
    records.push(record);
    live.set(key, record);
    end += padded;
  }
  return { chunks, records, end };
}

/** Tombstones for the activities in every channel of the user, their bytes overwritten with zeros. */
async function remove(c: Columns, userId: string, ids: readonly string[]): Promise<void> {
  if (!ids.length) return;
  const dir = c.options.dir(userId);
  const names = await readdir(dir).catch(() => [] as string[]);
  const keys = new Set(ids.map(recordKey));
  for (const channel of names.filter((n) => n.endsWith('.current')).map((n) => n.slice(0, -'.current'.length))) {
    await c.lock(`columns/${userId}/${channel}`, () => removeLocked(dir, channel, names, keys));
  }
}

async function removeLocked(dir: string, channel: string, names: string[], keys: ReadonlySet<string>): Promise<void> {
  const g = await currentGeneration(dir, channel);
  if (!g) return;
  const values = await open(g.values, 'r+');
  const log = await open(g.log, 'r+');
  try {
    const { live, whole } = await replayWhole(log, await log.readFile());
    const { size } = await values.stat();
    const gone = recordsOf(live, keys);
    if (gone.length) {
      await zeroRecords(values, gone, size);
      for (const r of gone) live.delete(r.key);
      await writeAll(log, encodeRecords(gone.map((r) => ({ ...r, width: 0 }))), whole);
      await compactIfWorthIt(dir, channel, g, live, size);
    }
  } finally {
    await Promise.all([values.close(), log.close()]);
  }
  // The generations before (kept for readers in flight until the next compaction) hold them too.
  for (const gen of generationsBefore(names, channel, g.gen)) await zeroEntries(generation(dir, channel, gen), keys);
}

/**
 * Where the activities' samples of `channel` lie, in their order; those the column lacks (or holds
 * for another stamp or length) are first read from their sample files (one DuckDB query) and
 * appended. Concurrent requests of one (user, channel) share one fill. A derived column (`derive`
 * given: entries of any length, computed by it) is filled by it, batch by batch, outside the fill
 * slots (its deriver reads through `place` of another column, which takes them).
 */
async function place(
  c: Columns,
  userId: string,
  channel: string,
  activities: readonly ColumnActivity[],
  signal?: AbortSignal,
  derive?: DeriveEntries,
): Promise<ColumnPlace> {
  const dir = c.options.dir(userId);
  // Fills of our own, at most two (the second only when another writer replaced the first's entries meanwhile); waiting on another request's fill does not count.
  for (let filled = 0; ; ) {
    const g = await currentGeneration(dir, channel);
    // (./column-log-cache.ts: only what was appended since this process last read the log is read)
    const records = g ? await liveRecords(g.log, g.values) : undefined;
    const found = activities.map((a) => {
      const r = records?.get(recordKey(a.id));
      return r && r.stamp === a.stamp && (derive || r.samples === a.samples) ? r : undefined;
    });
    const missing = activities.filter((_, i) => !found[i]);
    if (!missing.length) {
      return {
        file: g!.values,
        offset: Float64Array.from(found, (r) => r!.offset),
        length: Int32Array.from(found, (r) => r!.samples),
        width: Uint8Array.from(found, (r) => r!.width),
      };
    }
    if (filled === 2) throw new Error(`The ${channel} column of user ${userId} still lacks ${missing.length} activities after filling it`);
    const key = `${userId}/${channel}`;
    const pending = c.filling.get(key);
    if (pending) {
      await pending.catch(() => undefined);
      continue;
    }
    const fill = fillColumn(c, userId, channel, missing, signal, derive).finally(() => c.filling.delete(key));
    c.filling.set(key, fill);
    filled++;
    await fill;
  }
}

/** Append the missing activities' entries, batch by batch: computed by `derive`, else read from their sample files within the fill slots. */
async function fillColumn(
  c: Columns,
  userId: string,
  channel: string,
  missing: ColumnActivity[],
  signal?: AbortSignal,
  derive?: DeriveEntries,
): Promise<void> {
  for (const batch of batches(missing)) {
    if (derive) {
      const entries = await derive(batch, signal);
      await append(
        c,
        userId,
        channel,
        batch.map((a, i) => ({ id: a.id, stamp: a.stamp, values: entries[i]! })),
      );
      continue;
    }
    const withFiles = c.options.withSampleFiles ?? ((_u, _activities, fn) => fn());
    await c.fillSlots.run(async () => {
      const values = new Float64Array(batch.reduce((n, a) => n + a.samples, 0));
      await withFiles(userId, batch, () =>
        readChannelInto(
          c.store,
          batch.map((a) => a.path),
          channel,
          values,
          signal,
        ),
      );
      let at = 0;
      await append(
        c,
        userId,
        channel,
        batch.map((a) => ({ id: a.id, stamp: a.stamp, values: values.subarray(at, (at += a.samples)) })),
      );
    });
  }
}

/**
 * What the column holds now, by activity id (its stamp and its values as float64), read in this
 * thread: for tests and tools, not for requests.
 */
async function held(c: Columns, userId: string, channel: string): Promise<Map<string, { stamp: number; values: Float64Array }>> {
  const g = await currentGeneration(c.options.dir(userId), channel);
  const live = g ? await liveRecords(g.log, g.values) : undefined;
  const out = new Map<string, { stamp: number; values: Float64Array }>();
  if (!g || !live) return out;
  const records = [...live.values()];
  const slices = readColumnSlices({
    file: g.values,
    offset: Float64Array.from(records, (r) => r.offset),
    length: Int32Array.from(records, (r) => r.samples),
    width: Uint8Array.from(records, (r) => r.width),
  });
  records.forEach((r, i) => {
    const k = r.key;
    const id = `${k.slice(0, 8)}-${k.slice(8, 12)}-${k.slice(12, 16)}-${k.slice(16, 20)}-${k.slice(20)}`;
    out.set(id, { stamp: r.stamp, values: slices.values.slice(slices.from[i]!, slices.from[i]! + slices.length[i]!) });
  });
  return out;
}

export type ChannelColumns = ReturnType<typeof createChannelColumns>;
