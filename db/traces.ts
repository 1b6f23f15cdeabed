import { sql, type RawBuilder } from 'kysely';
import type { ActivityRow, Db, StoredLap, TraceRow } from './database.ts';
import { ACTIVITY_SUMMARY_COLUMNS, type ActivitySummaryRow } from './activities.ts';
import { userDataFilter, type ActivityFilter } from './filters.ts';
import { recordEvents } from './events.ts';
import { bumpReadVersion } from './read-version.ts';

/** What a client writes (TraceCreateOrUpdate): every field; a full replace sets omitted ones to null. */
export type TraceFields = Omit<TraceRow, 'id' | 'user_id' | 'created_at' | 'updated_at'>;

export function createTrace(db: Db, userId: string, fields: TraceFields, now: Date): Promise<TraceRow> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .insertInto('traces')
      .values({ ...fields, user_id: userId, created_at: now, updated_at: now })
      .returningAll()
      .executeTakeFirstOrThrow();
    await bumpReadVersion(trx, userId);
    await recordEvents(trx, [{ user_id: userId, type: 'trace_created', resource_id: row.id }], now);
    return row;
  });
}

/** Replace every field of one of the user's traces; undefined when there is none. */
export function replaceTrace(db: Db, userId: string, id: string, fields: TraceFields, now: Date): Promise<TraceRow | undefined> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable('traces')
      .set({ ...fields, updated_at: now })
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .returningAll()
      .executeTakeFirst();
    if (!row) return undefined;
    await bumpReadVersion(trx, userId);
    await recordEvents(trx, [{ user_id: userId, type: 'trace_updated', resource_id: id }], now);
    return row;
  });
}

export function deleteTrace(db: Db, userId: string, id: string, now: Date): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const gone = await trx.deleteFrom('traces').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
    if (gone.numDeletedRows === 0n) return false;
    await bumpReadVersion(trx, userId);
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
 * The lap of an activity's `laps` (jsonb) containing an instant: the first with start ≤ t < end,
 * else the last lap when t is its end (the activity's end). Laps hold epoch-millisecond bounds.
 */
function lapContaining(laps: RawBuilder<unknown>, time: RawBuilder<unknown>) {
  const at = sql`jsonb_build_object('t', extract(epoch FROM ${time}) * 1000)`;
  return sql<StoredLap | null>`coalesce(
    jsonb_path_query_first(${laps}, '$[*] ? (@.start <= $t && @.end > $t)', ${at}),
    jsonb_path_query_first(${laps}, '$[last] ? (@.end == $t)', ${at}))`;
}

/** A trace's containing activity (as lists show it) and the lap of that activity it lies in. */
export interface ContainingActivity {
  activity: ActivitySummaryRow;
  lap: StoredLap | null;
}

const summaryColumns = (alias: string) => sql.join(ACTIVITY_SUMMARY_COLUMNS.map((c) => sql.ref(`${alias}.${c}`)));

/**
 * For each trace, the user's activity whose span [start, end] contains its time, and its lap; when
 * activities overlap (two devices recording one session), the one that started last. A containing
 * activity starts no earlier than the trace's time minus the user's longest activity, which bounds
 * each lookup to an index range.
 */
export async function activitiesContaining(
  db: Db,
  userId: string,
  traces: Pick<TraceRow, 'id' | 'time'>[],
): Promise<Map<string, ContainingActivity>> {
  const found = new Map<string, ContainingActivity>();
  if (!traces.length) return found;
  const { rows } = await activitiesContainingQuery(userId, traces).execute(db);
  for (const { trace_id, lap, ...activity } of rows) found.set(trace_id, { activity, lap });
  return found;
}

/**
 * activitiesContaining's query (exported for the test of its plan). The longest activity is one step
 * down the (user_id, end_time − start_time) index, not a read of all of the user's activities.
 */
export function activitiesContainingQuery(userId: string, traces: Pick<TraceRow, 'id' | 'time'>[]) {
  return sql<ActivitySummaryRow & { trace_id: string; lap: StoredLap | null }>`
    WITH longest AS (SELECT coalesce(max(end_time - start_time), interval '0') AS span FROM activities WHERE user_id = ${userId})
    SELECT t.trace_id, ${summaryColumns('a')}, ${lapContaining(sql`a.laps`, sql`t.time`)} AS lap
    FROM unnest(${traces.map((t) => t.id)}::uuid[], ${traces.map((t) => t.time.toISOString())}::timestamptz[]) AS t(trace_id, time)
    CROSS JOIN longest
    CROSS JOIN LATERAL (
      SELECT * FROM activities
      WHERE user_id = ${userId} AND start_time <= t.time AND start_time >= t.time - longest.span AND end_time >= t.time
      ORDER BY start_time DESC, id DESC
      LIMIT 1
    ) a`;
}

/** A trace within an activity: its row, the reading application's metadata on it, and its lap of that activity. */
export type TraceInActivity = TraceRow & { app_metadata: Record<string, unknown> | null; lap: StoredLap | null };

/**
 * The user's traces within each activity's span [start, end], oldest first, keyed by activity id,
 * each with the reading application's metadata (none for first-party readers) and its lap: one query.
 *
 * Its cost follows the page, not the user's history: each activity's traces are one range of the
 * (user_id, time) index (the LATERAL subquery, fenced by OFFSET 0 so that the planner keeps it a
 * per-activity lookup), and the metadata and the lap are looked up by key for each trace found. Joined
 * instead, the planner read the activities table and all of the application's trace metadata, every
 * user's, in full for every page: on the bench's history (1,000 activities, 500 traces) 1.15 ms to
 * execute against 0.58 ms like this, and with 30 more athletes of the same application (15,500
 * metadata rows) 4.4 ms against 0.83 ms, growing with the application's users.
 */
export async function tracesWithin(
  db: Db,
  userId: string,
  applicationId: string | undefined,
  activities: Pick<ActivityRow, 'id' | 'start_time' | 'end_time'>[],
): Promise<Map<string, TraceInActivity[]>> {
  const found = new Map<string, TraceInActivity[]>(activities.map((a) => [a.id, []]));
  if (!activities.length) return found;
  const { rows } = await tracesWithinQuery(userId, applicationId, activities).execute(db);
  for (const { activity_id, ...trace } of rows) found.get(activity_id)!.push(trace);
  return found;
}

/** tracesWithin's query (exported for the test of its plan). */
export function tracesWithinQuery(
  userId: string,
  applicationId: string | undefined,
  activities: Pick<ActivityRow, 'id' | 'start_time' | 'end_time'>[],
) {
  return sql<TraceInActivity & { activity_id: string }>`
    SELECT a.activity_id, t.*,
      (SELECT m.data FROM trace_app_metadata m WHERE m.trace_id = t.id AND m.application_id = ${applicationId ?? null}::text) AS app_metadata,
      (SELECT ${lapContaining(sql`x.laps`, sql`t.time`)} FROM activities x WHERE x.id = a.activity_id) AS lap
    FROM unnest(${activities.map((a) => a.id)}::uuid[], ${activities.map((a) => a.start_time.toISOString())}::timestamptz[],
                ${activities.map((a) => a.end_time.toISOString())}::timestamptz[]) AS a(activity_id, start_time, end_time)
    CROSS JOIN LATERAL (SELECT * FROM traces WHERE user_id = ${userId} AND time >= a.start_time AND time <= a.end_time OFFSET 0) t
    ORDER BY t.time, t.id`;
}
