import { z } from 'zod';
import { defineRoute } from '../../../http/route.ts';
import { firstDayOfWindow, todayUtc } from '../../../services/curves/range.ts';
import { templateWeekDays, type TrainingDayRow } from '../../../../db/profile.ts';
import { formatDuration } from '../../../../lib/time.ts';

/** The template week is built from the 12 weeks before today. */
export const TEMPLATE_WEEK_DAYS = 84;

export const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

const DAY_MS = 86_400_000;
const msOf = (day: string) => Date.parse(`${day}T00:00:00Z`);
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
/** The weekday of a date (YYYY-MM-DD). */
export const weekdayOf = (day: string): Weekday => WEEKDAYS[(new Date(msOf(day)).getUTCDay() + 6) % 7]!;

const TemplateDay = z
  .object({
    sports: z.array(z.string()).describe('Sports trained on this weekday, most frequent first'),
    avg_training_duration: z.string().describe('ISO 8601 duration: the mean daily training total'),
    typical_training_duration: z.string().describe('ISO 8601 duration: the median daily training total'),
  })
  .meta({ id: 'TemplateDay' });
const TemplateWeekResponse = z
  .object(Object.fromEntries(WEEKDAYS.map((d) => [d, TemplateDay])) as Record<Weekday, typeof TemplateDay>)
  .meta({ id: 'TemplateWeekResponse' });

export type TemplateDayOut = z.output<typeof TemplateDay>;
export type TemplateWeek = Record<Weekday, TemplateDayOut>;

function median(sorted: number[]): number {
  const n = sorted.length;
  if (!n) return 0;
  return n % 2 ? sorted[(n - 1) / 2]! : (sorted[n / 2 - 1]! + sorted[n / 2]!) / 2;
}

/**
 * The template week from a user's training per local day and sport (`rows`) in the window
 * `[fromDay, toDay]`: for each weekday, the days counted are that weekday's dates in the window on
 * or after `firstDay` (the local date of the user's first activity; rows before it move it back);
 * `avg_training_duration` is the mean of their daily totals (days without training count as 0),
 * `typical_training_duration` their median (the mean of the two middle values for an even count),
 * both rounded to whole seconds, PT0S without counted days. `sports` lists the sports trained on
 * that weekday, most distinct days first, then most total time, then alphabetically. Rows outside
 * the window are ignored.
 */
export function templateWeek(rows: TrainingDayRow[], window: { fromDay: string; toDay: string }, firstDay: string | null): TemplateWeek {
  const inWindow = rows.filter((r) => r.day >= window.fromDay && r.day <= window.toDay);
  let first = firstDay;
  for (const r of inWindow) if (first === null || r.day < first) first = r.day;

  const totals = new Map<string, number>();
  const sports = new Map<Weekday, Map<string, { days: Set<string>; seconds: number }>>();
  for (const r of inWindow) {
    totals.set(r.day, (totals.get(r.day) ?? 0) + r.seconds);
    const weekday = weekdayOf(r.day);
    const bySport = sports.get(weekday) ?? new Map<string, { days: Set<string>; seconds: number }>();
    sports.set(weekday, bySport);
    const entry = bySport.get(r.sport) ?? { days: new Set<string>(), seconds: 0 };
    bySport.set(r.sport, entry);
    entry.days.add(r.day);
    entry.seconds += r.seconds;
  }

  const counted = new Map<Weekday, number[]>(WEEKDAYS.map((d) => [d, []]));
  if (first !== null) {
    const start = Math.max(msOf(window.fromDay), msOf(first));
    for (let ms = start; ms <= msOf(window.toDay); ms += DAY_MS) {
      const day = dayOf(ms);
      counted.get(weekdayOf(day))!.push(totals.get(day) ?? 0);
    }
  }

  const week = {} as TemplateWeek;
  for (const weekday of WEEKDAYS) {
    const days = counted.get(weekday)!.sort((a, b) => a - b);
    const mean = days.length ? days.reduce((a, b) => a + b, 0) / days.length : 0;
    const ranked = [...(sports.get(weekday) ?? new Map()).entries()].sort(
      ([sa, a], [sb, b]) => b.days.size - a.days.size || b.seconds - a.seconds || (sa < sb ? -1 : sa > sb ? 1 : 0),
    );
    week[weekday] = {
      sports: ranked.map(([sport]) => sport),
      avg_training_duration: formatDuration(Math.round(mean)),
      typical_training_duration: formatDuration(Math.round(median(days))),
    };
  }
  return week;
}

/** The window of the template week: the 84 local dates before `today` (UTC). */
export function templateWeekWindow(now: Date): { fromDay: string; toDay: string } {
  const toDay = dayOf(msOf(todayUtc(now)) - DAY_MS);
  return { fromDay: firstDayOfWindow(toDay, TEMPLATE_WEEK_DAYS), toDay };
}

export const templateWeekRoute = defineRoute(
  {
    method: 'get',
    path: '/api/v1/profile/template-week',
    operationId: 'profile_template_week',
    summary: "A typical week of the user's training, per weekday",
    description:
      "Built from the user's activities of the last 12 weeks before today: the 84 local dates from today−84 to today−1, where today is " +
      "the current UTC date; today's activities and older ones are not used. An activity belongs to the local date of its start " +
      "(its start time on its own recorded UTC offset) and counts wholly there, even when it runs past midnight. A day's training " +
      "total is the sum of (end − start) of its activities. For each weekday, the days counted are that weekday's dates in the window " +
      "on or after the local date of the user's first activity ever (so a new user's weekdays are not diluted by weeks before they had " +
      'any data): `avg_training_duration` is the mean of their daily totals (days without training count as 0), ' +
      '`typical_training_duration` their median (the mean of the two middle values for an even count); both are ISO 8601 durations ' +
      'rounded to whole seconds, and `PT0S` when no day is counted. `sports` lists the full sport strings trained on that weekday in ' +
      'the window, most frequent first (frequency: the number of distinct days of that weekday on which the sport was trained), ties ' +
      'broken by total duration (longest first), then alphabetically; `[]` when there was none. All seven weekdays are always present.',
    tags: ['profile'],
    auth: { scopes: ['data:read'] },
    responses: { 200: { description: 'The template week, Monday to Sunday', schema: TemplateWeekResponse } },
  },
  async (ctx) => {
    const window = templateWeekWindow(ctx.deps.now());
    const { rows, firstDay } = await templateWeekDays(ctx.deps.db, ctx.state.principal!.userId, window.fromDay, window.toDay);
    ctx.body = templateWeek(rows, window, firstDay);
  },
);
