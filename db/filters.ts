import { sql, type Expression, type SqlBool } from 'kysely';
import { parseSport } from '../lib/sports.ts';

export interface ActivityFilter {
  /** Instants: rows (activities by their start) at or after `from`, before `until`. */
  from?: Date;
  until?: Date;
  /** Local calendar days (YYYY-MM-DD), inclusive, compared with the row's local time on its own recorded offset. */
  fromDay?: string;
  toDay?: string;
  sports?: string[];
  tags?: string[];
}

/** The furthest a local clock is from UTC (UTC+14, UTC−12): bounds a local-day filter on the indexed instant. */
const MAX_OFFSET_HOURS = 14;

/**
 * The WHERE clause of a filter on a user's timestamped rows: `activities` (time column `start_time`)
 * or `traces` (`time`), each with `user_id`, `utc_offset_seconds`, `sport` and `tags`. Also usable
 * when joined with tables whose columns do not clash. A row without a sport matches no sport filter.
 */
export function userDataFilter(userId: string, f: ActivityFilter, timeColumn: 'start_time' | 'time') {
  const time = sql.ref(timeColumn);
  // biome-ignore lint/suspicious/noExplicitAny: one filter for two tables (activities, traces): the builder is typed by the caller's query
  return (eb: any): Expression<SqlBool> => {
    const clauses: Expression<SqlBool>[] = [eb('user_id', '=', userId)];
    const localTime = sql`(${time} AT TIME ZONE 'UTC' + make_interval(secs => utc_offset_seconds))`;
    if (f.from) clauses.push(eb(timeColumn, '>=', f.from));
    if (f.until) clauses.push(eb(timeColumn, '<', f.until));
    if (f.fromDay) {
      clauses.push(sql<SqlBool>`${time} >= ${f.fromDay}::date - make_interval(hours => ${MAX_OFFSET_HOURS})`);
      clauses.push(sql<SqlBool>`${localTime} >= ${f.fromDay}::date`);
    }
    if (f.toDay) {
      clauses.push(sql<SqlBool>`${time} < ${f.toDay}::date + make_interval(days => 1, hours => ${MAX_OFFSET_HOURS})`);
      clauses.push(sql<SqlBool>`${localTime} < ${f.toDay}::date + 1`);
    }
    if (f.sports?.length) clauses.push(sportsClause(f.sports));
    if (f.tags?.length) clauses.push(sql<SqlBool>`tags && ${f.tags}::text[]`);
    return eb.and(clauses);
  };
}

/**
 * A row's `sport` column matches one of `sports`: a filter sport matches itself and its sub-sports (same
 * or descendant code, and at least its modifiers), as lib/sports.ts sportMatches says.
 */
export function sportsClause(sports: string[]): Expression<SqlBool> {
  const alternatives = sports.map((s) => {
    const sport = parseSport(s)!;
    const code = sport.code;
    return sql<SqlBool>`((split_part(sport, '+', 1) = ${code} OR starts_with(split_part(sport, '+', 1), ${code + '.'}))
      AND (string_to_array(sport, '+'))[2:] @> ${sport.modifiers}::text[])`;
  });
  return sql<SqlBool>`(${sql.join(alternatives, sql` OR `)})`;
}

/** The WHERE clause of an activity filter on `activities` (also usable when joined with tables whose columns do not clash). */
export function activityFilter(userId: string, f: ActivityFilter) {
  return userDataFilter(userId, f, 'start_time');
}
