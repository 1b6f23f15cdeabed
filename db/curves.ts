import { sql, type Transaction } from 'kysely';
import type { Database, Db } from './database.ts';
import { activityFilter, type ActivityFilter } from './filters.ts';
import { CURVES_VERSION, type MetricCurves } from '../engine/curves/activity-curves.ts';
import type { Packed } from '../engine/curves/longitudinal.ts';

/**
 * Storage of activity curves (engine/curves/activity-curves.ts) in `activity_curves`: typed arrays as their
 * little-endian bytes (every platform Node runs on here is little-endian; checked at load).
 */
if (new Uint8Array(new Uint16Array([1]).buffer)[0] !== 1) throw new Error('activity curves are stored little-endian; this platform is big-endian');

const bytes = (a: Float64Array | Int32Array | null): Buffer | null => (a ? Buffer.from(a.buffer, a.byteOffset, a.byteLength) : null);

/** A copy of the bytes as a typed array (pg's Buffers are not aligned for Float64Array views). */
export function float64s(b: Buffer): Float64Array {
  const out = new Float64Array(b.byteLength / 8);
  new Uint8Array(out.buffer).set(b);
  return out;
}
export function int32s(b: Buffer): Int32Array {
  const out = new Int32Array(b.byteLength / 4);
  new Uint8Array(out.buffer).set(b);
  return out;
}

/** The `activity_curves` rows of one activity's curves. */
export function curveRows(activityId: string, curves: MetricCurves[], now: Date) {
  return curves.map((c) => ({
    activity_id: activityId,
    metric: c.metric,
    version: CURVES_VERSION,
    best: bytes(c.best),
    best_start: bytes(c.bestStart),
    level_duration: bytes(c.levelDuration),
    level_start: bytes(c.levelStart),
    awd: bytes(c.awd)!,
    computed_at: now,
  }));
}

/** Replace one activity's curves (all metrics), inside the caller's transaction. */
export async function storeCurves(trx: Transaction<Database> | Db, activityId: string, curves: MetricCurves[], now: Date): Promise<void> {
  await trx.deleteFrom('activity_curves').where('activity_id', '=', activityId).execute();
  if (!curves.length) return;
  await trx.insertInto('activity_curves').values(curveRows(activityId, curves, now)).execute();
}

/** Whether the stored curves of an activity are exactly `curves` (same metrics, same bytes, current version). */
export async function storedCurvesEqual(trx: Transaction<Database> | Db, activityId: string, curves: MetricCurves[]): Promise<boolean> {
  const stored = await trx.selectFrom('activity_curves').selectAll().where('activity_id', '=', activityId).execute();
  if (stored.length !== curves.length) return false;
  const same = (a: Buffer | null, b: Buffer | null) => (a === null || b === null ? a === b : a.equals(b));
  return curves.every((c) => {
    const row = stored.find((r) => r.metric === c.metric);
    return (
      row !== undefined &&
      row.version === CURVES_VERSION &&
      same(row.best, bytes(c.best)) &&
      same(row.best_start, bytes(c.bestStart)) &&
      same(row.level_duration, bytes(c.levelDuration)) &&
      same(row.level_start, bytes(c.levelStart)) &&
      same(row.awd, bytes(c.awd))
    );
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

/** One activity's stored mean-max curve (every duration) for a metric, if computed. */
export async function activityMeanMax(db: Db, activityId: string, metric: string): Promise<{ best: Float64Array; start: Int32Array } | undefined> {
  const row = await db
    .selectFrom('activity_curves')
    .select(['best', 'best_start'])
    .where('activity_id', '=', activityId)
    .where('metric', '=', metric)
    .where('version', '=', CURVES_VERSION)
    .executeTakeFirst();
  if (!row?.best || !row.best_start) return undefined;
  return { best: float64s(row.best), start: int32s(row.best_start) };
}

export interface StoredCurveRow {
  /** The activity's id. */
  id: string;
  sport: string;
  /** Epoch ms of the activity's first sample. */
  start: number;
  utcOffsetSeconds: number;
  buffer: Buffer;
  /** Second array (level starts) when asked for. */
  second: Buffer | null;
}

/**
 * The stored curves of every matching activity in one read, oldest activity first: the
 * value-indexed levels (`level_duration`, `level_start`) or the accumulated work duration (`awd`).
 * Activities without that metric (or not yet computed) are left out.
 */
export async function curvesOf(db: Db, userId: string, filter: ActivityFilter, metric: string, what: 'levels' | 'awd'): Promise<StoredCurveRow[]> {
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
    ])
    .where(activityFilter(userId, filter))
    .where('activity_curves.metric', '=', metric)
    .where('activity_curves.version', '=', CURVES_VERSION)
    .orderBy('activities.start_time', 'asc')
    .orderBy('activities.id', 'asc')
    .execute();
  return rows
    .filter((r) => r.buffer !== null)
    .map((r) => ({ id: r.id, sport: r.sport, start: r.start_time.getTime(), utcOffsetSeconds: r.utc_offset_seconds, buffer: r.buffer!, second: r.second }));
}

/** Activities whose curves are missing or older than CURVES_VERSION (all of a user's, or everyone's). */
export async function activitiesNeedingCurves(db: Db, opts: { userId?: string; all?: boolean; limit: number; after?: string }) {
  let q = db.selectFrom('activities').select(['activities.id', 'activities.user_id']).orderBy('activities.id').limit(opts.limit);
  if (opts.userId) q = q.where('activities.user_id', '=', opts.userId);
  if (opts.after) q = q.where('activities.id', '>', opts.after);
  if (!opts.all) {
    q = q.where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('activity_curves').select(sql`1`.as('one')).whereRef('activity_curves.activity_id', '=', 'activities.id').where('activity_curves.version', '=', CURVES_VERSION))),
    );
  }
  return q.execute();
}

/** One activity's stored accumulated work duration for a metric, if computed. */
export async function activityAwd(db: Db, activityId: string, metric: string): Promise<Int32Array | undefined> {
  const row = await db
    .selectFrom('activity_curves')
    .select('awd')
    .where('activity_id', '=', activityId)
    .where('metric', '=', metric)
    .where('version', '=', CURVES_VERSION)
    .executeTakeFirst();
  return row ? int32s(row.awd) : undefined;
}

/** Stored Int32 arrays of many activities → one packed Int32Array (activity i at offsets[i] .. offsets[i+1]). */
export function packInt32(buffers: Buffer[]): Packed<Int32Array> {
  const offsets = new Int32Array(buffers.length + 1);
  buffers.forEach((b, i) => (offsets[i + 1] = offsets[i]! + b.byteLength / 4));
  const values = new Int32Array(offsets[buffers.length]!);
  const bytes = new Uint8Array(values.buffer);
  buffers.forEach((b, i) => bytes.set(b, offsets[i]! * 4));
  return { values, offsets };
}
