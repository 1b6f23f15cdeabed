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
import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '../../lib/storage.ts';
import type { SampleStore } from './sample-file.ts';
import { readChannelInto } from './sample-scan.ts';
import { encodeRecords, entryBytes, RECORD_BYTES, recordKey, replayLog, type ColumnRecord } from './column-log.ts';
import { readColumnSlices, type ColumnPlace } from './column-read.ts';
import { currentNumber, liveRecords } from './column-log-cache.ts';

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
}

/** Compact when the dead bytes exceed the live ones and this much. */
const COMPACT_MIN_DEAD_BYTES = 4 * 1024 * 1024;

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

interface Generation {
  gen: number;
  values: string;
  log: string;
}

function generation(dir: string, channel: string, gen: number): Generation {
  return { gen, values: path.join(dir, `${channel}.${gen}.values`), log: path.join(dir, `${channel}.${gen}.log`) };
}

async function currentGeneration(dir: string, channel: string): Promise<Generation | undefined> {
  const gen = await currentNumber(path.join(dir, `${channel}.current`));
  return gen === undefined ? undefined : generation(dir, channel, gen);
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

export function createChannelColumns(store: SampleStore, options: ChannelColumnsOptions) {
  const lock = options.lock ?? processLock();
  const filling = new Map<string, Promise<void>>();
  const fillSlots = limiter(FILL_SLOTS);

  /**
   * Under the lock: append entries for the activities (values as they are in memory or in their
   * sample files: NaN gaps become 0), skipping those already present with the same stamp and length.
   * With `ifStarted`, only to a column that exists already (a channel some request asked for).
   */
  async function append(
    userId: string,
    channel: string,
    items: { id: string; stamp: number; values: Float64Array }[],
    opts: { ifStarted?: boolean } = {},
  ): Promise<void> {
    if (!items.length) return;
    const dir = options.dir(userId);
    if (opts.ifStarted && !(await currentGeneration(dir, channel))) return;
    await lock(`columns/${userId}/${channel}`, async () => {
      await mkdir(dir, { recursive: true });
      let g = await currentGeneration(dir, channel);
      if (!g) {
        g = generation(dir, channel, 1);
        await removeLegacy(dir, channel);
        await Promise.all([writeFileAtomic(g.values, new Uint8Array(0)), writeFileAtomic(g.log, new Uint8Array(0))]);
        await writeFileAtomic(path.join(dir, `${channel}.current`), Buffer.from('1\n'));
      }
      const values = await open(g.values, 'r+');
      const log = await open(g.log, 'r+');
      try {
        const [logBytes, { size }] = await Promise.all([log.readFile(), values.stat()]);
        // A record torn by a killed writer is cut off, so that the next records stay aligned.
        const whole = logBytes.length - (logBytes.length % RECORD_BYTES);
        if (whole !== logBytes.length) await log.truncate(whole);
        const live = replayLog(logBytes.subarray(0, whole));
        let end = Math.ceil(size / 8) * 8;
        const chunks: Uint8Array[] = [];
        const records: ColumnRecord[] = [];
        for (const item of items) {
          const key = recordKey(item.id);
          const old = live.get(key);
          if (old && old.stamp === item.stamp && old.samples === item.values.length && old.offset + old.samples * old.width <= size)
            continue;
          const { width, bytes } = encodeValues(item.values);
          const padded = entryBytes(item.values.length, width);
          chunks.push(bytes);
          if (padded > bytes.length) chunks.push(new Uint8Array(padded - bytes.length));
          const record = { key, width, stamp: item.stamp, offset: end, samples: item.values.length };
          records.push(record);
          live.set(key, record);
          end += padded;
        }
        if (!records.length) return;
        const start = Math.ceil(size / 8) * 8;
        if (start > size) chunks.unshift(new Uint8Array(start - size));
        await writeAll(values, Buffer.concat(chunks), size);
        await writeAll(log, encodeRecords(records), whole);
        await compactIfWorthIt(dir, channel, g, live, end);
      } finally {
        await Promise.all([values.close(), log.close()]);
      }
    });
  }

  /** Tombstones for the activities in every channel of the user, their bytes overwritten with zeros. */
  async function remove(userId: string, ids: readonly string[]): Promise<void> {
    if (!ids.length) return;
    const dir = options.dir(userId);
    const names = await readdir(dir).catch(() => [] as string[]);
    const keys = new Set(ids.map(recordKey));
    for (const channel of names.filter((n) => n.endsWith('.current')).map((n) => n.slice(0, -'.current'.length))) {
      await lock(`columns/${userId}/${channel}`, async () => {
        const g = await currentGeneration(dir, channel);
        if (!g) return;
        const values = await open(g.values, 'r+');
        const log = await open(g.log, 'r+');
        try {
          const logBytes = await log.readFile();
          const whole = logBytes.length - (logBytes.length % RECORD_BYTES);
          if (whole !== logBytes.length) await log.truncate(whole);
          const live = replayLog(logBytes.subarray(0, whole));
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
      });
    }
  }

  /**
   * Where the activities' samples of `channel` lie, in their order; those the column lacks (or holds
   * for another stamp or length) are first read from their sample files (one DuckDB query) and
   * appended. Concurrent requests of one (user, channel) share one fill. A derived column (`derive`
   * given: entries of any length, computed by it) is filled by it, batch by batch, outside the fill
   * slots (its deriver reads through `place` of another column, which takes them).
   */
  async function place(
    userId: string,
    channel: string,
    activities: readonly ColumnActivity[],
    signal?: AbortSignal,
    derive?: DeriveEntries,
  ): Promise<ColumnPlace> {
    const dir = options.dir(userId);
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
      if (filled === 2)
        throw new Error(`The ${channel} column of user ${userId} still lacks ${missing.length} activities after filling it`);
      const key = `${userId}/${channel}`;
      const pending = filling.get(key);
      if (pending) {
        await pending.catch(() => undefined);
        continue;
      }
      const fill = (async () => {
        for (const batch of batches(missing)) {
          if (derive) {
            const entries = await derive(batch, signal);
            await append(
              userId,
              channel,
              batch.map((a, i) => ({ id: a.id, stamp: a.stamp, values: entries[i]! })),
            );
            continue;
          }
          await fillSlots.run(async () => {
            const values = new Float64Array(batch.reduce((n, a) => n + a.samples, 0));
            await readChannelInto(
              store,
              batch.map((a) => a.path),
              channel,
              values,
              signal,
            );
            let at = 0;
            await append(
              userId,
              channel,
              batch.map((a) => ({ id: a.id, stamp: a.stamp, values: values.subarray(at, (at += a.samples)) })),
            );
          });
        }
      })().finally(() => filling.delete(key));
      filling.set(key, fill);
      filled++;
      await fill;
    }
  }

  /**
   * What the column holds now, by activity id (its stamp and its values as float64), read in this
   * thread: for tests and tools, not for requests.
   */
  async function held(userId: string, channel: string): Promise<Map<string, { stamp: number; values: Float64Array }>> {
    const g = await currentGeneration(options.dir(userId), channel);
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

  return { place, append, remove, held };
}
export type ChannelColumns = ReturnType<typeof createChannelColumns>;

async function writeAll(file: FileHandle, bytes: Uint8Array, position: number): Promise<void> {
  for (let at = 0; at < bytes.length; ) {
    const { bytesWritten } = await file.write(bytes, at, bytes.length - at, position + at);
    at += bytesWritten;
  }
}

/**
 * The live entries copied into generation g+1 (in their order in the file) when dead bytes outweigh
 * live ones; `.current` then names it. Generations before g are removed: g stays for readers that
 * placed their activities in it a moment ago.
 */
async function compactIfWorthIt(dir: string, channel: string, g: Generation, live: Map<string, ColumnRecord>, size: number): Promise<void> {
  let liveBytes = 0;
  for (const r of live.values()) liveBytes += entryBytes(r.samples, r.width);
  const dead = size - liveBytes;
  if (dead <= liveBytes || dead < COMPACT_MIN_DEAD_BYTES) return;
  const next = generation(dir, channel, g.gen + 1);
  const tmp = `${next.values}.tmp-${randomBytes(6).toString('hex')}`;
  try {
    await compactInto(g, next, tmp, live);
    await writeFileAtomic(path.join(dir, `${channel}.current`), Buffer.from(`${next.gen}\n`));
  } catch {
    // A column that cannot be compacted now is only larger: the next writer tries again.
    await rm(tmp, { force: true }).catch(() => undefined);
    return;
  }
  for (const gen of generationsBefore(await readdir(dir).catch(() => [] as string[]), channel, g.gen)) {
    const old = generation(dir, channel, gen);
    await Promise.all([old.values, old.log].map((file) => rm(file, { force: true }).catch(() => undefined)));
  }
}

async function compactInto(g: Generation, next: Generation, tmp: string, live: Map<string, ColumnRecord>): Promise<void> {
  const from = await open(g.values, 'r');
  const to = await open(tmp, 'w');
  const records: ColumnRecord[] = [];
  try {
    let end = 0;
    for (const r of [...live.values()].sort((a, b) => a.offset - b.offset)) {
      const bytes = entryBytes(r.samples, r.width);
      const buffer = Buffer.alloc(bytes);
      for (let at = 0; at < r.samples * r.width; ) {
        const { bytesRead } = await from.read(buffer, at, r.samples * r.width - at, r.offset + at);
        if (bytesRead === 0) throw new Error(`${g.values} ends inside a live entry`);
        at += bytesRead;
      }
      await writeAll(to, buffer, end);
      records.push({ ...r, offset: end });
      end += bytes;
    }
  } finally {
    await Promise.all([from.close(), to.close()]);
  }
  await writeFileAtomic(next.log, encodeRecords(records));
  await rename(tmp, next.values);
}

/** The generations of `channel` before `gen` among a directory's file names (their values or log file still there). */
function generationsBefore(names: readonly string[], channel: string, gen: number): number[] {
  const gens = new Set<number>();
  for (const name of names) {
    const m = /^(.+)\.(\d+)\.(values|log)$/.exec(name);
    if (m && m[1] === channel && Number(m[2]) < gen) gens.add(Number(m[2]));
  }
  return [...gens];
}

/** The live records among `keys`. */
function recordsOf(live: ReadonlyMap<string, ColumnRecord>, keys: ReadonlySet<string>): ColumnRecord[] {
  return [...keys].map((k) => live.get(k)).filter((r): r is ColumnRecord => r !== undefined);
}

/** Overwrite the records' bytes with zeros (within the file's `size`). */
async function zeroRecords(values: FileHandle, records: readonly ColumnRecord[], size: number): Promise<void> {
  for (const r of records) {
    const bytes = Math.min(r.samples * r.width, size - r.offset);
    if (bytes > 0) await writeAll(values, Buffer.alloc(bytes), r.offset);
  }
}

/** Zeros over the entries `keys` name in an older generation (its log is left as it is: nobody appends to it). */
async function zeroEntries(g: Generation, keys: ReadonlySet<string>): Promise<void> {
  const logBytes = await readFile(g.log).catch(() => undefined);
  if (!logBytes) return;
  const hit = recordsOf(replayLog(logBytes.subarray(0, logBytes.length - (logBytes.length % RECORD_BYTES))), keys);
  if (!hit.length) return;
  const values = await open(g.values, 'r+').catch(() => undefined);
  if (!values) return;
  try {
    await zeroRecords(values, hit, (await values.stat()).size);
  } finally {
    await values.close();
  }
}

/** Files of the previous column format (one `<channel>.json` index and `<channel>.<tag>.f64` values per channel). */
async function removeLegacy(dir: string, channel: string): Promise<void> {
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    if (name === `${channel}.json` || (name.startsWith(`${channel}.`) && name.endsWith('.f64')))
      await rm(path.join(dir, name), { force: true });
  }
}
