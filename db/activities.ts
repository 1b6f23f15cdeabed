import { createHash } from 'node:crypto';
import { sql, type SqlBool, type Transaction } from 'kysely';
import type { ActivityRow, Database, Db, StoredLap } from './database.ts';
import type { MetricCurves } from '../engine/curves/activity-curves.ts';
import type { DeviceChecks } from '../engine/ingest/recording.ts';
import { bumpDataVersion, curveRows, storeCurves, storedCurvesEqual } from './curves.ts';
import { recordEvents } from './events.ts';
import { bumpDataAndReadVersion, bumpReadVersion } from './read-version.ts';
import { activityFilter, type ActivityFilter } from './filters.ts';

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
  /** The name and description from the source's metadata (a platform export); null or absent otherwise. */
  name?: string | null;
  description?: string | null;
  start_time: Date;
  end_time: Date;
  utc_offset_seconds: number;
  metrics: string[];
  summary: Record<string, unknown> | null;
  laps: StoredLap[] | null;
  distance: number | null;
  devices: string[];
  samples: number;
  /** Per channel, the samples dropped as implausible (engine/ingest/plausible.ts); `{}` when none. */
  implausible_samples: Record<string, number>;
  /** Optional for rows made outside ingestion (benchmarks, tests): version 1 and nulls, as for rows stored before versions. */
  ingest_version?: number;
  timer_seconds?: number | null;
  moving_seconds?: number | null;
  device_summary?: Record<string, number> | null;
  dropped_records?: Record<string, number> | null;
  device_checks?: DeviceChecks | null;
  /** The activity's curves (engine/curves/activity-curves.ts), stored with it. */
  curves: MetricCurves[];
}

/**
 * All activities of one file and the source's `processed` mark, in one transaction. Returns false
 * when the source was no longer `processing` (another attempt already finished it): nothing is written.
 *
 * `beforeCommit` is awaited last, before the user's versions and events are written and the
 * transaction commits: the ingest job writes the sample files meanwhile, so the rows become
 * visible only once their files are in place, and the user's row is locked only for the last two
 * statements (two jobs of one user do not wait on each other's files). If it rejects, nothing is
 * written. Seven round trips: the claim of the source (its row locked, so a concurrent attempt
 * waits, then finds it processed), the activities, their curves, then the versions, the events
 * with their NOTIFY and the commit. `inTransaction` writes what the new rows come with (their training
 * load: db/training-load.ts insertActivityLoads) after the curves, so that a `processed` source's
 * activities are whole.
 */
export async function storeActivities(
  db: Db,
  source: { id: string; user_id: string; tags: string[] },
  activities: NewActivity[],
  now: Date,
  opts: { beforeCommit?: () => Promise<unknown>; inTransaction?: (trx: Transaction<Database>) => Promise<unknown> } = {},
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const claimed = await trx
      .updateTable('sources')
      .set({ status: 'processed', processed_at: now, error_code: null, error_message: null })
      .where('id', '=', source.id)
      .where('status', '=', 'processing')
      .returning('id')
      .executeTakeFirst();
    if (!claimed) return false;
    let created: string[] = [];
    if (activities.length) {
      const inserted = await trx
        .insertInto('activities')
        .values(
          activities.map(({ curves: _curves, ...a }) => ({
            ...a,
            user_id: source.user_id,
            source_id: source.id,
            tags: source.tags,
            ...jsonColumns(a),
          })),
        )
        .onConflict((oc) => oc.columns(['source_id', 'session_index']).doNothing())
        .returning('id')
        .execute();
      created = inserted.map((r) => r.id);
      // Curves replace those of an activity that was already there; a new one has none.
      const existing = activities.filter((a) => !created.includes(a.id)).map((a) => a.id);
      if (existing.length) await trx.deleteFrom('activity_curves').where('activity_id', 'in', existing).execute();
      const curves = activities.flatMap((a) => curveRows(a.id, a.curves, now));
      if (curves.length) await trx.insertInto('activity_curves').values(curves).execute();
    }
    // What else the new rows come with (their training load), in the same transaction.
    if (activities.length) await opts.inTransaction?.(trx);
    await opts.beforeCommit?.();
    if (activities.length) await bumpDataAndReadVersion(trx, source.user_id);
    await recordEvents(
      trx,
      [
        ...created.map((id) => ({ user_id: source.user_id, type: 'activity_created' as const, resource_id: id })),
        { user_id: source.user_id, type: 'source_processed', resource_id: source.id },
      ],
      now,
    );
    return true;
  });
}

/** An activity's jsonb columns as PostgreSQL takes them (JSON text; null for an absent value). */
export function jsonColumns(
  a: Partial<Record<'summary' | 'laps' | 'implausible_samples' | 'device_summary' | 'dropped_records' | 'device_checks', unknown>>,
) {
  const json = (v: unknown) => (v ? JSON.stringify(v) : null);
  return {
    summary: json(a.summary),
    laps: json(a.laps),
    implausible_samples: json(a.implausible_samples),
    device_summary: json(a.device_summary),
    dropped_records: json(a.dropped_records),
    device_checks: json(a.device_checks),
  };
}

/** The columns an ActivitySummary shows (laps and the rest are read only for one activity). */
export const ACTIVITY_SUMMARY_COLUMNS = [
  'id',
  'sport',
  'start_time',
  'end_time',
  'utc_offset_seconds',
  'metrics',
  'source_id',
  'tags',
  'summary',
  'name',
  'description',
] as const;
export type ActivitySummaryRow = Pick<ActivityRow, (typeof ACTIVITY_SUMMARY_COLUMNS)[number]>;

/**
 * A page of activities as lists show them, newest first, each with the reading application's
 * metadata (null for first-party readers): one query.
 */
export function listActivitySummaries(
  db: Db,
  userId: string,
  applicationId: string | undefined,
  f: ActivityFilter,
  page: { limit: number; offset: number },
): Promise<(ActivitySummaryRow & { app_metadata: Record<string, unknown> | null })[]> {
  return db
    .selectFrom('activities')
    .leftJoin('activity_app_metadata as m', (join) =>
      join
        .onRef('m.activity_id', '=', 'activities.id')
        .on(applicationId ? sql<SqlBool>`m.application_id = ${applicationId}` : sql<SqlBool>`false`),
    )
    .select(ACTIVITY_SUMMARY_COLUMNS.map((c) => `activities.${c}` as const))
    .select('m.data as app_metadata')
    .where(activityFilter(userId, f))
    .orderBy('activities.start_time', 'desc')
    .orderBy('activities.id', 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
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
export async function deleteActivity(db: Db, userId: string, id: string, now: Date) {
  return db.transaction().execute(async (trx) => {
    const activity = await trx
      .deleteFrom('activities')
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .returningAll()
      .executeTakeFirst();
    if (!activity) return undefined;
    await bumpDataVersion(trx, userId);
    await bumpReadVersion(trx, userId);
    await recordEvents(trx, [{ user_id: userId, type: 'activity_deleted', resource_id: id }], now);
    const source = await trx
      .deleteFrom('sources')
      .where('id', '=', activity.source_id)
      .where(({ not, exists, selectFrom }) =>
        not(exists(selectFrom('activities').select(sql`1`.as('one')).whereRef('activities.source_id', '=', 'sources.id'))),
      )
      .returningAll()
      .executeTakeFirst();
    return { activity, source };
  });
}

/**
 * Replace an existing activity's curves (the recompute job); false when the activity is gone.
 * Curves that come out different are a change clients can see (activity_updated); identical ones are not.
 */
export async function replaceActivityCurves(db: Db, activityId: string, curves: MetricCurves[], now: Date): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const activity = await trx
      .selectFrom('activities')
      .select(['id', 'user_id'])
      .where('id', '=', activityId)
      .forUpdate()
      .executeTakeFirst();
    if (!activity) return false;
    const unchanged = await storedCurvesEqual(trx, activityId, curves);
    await storeCurves(trx, activityId, curves, now);
    await bumpDataVersion(trx, activity.user_id);
    if (!unchanged) await recordEvents(trx, [{ user_id: activity.user_id, type: 'activity_updated', resource_id: activityId }], now);
    return true;
  });
}

/** Every matching activity (optionally only those recording `metric`), oldest first: the input of longitudinal scans. */
export function activitiesForScan(db: Db, userId: string, f: ActivityFilter, metric?: string) {
  let q = db
    .selectFrom('activities')
    .select(['id', 'user_id', 'sport', 'start_time', 'utc_offset_seconds', 'samples', 'created_at', 'updated_at'])
    .where(activityFilter(userId, f))
    .orderBy('start_time', 'asc')
    .orderBy('id', 'asc');
  if (metric) q = q.where(sql<SqlBool>`metrics @> ARRAY[${metric}]::text[]`);
  return q.execute();
}

/**
 * An activity's stamp: its updated_at in whole epoch milliseconds (truncated, as a JS Date of it
 * reads), computed by PostgreSQL: what a channel column's entries are checked against.
 */
const STAMP = sql<number>`floor(extract(epoch from updated_at) * 1000)::float8`;

/** The activities' stamps (epoch ms), by id. */
export async function activityStamps(db: Db, ids: string[]): Promise<Map<string, number>> {
  if (!ids.length) return new Map();
  const rows = await db
    .selectFrom('activities')
    .select(['id', STAMP.as('stamp')])
    .where('id', 'in', ids)
    .execute();
  return new Map(rows.map((r) => [r.id, r.stamp]));
}

/**
 * What a curve over many activities needs of each (activitiesForScan's order and filter): id, sport,
 * sample count, start and stamp as epoch ms (numbers from PostgreSQL: no timestamp parsed per row).
 */
export function activitiesForCurves(db: Db, userId: string, f: ActivityFilter, metric: string) {
  return db
    .selectFrom('activities')
    .select(['id', 'sport', 'samples', sql<number>`floor(extract(epoch from start_time) * 1000)::float8`.as('start_ms'), STAMP.as('stamp')])
    .where(activityFilter(userId, f))
    .where(sql<SqlBool>`metrics @> ARRAY[${metric}]::text[]`)
    .orderBy('start_time', 'asc')
    .orderBy('id', 'asc')
    .execute();
}
export type CurveActivityRow = Awaited<ReturnType<typeof activitiesForCurves>>[number];

/**
 * The user's data version (users.data_version) and the activities of activitiesForScan, read in one
 * snapshot: the activities are exactly those of that version.
 */
export function scanAtVersion(db: Db, userId: string, f: ActivityFilter, metric: string) {
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (trx) => {
      const user = await trx.selectFrom('users').select('data_version').where('id', '=', userId).executeTakeFirst();
      return { version: user?.data_version ?? '0', activities: await activitiesForScan(trx, userId, f, metric) };
    });
}
