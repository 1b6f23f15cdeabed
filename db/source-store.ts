import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import type { Db, Source, SourceMetadata, SourceOrigin } from './database.ts';
import { insertSource } from './sources.ts';
import type { CheckedFile } from '../engine/ingest/check-file.ts';
import type { CheckedPath } from '../engine/ingest/check-file-on-disk.ts';
import type { ActivityFormat } from '../engine/ingest/sniff.ts';
import { moveInto, originalPath, writeFileAtomic } from '../lib/storage.ts';

/**
 * Store a checked file as a source of `userId`, or find the source the same content already is.
 * The original is written under the new source's id before its row exists, so a row never points at
 * a missing file; a duplicate's file is removed again.
 */
export async function storeSource(
  db: Db,
  dataDir: string,
  file: CheckedFile & { format: ActivityFormat },
  values: SourceValues,
): Promise<{ source: Source; created: boolean }> {
  return store(db, dataDir, { ...file, size: file.bytes.length }, (target) => writeFileAtomic(target, file.bytes), values);
}

/** The same for a checked file on disk (an upload): it is moved into place, never read into memory. */
export async function storeSourceFile(
  db: Db,
  dataDir: string,
  file: CheckedPath & { format: ActivityFormat },
  values: SourceValues,
): Promise<{ source: Source; created: boolean }> {
  return store(db, dataDir, file, (target) => moveInto(file.path, target), values);
}

type SourceValues = {
  userId: string;
  origin: SourceOrigin;
  sport: string | null;
  tags: string[];
  backfillId?: string;
  recordedAt?: Date | null;
  /** A platform export's record of the activity (workers/backfill-plan.ts). */
  metadata?: SourceMetadata | null;
};

async function store(
  db: Db,
  dataDir: string,
  file: { filename: string; sha256: string; size: number; format: ActivityFormat },
  place: (target: string) => Promise<void>,
  values: SourceValues,
): Promise<{ source: Source; created: boolean }> {
  const id = randomUUID();
  const target = originalPath(dataDir, values.userId, id, file.format);
  await place(target);
  const result = await insertSource(db, {
    id,
    user_id: values.userId,
    type: file.format,
    origin: values.origin,
    filename: file.filename.slice(0, 255),
    content_sha256: file.sha256,
    size_bytes: file.size,
    sport: values.sport,
    tags: values.tags,
    backfill_id: values.backfillId ?? null,
    recorded_at: values.recordedAt ?? null,
    metadata: values.metadata ? JSON.stringify(values.metadata) : null,
  }).catch(async (err) => {
    await rm(target, { force: true });
    throw err;
  });
  if (!result.created) await rm(target, { force: true });
  return result;
}
