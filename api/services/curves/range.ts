import { z } from 'zod';
import type { ActivityFilter } from '../../../db/filters.ts';
import { DateParam } from '../activities/curve-params.ts';
import { timeFilter, TimeBoundParam, type TimeBound } from '../activities/query.ts';

/**
 * The date range of a longitudinal query. `start`/`end` take a date (whole local days, inclusive)
 * or an instant; `end` defaults to today (UTC). The deprecated `date` and `window_days` stand for
 * the `window_days` days up to and including `date` (default today; window 90 days); `start` wins
 * when both are given. Without any, the range is the user's whole history up to `end` — or, where
 * a range is required (`after`), the year up to `end`.
 */
export const RangeQuery = {
  start: TimeBoundParam.optional(),
  end: TimeBoundParam.optional(),
  date: DateParam.optional().meta({
    deprecated: true,
    description: 'Deprecated: use start and end. The last day of a `window_days` window.',
  }),
  window_days: z.coerce
    .number()
    .int()
    .min(1)
    .max(36600)
    .optional()
    .meta({ deprecated: true, description: 'Deprecated: use start and end. Days up to `date` (default 90).' }),
};

export interface RangeInput {
  start?: TimeBound | undefined;
  end?: TimeBound | undefined;
  date?: string | undefined;
  window_days?: number | undefined;
}

export interface Range {
  start: TimeBound | undefined;
  end: TimeBound;
  /** The request used `date` or `window_days`. */
  deprecated: boolean;
}

const DAY_MS = 86_400_000;
export const DEFAULT_WINDOW_DAYS = 90;

function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
function msOf(day: string): number {
  return Date.parse(`${day}T00:00:00Z`);
}

/** The first day dates may have (what ISO 8601's four-digit years and PostgreSQL both hold). */
const FIRST_DAY = '0001-01-01';

/**
 * The first day of the `days` days up to and including `last` (YYYY-MM-DD); a window reaching
 * before 0001-01-01 starts there (`date=0001-01-01` is a one-day window, not a year −89 date).
 */
export function firstDayOfWindow(last: string, days: number): string {
  return dayFrom(msOf(last) - (days - 1) * DAY_MS);
}

/** The day of `ms`, or 0001-01-01 for an instant before it. */
function dayFrom(ms: number): string {
  return ms < msOf(FIRST_DAY) ? FIRST_DAY : dayOf(ms);
}

/** Today's date in UTC. */
export function todayUtc(now: Date): string {
  return dayOf(now.getTime());
}

export function resolveRange(q: RangeInput, now: Date, opts: { defaultYear?: boolean } = {}): Range {
  const deprecated = q.date !== undefined || q.window_days !== undefined;
  if (q.start === undefined && deprecated) {
    const last = q.date ?? todayUtc(now);
    return { start: { day: firstDayOfWindow(last, q.window_days ?? DEFAULT_WINDOW_DAYS) }, end: { day: last }, deprecated };
  }
  const end = q.end ?? { day: todayUtc(now) };
  let start = q.start;
  if (!start && opts.defaultYear) start = { day: dayFrom(endMs(end) - YEAR_DAYS * DAY_MS) };
  return { start, end, deprecated };
}

/** The most days a range with `after` may span (a leap year). */
export const YEAR_DAYS = 366;

/** The first instant after the range (exclusive end), in UTC (day bounds as UTC days: close enough to bound a span). */
function endMs(b: TimeBound): number {
  return 'day' in b ? msOf(b.day) + DAY_MS : b.instant.getTime();
}
function startMs(b: TimeBound): number {
  return 'day' in b ? msOf(b.day) : b.instant.getTime();
}

/** The range's length in days (whole days for date bounds), Infinity without a start. */
export function rangeDays(r: Range): number {
  return r.start ? (endMs(r.end) - startMs(r.start)) / DAY_MS : Infinity;
}

export function rangeFilter(r: Range): ActivityFilter {
  return timeFilter(r.start, r.end);
}
