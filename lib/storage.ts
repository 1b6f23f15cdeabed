import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isUuid } from './ids.ts';

/**
 * What lives on this host's disk under DATA_DIR. Every path is derived from ids the service generated
 * (UUIDs), never from user input. The objects (originals, sample files, history archives) are the
 * object store's (lib/object-store.ts): with the local store they are files here too, under the same
 * keys; with S3, copies of them under cache/ (lib/object-cache.ts).
 *
 *   users/{user_id}/columns/{channel}.{current,N.values,N.log}  the channel columns (derived from the samples)
 *   cache/{key}                                                 copies of a remote store's objects
 *   tmp/                                                        uploads in flight, spooled archives
 */
function id(value: string): string {
  if (!isUuid(value)) throw new Error(`not a generated id: ${JSON.stringify(value)}`);
  return value;
}

/** A user's channel columns (engine/samples/channel-columns.ts): derived from the sample files, rebuilt from them when missing. */
export function columnsDir(dataDir: string, userId: string): string {
  return path.resolve(dataDir, 'users', id(userId), 'columns');
}

export function tmpDir(dataDir: string): string {
  return path.resolve(dataDir, 'tmp');
}

/** Make a file so that readers see either nothing or the whole file: `write` fills a temporary name beside it, then it is renamed. */
export async function writeAtomically(file: string, write: (tmp: string) => Promise<unknown>): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${randomBytes(6).toString('hex')}`;
  try {
    await write(tmp);
    await rename(tmp, file);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

/** Write bytes as a file, atomically (writeAtomically). */
export function writeFileAtomic(file: string, bytes: Uint8Array): Promise<void> {
  return writeAtomically(file, (tmp) => writeFile(tmp, bytes));
}

export function removeFiles(files: string[]): Promise<void> {
  return Promise.all(files.map((f) => rm(f, { force: true }))).then(() => undefined);
}

/** Remove what uploads left in DATA_DIR/tmp before `before` (a process stopped mid-request). Returns how many. */
export async function removeStaleTemporaryFiles(dataDir: string, before: Date): Promise<number> {
  const dir = tmpDir(dataDir);
  const names = await readdir(dir).catch(() => [] as string[]);
  let removed = 0;
  for (const name of names) {
    const entry = path.join(dir, name);
    const info = await stat(entry).catch(() => undefined);
    if (info && info.mtime < before) {
      await rm(entry, { recursive: true, force: true });
      removed += 1;
    }
  }
  return removed;
}
