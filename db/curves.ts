import { sql, type Transaction } from 'kysely';
import type { Database, Db } from './database.ts';
import { activityFilter, type ActivityFilter } from './filters.ts';
import { CURVES_VERSION, type MetricCurves } from '../engine/curves/activity-curves.ts';
import { CURRENT_ENCODING, decodeInt32s, encodeInt32s, packEncoded, type EncodedArrays } from '../engine/curves/curve-codec.ts';

/**
 * Storage of activity curves (engine/curves/activity-curves.ts) in `activity_curves`, one row per
 * metric: the value-indexed view (`level_duration`, `level_start`, power and speed) and the
 * accumulated work duration (`awd`), Int32 arrays as bytes in the row's `encoding`
 * (engine/curves/curve-codec.ts): zigzag-delta varint runs for every row written now, 4–16 % of
 * the raw size; little-endian Int32 for rows written before 2026-11-28, read as they are until
 * `npm run cli -- curves --all` rewrites them. The mean-max at every duration is not stored (the
 * per-activity mean-max route computes it from the sample file).
 *
 * Decoding happens where the curves are used: in the engine pool for the longitudinal merges
 * (curvesOf and packStored hand over the stored bytes as they are), in-process only for one
 * activity's small AWD (activityAwd).
 */

const stored = (a: Int32Array): Buffer => {
  const bytes = encodeInt32s(a, CURRENT_ENCODING);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
};

/** The `activity_curves` rows of one activity's curves. */
export function curveRows(activityId: string, curves: MetricCurves[], now: Date) {
  return curves.map((c) => ({
    activity_id: activityId,
    metric: c.metric,
    version: CURVES_VERSION,
    level_duration: c.levelDuration ? stored(c.levelDuration) : null,
    level_start: c.levelStart ? stored(c.levelStart) : null,
    awd: stored(c.awd),
    encoding: CURRENT_ENCODING,
    computed_at: now,
  }));
}

/** Replace one activity's curves (all metrics), inside the caller's transaction. */
export async function storeCurves(trx: Transaction<Database> | Db, activityId: string, curves: MetricCurves[], now: Date): Promise<void> {
  await trx.deleteFrom('activity_curves').where('activity_id', '=', activityId).execute();
  if (!curves.length) return;
  await trx
    .insertInto('activity_curves')
    .values(curveRows(activityId, curves, now))
    .execute();
}

/**
 * Whether the stored curves of an activity are exactly `curves` (same metrics, same values, current
 * version), whichever encoding they are stored in: a row of the older encoding with the same values
 * is equal (the values are encoded as the row is and the bytes compared; the encoder is deterministic).
 */
export async function storedCurvesEqual(trx: Transaction<Database> | Db, activityId: string, curves: MetricCurves[]): Promise<boolean> {
  const rows = await trx.selectFrom('activity_curves').selectAll().where('activity_id', '=', activityId).execute();
  if (rows.length !== curves.length) return false;
  return curves.every((c) => {
    const row = rows.find((r) => r.metric === c.metric);
    if (row === undefined || row.version !== CURVES_VERSION) return false;
    const same = (bytes: Buffer | null, values: Int32Array | null) =>
      bytes === null || values === null ? bytes === values : Buffer.from(encodeInt32s(values, row.encoding)).equals(bytes);
    return same(row.level_duration, c.levelDuration) && same(row.level_start, c.levelStart) && same(row.awd, c.awd);
  });
}

/** Mark a change to the user's activities: results cached under the old version are no longer used. */
export async function bumpDataVersion(trx: Transaction<Database> | Db, userId: string): Promise<void> {
  await trx.updateTable('users').set({ data_version: sql`data_version + 1` }).where('id', '=', userId).execute();
}

export async function dataVersion(db: Db, userId: string): Promise<string> {
  const row = await db.selectFrom('users').select('data_version').where('id', '=', userId).executeTakeFirst();
  return row?.data_version ?? '0';
}

export interface StoredCurveRow {
  /** The activity's id. */
  id: string;
  sport: string;
  /** Epoch ms of the activity's first sample. */
  start: number;
  utcOffsetSeconds: number;
  /** The stored bytes (level durations or AWD), in `encoding`. */
  buffer: Buffer;
  /** Second array (level starts) when asked for, in `encoding`. */
  second: Buffer | null;
  /** engine/curves/curve-codec.ts CurveEncoding of the row's arrays. */
  encoding: number;
}

/**
 * The stored curves of every matching activity in one read, oldest activity first: the
 * value-indexed levels (`level_duration`, `level_start`) or the accumulated work duration (`awd`),
 * as stored (packStored hands them to the pool, which decodes them). Activities without that metric
 * (or not yet computed) are left out.
 */
export async function curvesOf(
  db: Db,
  userId: string,
  filter: ActivityFilter,
  metric: string,
  what: 'levels' | 'awd',
): Promise<StoredCurveRow[]> {
  const rows = await db
    .selectFrom('activities')
    .innerJoin('activity_curves', 'activity_curves.activity_id', 'activities.id')
    .select([
      'activities.id',
      'activities.sport',
      'activities.start_time',
      'activities.utc_offset_seconds',
      what === 'levels' ? 'activity_curves.level_duration as buffer' : 'activity_curves.awd as buffer',
      what === 'levels' ? 'activity_curves.level_start as second' : sql<null>`NULL`.as('second'),
      'activity_curves.encoding',
    ])
    .where(activityFilter(userId, filter))
    .where('activity_curves.metric', '=', metric)
    .where('activity_curves.version', '=', CURVES_VERSION)
    .orderBy('activities.start_time', 'asc')
    .orderBy('activities.id', 'asc')
    .execute();
  return rows
    .filter((r) => r.buffer !== null)
    .map((r) => ({
      id: r.id,
      sport: r.sport,
      start: r.start_time.getTime(),
      utcOffsetSeconds: r.utc_offset_seconds,
      buffer: r.buffer!,
      second: r.second,
      encoding: r.encoding,
    }));
}

/** Activities whose curves are missing or older than CURVES_VERSION (all of a user's, or everyone's). */
export async function activitiesNeedingCurves(db: Db, opts: { userId?: string; all?: boolean; limit: number; after?: string }) {
  let q = db
    .selectFrom('activities')
    .select(['activities.id', 'activities.user_id', 'activities.updated_at'])
    .orderBy('activities.id')
    .limit(opts.limit);
  if (opts.userId) q = q.where('activities.user_id', '=', opts.userId);
  if (opts.after) q = q.where('activities.id', '>', opts.after);
  if (!opts.all) {
    q = q.where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('activity_curves')
            .select(sql`1`.as('one'))
            .whereRef('activity_curves.activity_id', '=', 'activities.id')
            .where('activity_curves.version', '=', CURVES_VERSION),
        ),
      ),
    );
  }
  return q.execute();
}

/**
 * One activity's stored accumulated work duration for a metric, if computed. Decoded here, on the
 * caller's thread: one array of a few hundred to a few thousand levels decodes in a few microseconds
 * (well under 0.1 ms), less than handing it to the pool would cost.
 */
export async function activityAwd(db: Db, activityId: string, metric: string): Promise<Int32Array | undefined> {
  const row = await db
    .selectFrom('activity_curves')
    .select(['awd', 'encoding'])
    .where('activity_id', '=', activityId)
    .where('metric', '=', metric)
    .where('version', '=', CURVES_VERSION)
    .executeTakeFirst();
  return row ? decodeInt32s(row.awd, row.encoding) : undefined;
}

/** One stored array of many activities (curvesOf's `buffer` or `second`), with each row's encoding, packed for a pool task; not decoded. */
export function packStored(rows: StoredCurveRow[], which: 'buffer' | 'second'): EncodedArrays {
  return packEncoded(
    rows.map((r) => {
      const bytes = r[which];
      if (bytes === null) throw new Error(`packStored: activity ${r.id} has no ${which} array`);
      return { bytes, encoding: r.encoding };
    }),
  );
}
