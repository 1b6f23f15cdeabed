import { sql } from 'kysely';
import type { ActivityRow, Db, TraceRow } from './database.ts';
import { userDataFilter, type ActivityFilter } from './filters.ts';
import { recordEvents } from './events.ts';

/** What a client writes (TraceCreateOrUpdate): every field; a full replace sets omitted ones to null. */
export type TraceFields = Omit<TraceRow, 'id' | 'user_id' | 'created_at' | 'updated_at'>;

export function createTrace(db: Db, userId: string, fields: TraceFields, now: Date): Promise<TraceRow> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .insertInto('traces')
      .values({ ...fields, user_id: userId, created_at: now, updated_at: now })
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordEvents(trx, [{ user_id: userId, type: 'trace_created', resource_id: row.id }], now);
    return row;
  });
}

/** Replace every field of one of the user's traces; undefined when there is none. */
export function replaceTrace(db: Db, userId: string, id: string, fields: TraceFields, now: Date): Promise<TraceRow | undefined> {
  return db.transaction().execute(async (trx) => {
    const row = await trx.updateTable('traces').set({ ...fields, updated_at: now }).where('id', '=', id).where('user_id', '=', userId).returningAll().executeTakeFirst();
    if (row) await recordEvents(trx, [{ user_id: userId, type: 'trace_updated', resource_id: id }], now);
    return row;
  });
}

export function deleteTrace(db: Db, userId: string, id: string, now: Date): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const gone = await trx.deleteFrom('traces').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
    if (gone.numDeletedRows === 0n) return false;
    await recordEvents(trx, [{ user_id: userId, type: 'trace_deleted', resource_id: id }], now);
    return true;
  });
}

export function findTrace(db: Db, userId: string, id: string): Promise<TraceRow | undefined> {
  return db.selectFrom('traces').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
}

/** A page of the user's traces, newest first. `from`/`until`/days filter on the trace's own time. */
export function listTraces(db: Db, userId: string, f: ActivityFilter, page: { limit: number; offset: number }): Promise<TraceRow[]> {
  return db
    .selectFrom('traces')
    .selectAll()
    .where(userDataFilter(userId, f, 'time'))
    .orderBy('time', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
}

/**
 * For each trace, the user's activity whose span [start, end] contains its time; when activities
 * overlap (two devices recording one session), the one that started last. A containing activity
 * starts no earlier than the trace's time minus the user's longest activity, which bounds each
 * lookup to an index range.
 */
export async function activitiesContaining(db: Db, userId: string, traces: Pick<TraceRow, 'id' | 'time'>[]): Promise<Map<string, ActivityRow>> {
  const found = new Map<string, ActivityRow>();
  if (!traces.length) return found;
  const { rows } = await sql<ActivityRow & { trace_id: string }>`
    WITH longest AS (SELECT coalesce(max(end_time - start_time), interval '0') AS span FROM activities WHERE user_id = ${userId})
    SELECT t.trace_id, a.*
    FROM unnest(${traces.map((t) => t.id)}::uuid[], ${traces.map((t) => t.time.toISOString())}::timestamptz[]) AS t(trace_id, time)
    CROSS JOIN longest
    CROSS JOIN LATERAL (
      SELECT * FROM activities
      WHERE user_id = ${userId} AND start_time <= t.time AND start_time >= t.time - longest.span AND end_time >= t.time
      ORDER BY start_time DESC, id DESC
      LIMIT 1
    ) a`.execute(db);
  for (const { trace_id, ...activity } of rows) found.set(trace_id, activity as ActivityRow);
  return found;
}

/** The user's traces within each activity's span [start, end], oldest first, keyed by activity id. */
export async function tracesWithin(db: Db, userId: string, activities: Pick<ActivityRow, 'id' | 'start_time' | 'end_time'>[]): Promise<Map<string, TraceRow[]>> {
  const found = new Map<string, TraceRow[]>(activities.map((a) => [a.id, []]));
  if (!activities.length) return found;
  const { rows } = await sql<TraceRow & { activity_id: string }>`
    SELECT a.activity_id, t.*
    FROM unnest(${activities.map((a) => a.id)}::uuid[], ${activities.map((a) => a.start_time.toISOString())}::timestamptz[],
                ${activities.map((a) => a.end_time.toISOString())}::timestamptz[]) AS a(activity_id, start_time, end_time)
    JOIN traces t ON t.user_id = ${userId} AND t.time >= a.start_time AND t.time <= a.end_time
    ORDER BY t.time, t.id`.execute(db);
  for (const { activity_id, ...trace } of rows) found.get(activity_id)!.push(trace as TraceRow);
  return found;
}
