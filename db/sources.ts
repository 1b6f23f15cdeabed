import { recordEvents } from './events.ts';
import { actorColumn } from '../lib/actor.ts';
import type { Db, Source, SourceOrigin, SourceType } from './database.ts';

export interface NewSource {
  id?: string;
  user_id: string;
  type: SourceType;
  origin: SourceOrigin;
  filename: string;
  content_sha256: string;
  size_bytes: number;
  sport: string | null;
  tags?: string[];
  backfill_id?: string | null;
  recorded_at?: Date | null;
  /** JSON of SourceMetadata (a platform export's record of the activity). */
  metadata?: string | null;
}

/**
 * Record a file, or find the user's earlier source with the same content. `created` tells which:
 * only a new source needs its file stored and an ingest job.
 */
export async function insertSource(db: Db, values: NewSource): Promise<{ source: Source; created: boolean }> {
  const inserted = await db
    .insertInto('sources')
    .values({ ...values, tags: values.tags ?? [], ...actorColumn() })
    .onConflict((oc) => oc.columns(['user_id', 'content_sha256']).doNothing())
    .returningAll()
    .executeTakeFirst();
  if (inserted) return { source: inserted, created: true };
  const existing = await db
    .selectFrom('sources')
    .selectAll()
    .where('user_id', '=', values.user_id)
    .where('content_sha256', '=', values.content_sha256)
    .executeTakeFirstOrThrow();
  return { source: existing, created: false };
}

export function findSource(db: Db, id: string): Promise<Source | undefined> {
  return db.selectFrom('sources').selectAll().where('id', '=', id).executeTakeFirst();
}

export function findUserSource(db: Db, userId: string, id: string): Promise<Source | undefined> {
  return db.selectFrom('sources').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
}

export function listSources(db: Db, userId: string, page: { limit: number; offset: number }): Promise<Source[]> {
  return db
    .selectFrom('sources')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
}

/** The activity ids of each source, oldest session first. */
export async function activityIdsOf(db: Db, sourceIds: string[]): Promise<Map<string, string[]>> {
  const ids = new Map<string, string[]>(sourceIds.map((id) => [id, []]));
  if (!sourceIds.length) return ids;
  const rows = await db
    .selectFrom('activities')
    .select(['id', 'source_id'])
    .where('source_id', 'in', sourceIds)
    .orderBy('source_id')
    .orderBy('session_index')
    .execute();
  for (const row of rows) ids.get(row.source_id)?.push(row.id);
  return ids;
}

/** Mark a source failed, unless it already finished (a retried job after success changes nothing). */
export async function markSourceFailed(db: Db, id: string, code: string, message: string, now: Date): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const failed = await trx
      .updateTable('sources')
      .set({ status: 'failed', error_code: code, error_message: message.slice(0, 2000), processed_at: now })
      .where('id', '=', id)
      .where('status', '=', 'processing')
      .returning('user_id')
      .executeTakeFirst();
    if (failed) await recordEvents(trx, [{ user_id: failed.user_id, type: 'source_failed', resource_id: id }], now);
    return failed !== undefined;
  });
}

/** Sources still `processing` that were created before `before`, oldest first (at most 1000 per call). */
export function staleProcessingSources(db: Db, before: Date): Promise<Pick<Source, 'id' | 'backfill_id'>[]> {
  return db
    .selectFrom('sources')
    .select(['id', 'backfill_id'])
    .where('status', '=', 'processing')
    .where('created_at', '<', before)
    .orderBy('created_at')
    .limit(1000)
    .execute();
}
