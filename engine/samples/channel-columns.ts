/**
 * Channel columns: one user's samples of one channel, every activity's in one Float64Array, so a
 * longitudinal scan reads no Parquet file at all (DESIGN.md §2 "Sample store" stays the source of truth).
 *
 *   column   = the activities that record the channel, oldest first (start, id), each activity's 1 Hz
 *              values back to back, gaps as 0 (the `after` kernels' input); a SharedArrayBuffer, so
 *              the engine threads read it where it lies (no copy, no transfer).
 *   slices   = activity id → [offset, length) in the column, with the activity's stamp (its row's
 *              updated_at): an activity deleted and ingested again under the same id, or re-derived
 *              (`cli reprocess` rewrites its sample file), has a new stamp.
 *
 * A column is labelled with the user's data version (users.data_version, bumped in the transaction
 * of every change to their activities). A request names the version it read; a column of another
 * version is rebuilt from the listing of that moment, reusing the slices whose id, stamp and length
 * are unchanged and reading only the other activities' sample files (one DuckDB query): after an
 * upload, one new file is read, not the whole history.
 *
 * Kept in memory (least recently used first out, within `maxBytes`) and on disk under `dir(userId)`
 * as `<channel>.json` (version, slices, and the name of its values file) and `<channel>.<tag>.f64`
 * (the values, little-endian), so another process (or this one after a restart) loads a column with
 * one sequential read. Concurrent requests for the same column share one build.
 */
import { mkdir, open, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { writeFileAtomic } from '../../lib/storage.ts';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { SampleStore } from './sample-file.ts';
import { readChannelInto } from './sample-scan.ts';
import type { Slices } from '../curves/longitudinal.ts';

/** An activity as the column needs it: its id, its stamp, its sample count and its sample file. */
export interface ColumnActivity {
  id: string;
  stamp: number;
  samples: number;
  path: string;
}

/** Every activity of the user recording the channel, oldest first, at one data version. */
export interface ColumnListing {
  version: string;
  activities: ColumnActivity[];
}

interface Slice {
  offset: number;
  length: number;
  stamp: number;
}

export interface ChannelColumn {
  version: string;
  /** Backed by a SharedArrayBuffer. */
  values: Float64Array;
  slices: Map<string, Slice>;
}


const FORMAT = 1;

export interface ChannelColumnsOptions {
  /** Memory kept for columns (bytes); the least recently used columns are dropped beyond it. */
  maxBytes: number;
  /** Where a user's columns are kept on disk. */
  dir: (userId: string) => string;
}

export function createChannelColumns(store: SampleStore, options: ChannelColumnsOptions) {
  const memory = new Map<string, ChannelColumn>();
  const building = new Map<string, Promise<ChannelColumn>>();
  const saving = new Set<Promise<void>>();
  let bytes = 0;

  function remember(key: string, column: ChannelColumn): void {
    const old = memory.get(key);
    if (old) {
      bytes -= old.values.byteLength;
      memory.delete(key);
    }
    memory.set(key, column);
    bytes += column.values.byteLength;
    for (const [k, c] of memory) {
      if (bytes <= options.maxBytes || k === key) break;
      memory.delete(k);
      bytes -= c.values.byteLength;
    }
  }

  /**
   * The column of (user, channel) at `version`; `list` gives the listing when it must be (re)built.
   * The column returned may be of a later version than asked when the data changed meanwhile.
   */
  async function column(userId: string, channel: string, version: string, list: () => Promise<ColumnListing>, signal?: AbortSignal): Promise<ChannelColumn> {
    const key = `${userId}/${channel}`;
    const held = memory.get(key);
    if (held && held.version === version) {
      memory.delete(key);
      memory.set(key, held);
      return held;
    }
    const flight = `${key}@${version}`;
    let pending = building.get(flight);
    if (!pending) {
      pending = (async () => {
        const listing = await list();
        const dir = options.dir(userId);
        const base = held ?? (await loadColumn(dir, channel).catch(() => undefined));
        const built = base && base.version === listing.version && covers(base, listing) ? base : await buildColumn(store, listing, base, channel, signal);
        remember(key, built);
        // Written to disk after the answer: the request does not wait for hundreds of MB to be written.
        if (built !== base) {
          const saved = saveColumn(dir, channel, built).finally(() => saving.delete(saved));
          saving.add(saved);
        }
        return built;
      })().finally(() => building.delete(flight));
      building.set(flight, pending);
    }
    return pending;
  }

  return {
    column,
    /** Resolves when every column built so far is on disk (writes run after the request that built them). */
    async saved(): Promise<void> {
      while (saving.size) await Promise.all(saving);
    },
    /** Bytes held in memory now. */
    get bytes() {
      return bytes;
    },
  };
}
export type ChannelColumns = ReturnType<typeof createChannelColumns>;

/** The slices of `activities` (in that order), or undefined when the column lacks one of them. */
export function slicesOf(column: ChannelColumn, activities: readonly { id: string; samples: number }[]): Slices | undefined {
  const from = new Int32Array(activities.length);
  const length = new Int32Array(activities.length);
  for (let a = 0; a < activities.length; a++) {
    const slice = column.slices.get(activities[a]!.id);
    if (!slice || slice.length !== activities[a]!.samples) return undefined;
    from[a] = slice.offset;
    length[a] = slice.length;
  }
  return { values: column.values, from, length };
}

function covers(column: ChannelColumn, listing: ColumnListing): boolean {
  return listing.activities.every((a) => {
    const slice = column.slices.get(a.id);
    return slice !== undefined && slice.stamp === a.stamp && slice.length === a.samples;
  });
}

/**
 * The listing's column: unchanged slices copied from `base`, the other activities read from their
 * sample files. When the listing is `base` with activities added after its last one (a new ride is
 * the newest), `base`'s buffer grows in place instead (extend): nothing is copied.
 */
async function buildColumn(store: SampleStore, listing: ColumnListing, base: ChannelColumn | undefined, channel: string, signal?: AbortSignal): Promise<ChannelColumn> {
  const total = listing.activities.reduce((n, a) => n + a.samples, 0);
  const grown = base ? extend(base, listing, total) : undefined;
  if (grown) {
    const { column, added } = grown;
    await readInto(store, channel, column.values, added, signal);
    return column;
  }
  const values = sharedColumn(total);
  const slices = new Map<string, Slice>();
  const missing: { activity: ColumnActivity; offset: number }[] = [];
  let offset = 0;
  for (const activity of listing.activities) {
    const old = base?.slices.get(activity.id);
    if (old && old.stamp === activity.stamp && old.length === activity.samples) {
      values.set(base!.values.subarray(old.offset, old.offset + old.length), offset);
    } else {
      missing.push({ activity, offset });
    }
    slices.set(activity.id, { offset, length: activity.samples, stamp: activity.stamp });
    offset += activity.samples;
  }
  await readInto(store, channel, values, missing, signal);
  return { version: listing.version, values, slices };
}

/** Column values in shared memory that can grow in place (up to MAX_COLUMN_BYTES, reserved, not used). */
function sharedColumn(length: number): Float64Array {
  const bytes = length * Float64Array.BYTES_PER_ELEMENT;
  const buffer = bytes <= MAX_COLUMN_BYTES ? new SharedArrayBuffer(bytes, { maxByteLength: MAX_COLUMN_BYTES }) : new SharedArrayBuffer(bytes);
  return new Float64Array(buffer, 0, length);
}

/** The most a column's buffer may grow to in place: 2^32 bytes (536 M samples), the most V8 reserves here. */
const MAX_COLUMN_BYTES = 2 ** 32;

/**
 * `listing` as `base` grown in place, when the listing is every activity of `base` in its order and
 * at its offsets, then new ones: the buffer grows (at once, so that no other build from `base` can
 * grow it too: it then no longer ends where `base` does) and the new activities are to be read into
 * the end. Readers of `base` keep their view, which does not see past its own end.
 */
function extend(base: ChannelColumn, listing: ColumnListing, total: number): { column: ChannelColumn; added: { activity: ColumnActivity; offset: number }[] } | undefined {
  const buffer = base.values.buffer as SharedArrayBuffer;
  const end = base.values.byteOffset + base.values.byteLength;
  if (!buffer.growable || buffer.byteLength !== end || total * Float64Array.BYTES_PER_ELEMENT > buffer.maxByteLength) return undefined;
  let offset = 0;
  let kept = 0;
  for (const activity of listing.activities) {
    const old = base.slices.get(activity.id);
    if (!old || old.offset !== offset || old.stamp !== activity.stamp || old.length !== activity.samples) break;
    offset += activity.samples;
    kept++;
  }
  if (offset !== base.values.length || kept === listing.activities.length) return undefined;
  const slices = new Map<string, Slice>(base.slices);
  const added: { activity: ColumnActivity; offset: number }[] = [];
  for (const activity of listing.activities.slice(kept)) {
    if (slices.has(activity.id)) return undefined; // (an activity moved: rebuild)
    slices.set(activity.id, { offset, length: activity.samples, stamp: activity.stamp });
    added.push({ activity, offset });
    offset += activity.samples;
  }
  buffer.grow(total * Float64Array.BYTES_PER_ELEMENT);
  return { column: { version: listing.version, values: new Float64Array(buffer, 0, total), slices }, added };
}

/** The sample files of `missing` read (one DuckDB query) into `values` at their offsets. */
async function readInto(store: SampleStore, channel: string, values: Float64Array, missing: { activity: ColumnActivity; offset: number }[], signal?: AbortSignal): Promise<void> {
  if (!missing.length) return;
  const read = new Float64Array(missing.reduce((n, m) => n + m.activity.samples, 0));
  await readChannelInto(store, missing.map((m) => m.activity.path), channel, read, signal);
  let at = 0;
  for (const { activity, offset: to } of missing) {
    values.set(read.subarray(at, at + activity.samples), to);
    at += activity.samples;
  }
}

interface ColumnIndex {
  format: number;
  version: string;
  /** The values file this index describes (each write has its own). */
  values: string;
  length: number;
  slices: [string, number, number, number][];
}

async function loadColumn(dir: string, channel: string): Promise<ChannelColumn | undefined> {
  const index = JSON.parse(await readFile(path.join(dir, `${channel}.json`), 'utf8')) as ColumnIndex;
  if (index.format !== FORMAT || path.basename(index.values) !== index.values) return undefined;
  const values = sharedColumn(index.length);
  const target = new Uint8Array(values.buffer);
  const file = await open(path.join(dir, index.values));
  try {
    const { size } = await file.stat();
    if (size !== target.length) return undefined;
    for (let at = 0; at < target.length; ) {
      const { bytesRead } = await file.read(target, at, target.length - at, at);
      if (bytesRead === 0) return undefined;
      at += bytesRead;
    }
  } finally {
    await file.close();
  }
  return { version: index.version, values, slices: new Map(index.slices.map(([id, offset, length, stamp]) => [id, { offset, length, stamp }])) };
}

/**
 * Each write's values go to a file of their own (`<channel>.<tag>.f64`) named by the index, which is
 * renamed into place last: a reader sees an old complete pair or the new one, never a mix, whatever
 * other processes write meanwhile. The values file the replaced index named is removed.
 */
async function saveColumn(dir: string, channel: string, column: ChannelColumn): Promise<void> {
  await mkdir(dir, { recursive: true });
  const tag = randomBytes(6).toString('hex');
  const valuesName = `${channel}.${tag}.f64`;
  const indexFile = path.join(dir, `${channel}.json`);
  const index: ColumnIndex = {
    format: FORMAT,
    version: column.version,
    values: valuesName,
    length: column.values.length,
    slices: [...column.slices].map(([id, s]) => [id, s.offset, s.length, s.stamp]),
  };
  try {
    await writeFile(path.join(dir, valuesName), new Uint8Array(column.values.buffer, column.values.byteOffset, column.values.byteLength));
    const replaced = await readFile(indexFile, 'utf8').then((text) => (JSON.parse(text) as ColumnIndex).values, () => undefined);
    await writeFileAtomic(indexFile, Buffer.from(JSON.stringify(index)));
    if (replaced && replaced !== valuesName && path.basename(replaced) === replaced) await rm(path.join(dir, replaced), { force: true });
    await removeOrphans(dir, channel, valuesName);
  } catch {
    // A cache that cannot be written is only slower next time.
    await rm(path.join(dir, valuesName), { force: true }).catch(() => undefined);
  }
}

/** Values files no index names, left by a process stopped mid-write; an hour's grace for writes in flight elsewhere. */
async function removeOrphans(dir: string, channel: string, current: string): Promise<void> {
  const cutoff = Date.now() - 3_600_000;
  for (const name of await readdir(dir)) {
    if (name === current || !name.startsWith(`${channel}.`) || !name.endsWith('.f64')) continue;
    const info = await stat(path.join(dir, name)).catch(() => undefined);
    if (info && info.mtimeMs < cutoff) await rm(path.join(dir, name), { force: true });
  }
}
