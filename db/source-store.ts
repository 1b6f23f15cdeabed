import { randomUUID } from 'node:crypto';
import type { Db, Source, SourceMetadata, SourceOrigin } from './database.ts';
import { insertSource } from './sources.ts';
import type { CheckedFile } from '../engine/ingest/check-file.ts';
import type { CheckedPath } from '../engine/ingest/check-file-on-disk.ts';
import type { ActivityFormat } from '../engine/ingest/sniff.ts';
import { sourceKey, type ObjectStore } from '../lib/object-store.ts';

/**
 * Store a checked file as a source of `userId`, or find the source the same content already is.
 * The original is written to the object store under the new source's id before its row exists, so
 * a row never points at a missing object; a duplicate's object is removed again. A store that cannot
 * be reached fails the call (StoreUnavailable) with nothing stored.
 */
export async function storeSource(
  db: Db,
  objects: ObjectStore,
  file: CheckedFile & { format: ActivityFormat },
  values: SourceValues,
): Promise<{ source: Source; created: boolean }> {
  return store(db, objects, { ...file, size: file.bytes.length }, (key) => objects.put(key, file.bytes), values);
}

/** The same for a checked file on disk (an upload): it is moved (or streamed) into the store, never read whole into memory. */
export async function storeSourceFile(
  db: Db,
  objects: ObjectStore,
  file: CheckedPath & { format: ActivityFormat },
  values: SourceValues,
): Promise<{ source: Source; created: boolean }> {
  return store(db, objects, file, (key) => objects.putFile(key, file.path, { move: true }), values);
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
  objects: ObjectStore,
  file: { filename: string; sha256: string; size: number; format: ActivityFormat },
  place: (key: string) => Promise<void>,
  values: SourceValues,
): Promise<{ source: Source; created: boolean }> {
  const id = randomUUID();
  const key = sourceKey(values.userId, id, file.format);
  await place(key);
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
    await objects.remove([key]).catch(() => undefined);
    throw err;
  });
  if (!result.created) await objects.remove([key]);
  return result;
}
