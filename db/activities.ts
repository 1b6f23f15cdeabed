import { createHash } from 'node:crypto';
import { sql, type Expression, type SqlBool } from 'kysely';
import type { ActivityRow, Db } from './database.ts';
import { parseSport } from '../lib/sports.ts';
import type { MetricCurves } from '../engine/curves.ts';
import { bumpDataVersion, storeCurves } from './curves.ts';

/**
 * An activity's id is derived from its source and session: a retried ingest job computes the same
 * ids, so it writes the same rows (ON CONFLICT DO NOTHING) and overwrites the same sample files.
 */
export function activityId(sourceId: string, sessionIndex: number): string {
  const h = createHash('sha256').update(`activity:${sourceId}:${sessionIndex}`).digest();
  h[6] = (h[6]! & 0x0f) | 0x80; // version 8: custom
  h[8] = (h[8]! & 0x3f) | 0x80; // RFC 9562 variant
  const hex = h.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export interface NewActivity {
  id: string;
  session_index: number;
  sport: string;
  start_time: Date;
  end_time: Date;
  utc_offset_seconds: number;
  metrics: string[];
  summary: Record<string, unknown> | null;
  laps: Record<string, unknown>[] | null;
  distance: number | null;
  devices: string[];
  samples: number;
  /** The activity's curves (engine/curves.ts), stored with it. */
  curves: MetricCurves[];
}

/**
 * All activities of one file and the source's `processed` mark, in one transaction. Returns false
 * when the source was no longer `processing` (another attempt already finished it): nothing is written.
 */
export async function storeActivities(db: Db, source: { id: string; user_id: string; tags: string[] }, activities: NewActivity[], now: Date): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const locked = await trx.selectFrom('sources').select('status').where('id', '=', source.id).forUpdate().executeTakeFirst();
    if (locked?.status !== 'processing') return false;
    if (activities.length) {
      await trx
        .insertInto('activities')
        .values(
          activities.map(({ curves: _curves, ...a }) => ({
            ...a,
            user_id: source.user_id,
            source_id: source.id,
            tags: source.tags,
            summary: a.summary ? JSON.stringify(a.summary) : null,
            laps: a.laps ? JSON.stringify(a.laps) : null,
          })),
        )
        .onConflict((oc) => oc.columns(['source_id', 'session_index']).doNothing())
        .execute();
      for (const a of activities) await storeCurves(trx, a.id, a.curves, now);
      await bumpDataVersion(trx, source.user_id);
    }
    await trx.updateTable('sources').set({ status: 'processed', processed_at: now, error_code: null, error_message: null }).where('id', '=', source.id).execute();
    return true;
  });
}

export interface ActivityFilter {
  /** Instants: activities starting at or after `from`, before `until`. */
  from?: Date;
  until?: Date;
  /** Local calendar days (YYYY-MM-DD), inclusive, compared with the activity's local start. */
  fromDay?: string;
  toDay?: string;
  sports?: string[];
  tags?: string[];
}

/** The furthest a local clock is from UTC (UTC+14, UTC−12): bounds a local-day filter on the indexed instant. */
const MAX_OFFSET_HOURS = 14;

/** The WHERE clause of an activity filter on `activities` (also usable when joined with tables whose columns do not clash). */
export function activityFilter(userId: string, f: ActivityFilter) {
  return (eb: any): Expression<SqlBool> => {
    const clauses: Expression<SqlBool>[] = [eb('user_id', '=', userId)];
    const localStart = sql`(start_time AT TIME ZONE 'UTC' + make_interval(secs => utc_offset_seconds))`;
    if (f.from) clauses.push(eb('start_time', '>=', f.from));
    if (f.until) clauses.push(eb('start_time', '<', f.until));
    if (f.fromDay) {
      clauses.push(sql<SqlBool>`start_time >= ${f.fromDay}::date - make_interval(hours => ${MAX_OFFSET_HOURS})`);
      clauses.push(sql<SqlBool>`${localStart} >= ${f.fromDay}::date`);
    }
    if (f.toDay) {
      clauses.push(sql<SqlBool>`start_time < ${f.toDay}::date + make_interval(days => 1, hours => ${MAX_OFFSET_HOURS})`);
      clauses.push(sql<SqlBool>`${localStart} < ${f.toDay}::date + 1`);
    }
    if (f.sports?.length) {
      // A filter sport matches itself and its sub-sports: same or descendant code, and at least its modifiers.
      const alternatives = f.sports.map((s) => {
        const sport = parseSport(s)!;
        const code = sport.code;
        return sql<SqlBool>`((split_part(sport, '+', 1) = ${code} OR starts_with(split_part(sport, '+', 1), ${code + '.'}))
          AND (string_to_array(sport, '+'))[2:] @> ${sport.modifiers}::text[])`;
      });
      clauses.push(eb.or(alternatives));
    }
    if (f.tags?.length) clauses.push(sql<SqlBool>`tags && ${f.tags}::text[]`);
    return eb.and(clauses);
  };
}

export function listActivities(db: Db, userId: string, f: ActivityFilter, page: { limit: number; offset: number }): Promise<ActivityRow[]> {
  return db
    .selectFrom('activities')
    .selectAll()
    .where(activityFilter(userId, f))
    .orderBy('start_time', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
}

export function findActivity(db: Db, userId: string, id: string): Promise<ActivityRow | undefined> {
  return db.selectFrom('activities').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
}

/** Delete an activity; its source goes too once it has no activity left. Returns what was removed. */
export async function deleteActivity(db: Db, userId: string, id: string) {
  return db.transaction().execute(async (trx) => {
    const activity = await trx.deleteFrom('activities').where('id', '=', id).where('user_id', '=', userId).returningAll().executeTakeFirst();
    if (!activity) return undefined;
    await bumpDataVersion(trx, userId);
    const source = await trx
      .deleteFrom('sources')
      .where('id', '=', activity.source_id)
      .where(({ not, exists, selectFrom }) => not(exists(selectFrom('activities').select(sql`1`.as('one')).whereRef('activities.source_id', '=', 'sources.id'))))
      .returningAll()
      .executeTakeFirst();
    return { activity, source };
  });
}

/** One application's metadata for each of the given activities. */
export async function appMetadataOf(db: Db, applicationId: string | undefined, activityIds: string[]): Promise<Map<string, Record<string, unknown>>> {
  const found = new Map<string, Record<string, unknown>>();
  if (!applicationId || !activityIds.length) return found;
  const rows = await db
    .selectFrom('activity_app_metadata')
    .select(['activity_id', 'data'])
    .where('application_id', '=', applicationId)
    .where('activity_id', 'in', activityIds)
    .execute();
  for (const row of rows) found.set(row.activity_id, row.data);
  return found;
}

export async function putAppMetadata(db: Db, activityId: string, applicationId: string, data: Record<string, unknown>, now: Date): Promise<void> {
  const json = JSON.stringify(data);
  await db
    .insertInto('activity_app_metadata')
    .values({ activity_id: activityId, application_id: applicationId, data: json, updated_at: now })
    .onConflict((oc) => oc.columns(['activity_id', 'application_id']).doUpdateSet({ data: json, updated_at: now }))
    .execute();
}

export async function deleteAppMetadata(db: Db, activityId: string, applicationId: string): Promise<void> {
  await db.deleteFrom('activity_app_metadata').where('activity_id', '=', activityId).where('application_id', '=', applicationId).execute();
}

/** Replace an existing activity's curves (the recompute job); false when the activity is gone. */
export async function replaceActivityCurves(db: Db, activityId: string, curves: MetricCurves[], now: Date): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const activity = await trx.selectFrom('activities').select(['id', 'user_id']).where('id', '=', activityId).forUpdate().executeTakeFirst();
    if (!activity) return false;
    await storeCurves(trx, activityId, curves, now);
    await bumpDataVersion(trx, activity.user_id);
    return true;
  });
}

/** Every matching activity (optionally only those recording `metric`), oldest first: the input of longitudinal scans. */
export function activitiesForScan(db: Db, userId: string, f: ActivityFilter, metric?: string) {
  let q = db
    .selectFrom('activities')
    .select(['id', 'user_id', 'sport', 'start_time', 'utc_offset_seconds', 'samples'])
    .where(activityFilter(userId, f))
    .orderBy('start_time', 'asc')
    .orderBy('id', 'asc');
  if (metric) q = q.where(sql<SqlBool>`metrics @> ARRAY[${metric}]::text[]`);
  return q.execute();
}
