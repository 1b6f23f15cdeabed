import { z } from 'zod';
import { parseDay } from '../../../lib/time.ts';
import { UnprocessableEntity } from '../errors.ts';
import { onTheWire } from '../openapi-schema.ts';
import type { DailiesBetween, StoredDaily } from '../../../db/dailies.ts';

/** The daily measures as clients see them (DailyResponse; docs/api-clients.md, "Conventions" and "Dailies"). */

/** Each DailyMeasure with its unit and allowed (inclusive) range: the single source of validation and documentation. */
export const DAILY_MEASURES = {
  body_mass: { unit: 'kg', min: 0, max: 500 },
  body_fat_pct: { unit: '%', min: 0, max: 100 },
  resting_hr: { unit: 'bpm', min: 0, max: 250 },
  hrv: { unit: 'ms', min: 0, max: 500 },
  sleep_duration: { unit: 's', min: 0, max: 86400 },
  sleep_altitude: { unit: 'm', min: 0, max: 10000 },
  menstrual_cycle_day: { unit: 'day', min: 0, max: 100 },
} as const satisfies Record<string, { unit: string; min: number; max: number }>;

export type DailyMeasure = keyof typeof DAILY_MEASURES;
/** The widest of the ranges: the schema's own bounds (each measure's range is checked against its own, checkDailyValue). */
const VALUE_RANGE = {
  min: Math.min(...Object.values(DAILY_MEASURES).map((m) => m.min)),
  max: Math.max(...Object.values(DAILY_MEASURES).map((m) => m.max)),
};
const MEASURE_NAMES = Object.keys(DAILY_MEASURES) as [DailyMeasure, ...DailyMeasure[]];

/** `` `body_mass` (kg, 0–500), … ``: the table in words, for descriptions. */
export const MEASURE_TABLE = MEASURE_NAMES.map(
  (m) => `\`${m}\` (${DAILY_MEASURES[m].unit}, ${DAILY_MEASURES[m].min}–${DAILY_MEASURES[m].max})`,
).join(', ');

export const DailyMeasureParam = z.enum(MEASURE_NAMES).meta({
  id: 'DailyMeasure',
  description: `The measure, with its unit and allowed range (inclusive): ${MEASURE_TABLE}.`,
});

export const DAILY_SOURCES = ['manual', 'garmin_connect', 'intervals_icu', 'wahoo'] as const;
export const DailySource = z
  .enum(DAILY_SOURCES)
  .meta({ id: 'DailySource', description: 'Where a stored value came from; `manual` for values written through this API' });
export const DailyStatus = z.enum(['stored', 'estimated', 'missing']).meta({
  id: 'DailyStatus',
  description: '`stored`: a value was written for the date; `estimated`: interpolated between stored values; `missing`: no value',
});

/** The earliest date accepted: keeps ranges computed back from it within the dates PostgreSQL and ISO strings share. */
export const EARLIEST_DAY = '1900-01-01';

/** A calendar date `YYYY-MM-DD` (from 1900-01-01). */
export const DayParam = z
  .string()
  .refine((s) => parseDay(s) !== undefined, { message: 'expected a calendar date YYYY-MM-DD', abort: true })
  .refine((s) => s >= EARLIEST_DAY, { message: `expected a date from ${EARLIEST_DAY} on` })
  .meta({ format: 'date' });

export const DailyParams = z.object({ measure: DailyMeasureParam });

export const DailyCreate = z
  .object({
    date: DayParam.describe('The calendar date the value belongs to, `YYYY-MM-DD`'),
    // (Each measure's own range is checked by checkDailyValue, whose 422 names the measure and its
    // unit; the document shows the widest range as the schema's bounds.)
    value: onTheWire(z.number().describe(`In the measure's unit, within its range (inclusive; 422 outside): ${MEASURE_TABLE}`), {
      type: 'number',
      minimum: VALUE_RANGE.min,
      maximum: VALUE_RANGE.max,
    }),
  })
  .meta({ id: 'DailyCreate' });

export const DailyResponse = z
  .object({
    date: z.string().meta({ format: 'date', description: '`YYYY-MM-DD`' }),
    value: z.number().nullable().describe("In the measure's unit; null when missing"),
    status: DailyStatus,
    source: DailySource.nullable().describe('The stored source; null for estimated and missing days'),
  })
  .meta({ id: 'DailyResponse' });
export type DailyOut = z.output<typeof DailyResponse>;

/** The 422 of a value outside the measure's range, or undefined when it is within. */
export function checkDailyValue(measure: DailyMeasure, value: number): UnprocessableEntity | undefined {
  const { unit, min, max } = DAILY_MEASURES[measure];
  if (value >= min && value <= max) return undefined;
  return new UnprocessableEntity([
    {
      loc: ['body', 'value'],
      msg: `${measure} must be between ${min} and ${max} ${unit} (inclusive); got ${value}`,
      type: value < min ? 'greater_than_equal' : 'less_than_equal',
    },
  ]);
}

const DAY_MS = 86_400_000;
const msOf = (day: string) => Date.parse(`${day}T00:00:00Z`);

/** The date `days` days after `day` (before, when negative). */
export function addDays(day: string, days: number): string {
  return new Date(msOf(day) + days * DAY_MS).toISOString().slice(0, 10);
}

/** Whole days from `a` to `b` (negative when `b` is earlier). */
export function daysFrom(a: string, b: string): number {
  return Math.round((msOf(b) - msOf(a)) / DAY_MS);
}

/** GET's default range: the last 30 days. */
export const DEFAULT_RANGE_DAYS = 30;
/** The most days one GET may return (ten years and then some). */
export const MAX_RANGE_DAYS = 3660;

/**
 * The days a GET covers: `end` defaults to `today`, `start` to `end` − 29 days. A start after the
 * end, or more than MAX_RANGE_DAYS days, is a 422 on `start`.
 */
export function dailyRange(query: { start?: string | undefined; end?: string | undefined }, today: string): { start: string; end: string } {
  const end = query.end ?? today;
  const start = query.start ?? addDays(end, -(DEFAULT_RANGE_DAYS - 1));
  const days = daysFrom(start, end) + 1;
  const problem = (msg: string) => new UnprocessableEntity([{ loc: ['query', 'start'], msg, type: 'value_error.range' }]);
  if (days < 1) throw problem(`start (${start}) is after end (${end}${query.end === undefined ? ', today' : ''})`);
  if (days > MAX_RANGE_DAYS) throw problem(`the range may span at most ${MAX_RANGE_DAYS} days; ${start} to ${end} spans ${days}`);
  return { start, end };
}

/**
 * The linear estimate on `day` between two stored values, `before` (earlier) and `after` (later):
 * `before.value` on `before.day`, `after.value` on `after.day`, a straight line between.
 */
export function linearEstimate(before: { day: string; value: number }, after: { day: string; value: number }, day: string): number {
  const span = daysFrom(before.day, after.day);
  const t = daysFrom(before.day, day);
  // Weighted sum rather than v0 + slope·t: integers that lie on the line come out exact.
  return (before.value * (span - t) + after.value * t) / span;
}

/**
 * One element per day of `[start, end]`, oldest first: the stored value, else — with `interpolate`
 * and a stored value on both sides (`before`/`after` may lie outside the range) — the linear
 * estimate, else missing.
 */
export function dailySeries(start: string, end: string, stored: DailiesBetween, interpolate: boolean): DailyOut[] {
  const out: DailyOut[] = [];
  const rows = stored.rows;
  let previous: StoredDaily | undefined = stored.before;
  let i = 0;
  for (let day = start, n = daysFrom(start, end); n >= 0; day = addDays(day, 1), n--) {
    const row = rows[i];
    if (row?.day === day) {
      out.push({ date: day, value: row.value, status: 'stored', source: row.source as DailyOut['source'] });
      previous = row;
      i++;
      continue;
    }
    const next = row ?? stored.after;
    if (interpolate && previous && next)
      out.push({ date: day, value: linearEstimate(previous, next, day), status: 'estimated', source: null });
    else out.push({ date: day, value: null, status: 'missing', source: null });
  }
  return out;
}
