import { loadInputsChanged, type Trx } from './training-load.ts';
import type { DailyRow, Db } from './database.ts';

/**
 * Daily measures (docs/api-clients.md, "Dailies"): one value per user, measure and calendar date (`day`, read as
 * `YYYY-MM-DD`). Every function is scoped by the user id, so one user never reads or removes
 * another's values.
 */

export interface StoredDaily {
  day: string;
  value: number;
  source: string;
}

export interface NewDaily extends StoredDaily {
  user_id: string;
  measure: string;
}

const STORED = ['day', 'value', 'source'] as const;

/** Insert or replace the value of (user, measure, day); returns what is stored. */
export async function upsertDaily(db: Db, daily: NewDaily, now: Date): Promise<StoredDaily> {
  if (daily.measure === RESTING_HR)
    return db.transaction().execute(async (trx) => {
      await loadInputsChanged(trx, daily.user_id, null, daily.day);
      return insertDaily(trx, daily, now);
    });
  return insertDaily(db, daily, now);
}

/** The measure training load reads (the resting heart rate of TRIMP, db/training-load.ts): a change recomputes the load from its day on. */
const RESTING_HR = 'resting_hr';

function insertDaily(db: Trx, daily: NewDaily, now: Date): Promise<StoredDaily> {
  return db
    .insertInto('dailies')
    .values({ ...daily, created_at: now, updated_at: now })
    .onConflict((oc) =>
      oc.columns(['user_id', 'measure', 'day']).doUpdateSet({ value: daily.value, source: daily.source, updated_at: now }),
    )
    .returning(STORED)
    .executeTakeFirstOrThrow();
}

export interface DailiesBetween {
  /** The stored values of the days from `start` to `end` (inclusive), oldest first. */
  rows: StoredDaily[];
  /** The nearest stored value before `start` and after `end` (for interpolation), when asked for and there is one. */
  before?: StoredDaily;
  after?: StoredDaily;
}

/** A user's values of one measure in `[start, end]` (YYYY-MM-DD, inclusive); with `neighbours`, also the nearest values outside it. */
export async function dailiesBetween(
  db: Db,
  userId: string,
  measure: string,
  start: string,
  end: string,
  opts: { neighbours?: boolean } = {},
): Promise<DailiesBetween> {
  const own = db.selectFrom('dailies').select(STORED).where('user_id', '=', userId).where('measure', '=', measure);
  const [rows, before, after] = await Promise.all([
    own.where('day', '>=', start).where('day', '<=', end).orderBy('day', 'asc').execute(),
    opts.neighbours ? own.where('day', '<', start).orderBy('day', 'desc').limit(1).executeTakeFirst() : undefined,
    opts.neighbours ? own.where('day', '>', end).orderBy('day', 'asc').limit(1).executeTakeFirst() : undefined,
  ]);
  return { rows, ...(before ? { before } : {}), ...(after ? { after } : {}) };
}

/** Remove the value of (user, measure, day); false when there was none. */
export async function deleteDaily(db: Db, userId: string, measure: string, day: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const res = await trx
      .deleteFrom('dailies')
      .where('user_id', '=', userId)
      .where('measure', '=', measure)
      .where('day', '=', day)
      .executeTakeFirst();
    if (res.numDeletedRows > 0n && measure === RESTING_HR) await loadInputsChanged(trx, userId, null, day);
    return res.numDeletedRows > 0n;
  });
}

/** A user's stored values (of one measure, or of all), newest first (by date, then measure). */
export function listDailies(
  db: Db,
  userId: string,
  measure: string | undefined,
  page: { limit: number; offset: number },
): Promise<DailyRow[]> {
  let query = db.selectFrom('dailies').selectAll().where('user_id', '=', userId);
  if (measure !== undefined) query = query.where('measure', '=', measure);
  return query.orderBy('day', 'desc').orderBy('measure', 'asc').limit(page.limit).offset(page.offset).execute();
}
