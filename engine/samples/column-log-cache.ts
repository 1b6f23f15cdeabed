/**
 * The live records of channel-column logs (./column-log.ts) as this process last read them, so that
 * a request reads a log's new records only: a log is appended to only within its generation, so a
 * `stat` of it and of its values file that finds the same files (device, inode, birth time), the log
 * as long as before and the values no shorter is the whole check, and a longer log is read from where
 * the last read stopped. Anything else (files made again, a shorter log or values file: damage) reads
 * the log again whole; a record that does not check (torn, written while it was read, or naming bytes
 * past the values file's end) is read again next time.
 *
 * Bounded: at most CACHED_RECORDS records over every log, least recently read first out, so the
 * memory is a constant (~100 B a record) whatever the number of users; a log evicted is read whole.
 */
import { open, readFile, stat } from 'node:fs/promises';
import { RECORD_BYTES, replayInto, type ColumnRecord } from './column-log.ts';

/** Records kept over every log (about 20 MB). */
export const CACHED_RECORDS = 200_000;

interface Cached {
  /** Which files these were (device, inode, birth time): a log or values file made again is read whole. */
  identity: string;
  /** The values file's size when last read: smaller now means damage, and the log is read whole. */
  valuesSize: number;
  /** How far the log has been taken (whole, valid records up to here). */
  bytes: number;
  records: Map<string, ColumnRecord>;
}

const cache = new Map<string, Cached>();
let cachedRecords = 0;

function remember(log: string, entry: Cached): void {
  const old = cache.get(log);
  if (old) {
    cache.delete(log);
    cachedRecords -= old.records.size;
  }
  if (entry.records.size > CACHED_RECORDS) return;
  cache.set(log, entry);
  cachedRecords += entry.records.size;
  for (const [key, oldest] of cache) {
    if (cachedRecords <= CACHED_RECORDS) break;
    cache.delete(key);
    cachedRecords -= oldest.records.size;
  }
}

/**
 * The live records of a log whose entries must lie within `values` (a record naming bytes past its
 * end is not taken). The map is shared: read it, never change it. Undefined when either file is gone.
 */
export async function liveRecords(log: string, values: string): Promise<Map<string, ColumnRecord> | undefined> {
  // The values file first: records read after it name only bytes written before it.
  const [v, l] = await Promise.all([
    stat(values, { bigint: true }).catch(() => undefined),
    stat(log, { bigint: true }).catch(() => undefined),
  ]);
  if (!v || !l) return undefined;
  const identity = `${l.dev}:${l.ino}:${l.birthtimeNs}/${v.dev}:${v.ino}:${v.birthtimeNs}`;
  const valuesSize = Number(v.size);
  const whole = Number(l.size) - (Number(l.size) % RECORD_BYTES);
  const cached = cache.get(log);
  const usable = cached && cached.identity === identity && cached.valuesSize <= valuesSize && cached.bytes <= whole ? cached : undefined;
  if (usable && usable.bytes === whole) {
    // Most recently read: to the end of the eviction order.
    cache.delete(log);
    cache.set(log, usable);
    return usable.records;
  }
  const from = usable ? usable.bytes : 0;
  const tail = await readBytes(log, from, whole);
  if (!tail) return undefined;
  // A copy: a request that read the map a moment ago may still hold it.
  const records = usable ? new Map(usable.records) : new Map<string, ColumnRecord>();
  const upTo = replayInto(tail, records, (r) => r.offset + r.samples * r.width <= valuesSize);
  const current = cache.get(log);
  if (!current || current.identity !== identity || current.bytes <= from + upTo)
    remember(log, { identity, valuesSize, bytes: from + upTo, records });
  return records;
}

/** `.current` files' generations as last read, by path; a few hundred bytes each, at most CACHED_CURRENT. */
const CACHED_CURRENT = 50_000;
const currents = new Map<string, { identity: string; gen: number }>();

/**
 * The generation a column's `.current` file names (a positive integer; undefined when the file is
 * missing or holds anything else), read again only when a `stat` finds another file or another
 * modification: the file is only ever replaced whole (written beside and renamed over), so one stat
 * stands for the open, read and close of reading it.
 */
export async function currentNumber(file: string): Promise<number | undefined> {
  const s = await stat(file, { bigint: true }).catch(() => undefined);
  if (!s) return undefined;
  const identity = `${s.dev}:${s.ino}:${s.birthtimeNs}:${s.mtimeNs}:${s.ctimeNs}:${s.size}`;
  const known = currents.get(file);
  if (known?.identity === identity) return known.gen;
  const text = await readFile(file, 'utf8').catch(() => undefined);
  const gen = Number(text);
  if (text === undefined || !Number.isSafeInteger(gen) || gen <= 0) return undefined;
  // (Replaced between the stat and the read: the next stat finds another file and reads it again.)
  currents.delete(file);
  currents.set(file, { identity, gen });
  if (currents.size > CACHED_CURRENT) currents.delete(currents.keys().next().value!);
  return gen;
}

async function readBytes(file: string, from: number, to: number): Promise<Buffer | undefined> {
  const handle = await open(file, 'r').catch(() => undefined);
  if (!handle) return undefined;
  try {
    const bytes = Buffer.alloc(to - from);
    let at = 0;
    while (at < bytes.length) {
      const { bytesRead } = await handle.read(bytes, at, bytes.length - at, from + at);
      if (bytesRead === 0) break;
      at += bytesRead;
    }
    return bytes.subarray(0, at - (at % RECORD_BYTES));
  } finally {
    await handle.close();
  }
}

/** Forget every log (tests). */
export function clearLogCache(): void {
  cache.clear();
  cachedRecords = 0;
}
