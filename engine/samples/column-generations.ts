/**
 * A channel column's files on disk (./channel-columns.ts's module comment gives their layout): its
 * generations and which one `.current` names, a first one made, the live entries compacted into the
 * next, removed entries' bytes overwritten with zeros, the files of generations before removed.
 */
import { randomBytes } from 'node:crypto';
import { open, readdir, readFile, rename, rm, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '../../lib/storage.ts';
import { encodeRecords, entryBytes, RECORD_BYTES, replayLog, type ColumnRecord } from './column-log.ts';
import { currentNumber } from './column-log-cache.ts';

/** Compact when the dead bytes exceed the live ones and this much. */
const COMPACT_MIN_DEAD_BYTES = 4 * 1024 * 1024;

export interface Generation {
  gen: number;
  values: string;
  log: string;
}

export function generation(dir: string, channel: string, gen: number): Generation {
  return { gen, values: path.join(dir, `${channel}.${gen}.values`), log: path.join(dir, `${channel}.${gen}.log`) };
}

export async function currentGeneration(dir: string, channel: string): Promise<Generation | undefined> {
  const gen = await currentNumber(path.join(dir, `${channel}.current`));
  return gen === undefined ? undefined : generation(dir, channel, gen);
}

/** A column's first generation, empty, named by `.current` (the previous format's files removed). */
export async function startColumn(dir: string, channel: string): Promise<Generation> {
  const g = generation(dir, channel, 1);
  await removeLegacy(dir, channel);
  await Promise.all([writeFileAtomic(g.values, new Uint8Array(0)), writeFileAtomic(g.log, new Uint8Array(0))]);
  await writeFileAtomic(path.join(dir, `${channel}.current`), Buffer.from('1\n'));
  return g;
}

export async function writeAll(file: FileHandle, bytes: Uint8Array, position: number): Promise<void> {
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
export async function compactIfWorthIt(
  dir: string,
  channel: string,
  g: Generation,
  live: Map<string, ColumnRecord>,
  size: number,
): Promise<void> {
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
export function generationsBefore(names: readonly string[], channel: string, gen: number): number[] {
  const gens = new Set<number>();
  for (const name of names) {
    const m = /^(.+)\.(\d+)\.(values|log)$/.exec(name);
    if (m && m[1] === channel && Number(m[2]) < gen) gens.add(Number(m[2]));
  }
  return [...gens];
}

/** The live records among `keys`. */
export function recordsOf(live: ReadonlyMap<string, ColumnRecord>, keys: ReadonlySet<string>): ColumnRecord[] {
  return [...keys].map((k) => live.get(k)).filter((r): r is ColumnRecord => r !== undefined);
}

/** Overwrite the records' bytes with zeros (within the file's `size`). */
export async function zeroRecords(values: FileHandle, records: readonly ColumnRecord[], size: number): Promise<void> {
  for (const r of records) {
    const bytes = Math.min(r.samples * r.width, size - r.offset);
    if (bytes > 0) await writeAll(values, Buffer.alloc(bytes), r.offset);
  }
}

/** Zeros over the entries `keys` name in an older generation (its log is left as it is: nobody appends to it). */
export async function zeroEntries(g: Generation, keys: ReadonlySet<string>): Promise<void> {
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
