import { sql } from 'kysely';
import type { Db } from './database.ts';
import { activityFilter } from './filters.ts';

/**
 * What the profile endpoints read from a user's data (docs/api-clients.md, "Profile"): the tags and sports used
 * on their activities and traces, and the per-day training of the template week.
 */

/** Every tag on the user's activities and traces, unique, in code-point order. */
export async function tagsOf(db: Db, userId: string): Promise<string[]> {
  const { rows } = await sql<{ tag: string }>`
    SELECT tag FROM (
      SELECT unnest(tags) AS tag FROM activities WHERE user_id = ${userId}
      UNION
      SELECT unnest(tags) AS tag FROM traces WHERE user_id = ${userId}
    ) used
    ORDER BY tag COLLATE "C"`.execute(db);
  return rows.map((r) => r.tag);
}

/** Every sport of the user's activities and traces (traces without a sport left out), unique, in code-point order. */
export async function sportsOf(db: Db, userId: string): Promise<string[]> {
  const { rows } = await sql<{ sport: string }>`
    SELECT sport FROM (
      SELECT sport FROM activities WHERE user_id = ${userId}
      UNION
      SELECT sport FROM traces WHERE user_id = ${userId} AND sport IS NOT NULL
    ) used
    ORDER BY sport COLLATE "C"`.execute(db);
  return rows.map((r) => r.sport);
}

/** One sport's training on one local day: the summed (end − start) of its activities starting that day. */
export interface TrainingDayRow {
  /** Local date (YYYY-MM-DD) of the activities' start, on their own recorded offset. */
  day: string;
  sport: string;
  seconds: number;
}

/** The furthest apart two clocks can be (UTC+14 and UTC−12): bounds the search for the earliest local date. */
const OFFSET_SPAN_HOURS = 26;

/**
 * The user's training per local day and sport in `[fromDay, toDay]` (local dates, inclusive), and the
 * earliest local date of any of their activities, in one query. `firstDay` is null when there is no
 * training in the range (it does not matter then: every day's total is 0). An activity counts wholly
 * on the local date of its start, even when it runs past midnight.
 */
export async function templateWeekDays(
  db: Db,
  userId: string,
  fromDay: string,
  toDay: string,
): Promise<{ rows: TrainingDayRow[]; firstDay: string | null }> {
  const localDay = sql<string>`((start_time AT TIME ZONE 'UTC' + make_interval(secs => utc_offset_seconds))::date)::text`;
  // The earliest local date is among the activities starting within a day and a bit of the first
  // start (offsets span 26 hours), which the (user_id, start_time) index finds.
  const firstDay = sql<string | null>`(
    SELECT min((f.start_time AT TIME ZONE 'UTC' + make_interval(secs => f.utc_offset_seconds))::date)::text
    FROM activities f
    WHERE f.user_id = ${userId}
      AND f.start_time < (SELECT min(m.start_time) FROM activities m WHERE m.user_id = ${userId}) + make_interval(hours => ${OFFSET_SPAN_HOURS})
  )`;
  const rows = await db
    .selectFrom('activities')
    .select([
      localDay.as('day'),
      'sport',
      sql<number>`sum(extract(epoch FROM end_time - start_time))::float8`.as('seconds'),
      firstDay.as('first_day'),
    ])
    .where(activityFilter(userId, { fromDay, toDay }))
    .groupBy([localDay, 'sport'])
    .orderBy('day')
    .orderBy('sport')
    .execute();
  return { rows: rows.map((r) => ({ day: r.day, sport: r.sport, seconds: Number(r.seconds) })), firstDay: rows[0]?.first_day ?? null };
}
