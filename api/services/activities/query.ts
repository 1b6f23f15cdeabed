import { z } from 'zod';
import { normaliseSport } from '../../../lib/sports.ts';
import { parseDay, parseInstant } from '../../../lib/time.ts';
import { onTheWire } from '../openapi-schema.ts';

/**
 * Query parameter shapes shared by the activity endpoints (docs/api-clients.md, "Conventions"): arrays repeat the
 * key or separate values with commas; `start`/`end` take a date (whole local days, inclusive) or an
 * instant with an offset.
 */

/** `?k=a&k=b` and `?k=a,b` both give `['a', 'b']`. */
export function queryArray<T extends z.ZodType>(item: T, max: { count: number; message?: string } = { count: 50 }) {
  return z.preprocess(
    (v) =>
      v === undefined
        ? undefined
        : (Array.isArray(v) ? v : [v])
            .flatMap((s) => String(s).split(','))
            .map((s) => s.trim())
            .filter(Boolean),
    z.array(item).max(max.count, max.message),
  );
}

export const SportParam = z.string().transform((value, ctx) => {
  const sport = normaliseSport(value);
  if (!sport) {
    ctx.addIssue({
      code: 'custom',
      message: `"${value}" is not a sport (OpenSportTaxonomy, e.g. cycling.road or running+stationary)`,
      params: { type: 'value_error.sport' },
    });
    return z.NEVER;
  }
  return sport;
});

export type TimeBound = { day: string } | { instant: Date };

export const TimeBoundParam = z
  .string()
  .transform((value, ctx): TimeBound => {
    const day = parseDay(value);
    if (day) return { day };
    const instant = parseInstant(value);
    if (instant.ok) return { instant: new Date(instant.t) };
    ctx.addIssue({
      code: 'custom',
      message: `"${value}" is neither a date (YYYY-MM-DD) nor an instant with a UTC offset (2026-05-18T15:32:00Z)`,
      params: { type: 'value_error.datetime' },
    });
    return z.NEVER;
  })
  .meta({ description: 'A date `YYYY-MM-DD` (whole local days, inclusive) or an instant with an offset' });

/**
 * A boolean query parameter with its default: `true`/`false` (also `1`/`0`, and `True`/`False`, what
 * python `requests` writes for a Python bool; anything else is a 422 naming it). OpenAPI shows it as
 * `type: boolean` with the default.
 */
export function queryBoolean(defaultValue: boolean) {
  const schema = z
    .enum(['true', 'false', '1', '0', 'True', 'False'])
    .transform((v) => v === 'true' || v === '1' || v === 'True')
    .default(defaultValue);
  return onTheWire(schema, { type: 'boolean', default: defaultValue });
}

export const Limit = z.coerce.number().int().min(1).max(1000).default(50);
export const Offset = z.coerce.number().int().min(0).default(0);

/** The activity filter from `start`/`end`: a date bound compares local days, an instant bound compares the UTC start. */
export function timeFilter(start: TimeBound | undefined, end: TimeBound | undefined) {
  return {
    ...(start && 'day' in start ? { fromDay: start.day } : start ? { from: start.instant } : {}),
    ...(end && 'day' in end ? { toDay: end.day } : end ? { until: new Date(end.instant.getTime() + 1) } : {}),
  };
}
