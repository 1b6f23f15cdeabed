import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isUuid } from './ids.ts';

/**
 * Where files live under DATA_DIR. Every path is derived from ids the service generated (UUIDs),
 * never from user input, so no upload can choose where it lands.
 *
 *   users/{user_id}/sources/{source_id}.{fit|csv}         the original file, for /download
 *   users/{user_id}/activities/{activity_id}.parquet      the 1 Hz samples
 *   users/{user_id}/columns/{channel}.{current,N.values,N.log}  the channel columns (derived from the samples)
 *   backfills/{backfill_id}.zip                           a history archive until it is read
 *   tmp/                                                  uploads in flight
 */
function id(value: string): string {
  if (!isUuid(value)) throw new Error(`not a generated id: ${JSON.stringify(value)}`);
  return value;
}

export function originalPath(dataDir: string, userId: string, sourceId: string, type: 'fit' | 'csv' | 'gpx' | 'tcx'): string {
  return path.resolve(dataDir, 'users', id(userId), 'sources', `${id(sourceId)}.${type}`);
}

export function samplePath(dataDir: string, userId: string, activityId: string): string {
  return path.resolve(dataDir, 'users', id(userId), 'activities', `${id(activityId)}.parquet`);
}

/** A user's channel columns (engine/samples/channel-columns.ts): derived from the sample files, rebuilt from them when missing. */
export function columnsDir(dataDir: string, userId: string): string {
  return path.resolve(dataDir, 'users', id(userId), 'columns');
}

export function archivePath(dataDir: string, backfillId: string): string {
  return path.resolve(dataDir, 'backfills', `${id(backfillId)}.zip`);
}

export function tmpDir(dataDir: string): string {
  return path.resolve(dataDir, 'tmp');
}

/** Write a file so that readers see either nothing or the whole file (temporary name, then rename). */
export async function writeFileAtomic(file: string, bytes: Uint8Array): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${randomBytes(6).toString('hex')}`;
  try {
    await writeFile(tmp, bytes);
    await rename(tmp, file);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

/** Move a finished temporary file into place (same filesystem: both live under DATA_DIR). */
export async function moveInto(from: string, to: string): Promise<void> {
  await mkdir(path.dirname(to), { recursive: true });
  await rename(from, to);
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
