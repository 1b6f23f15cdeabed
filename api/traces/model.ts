import { z } from 'zod';
import type { TraceFields } from '../../db/traces.ts';
import { parseInstant } from '../../lib/time.ts';
import { SportParam } from '../activities/query.ts';

/** Trace requests (SPEC TraceCreateOrUpdate; API.md Traces). The trace as clients see it: api/resources/activities-traces.ts. */

const INT32_MAX = 2 ** 31 - 1;
const int = () => z.number().int().min(-INT32_MAX).max(INT32_MAX);
const nonNegativeInt = () => z.number().int().min(0).max(INT32_MAX);

/** An instant with its offset: the offset is kept, so `timestamp_local` reads the client's clock. A naive date-time is refused. */
const TraceTimestamp = z.string().transform((value, ctx) => {
  const parsed = parseInstant(value);
  if (parsed.ok) return { time: new Date(parsed.t), offsetSeconds: parsed.offsetSeconds };
  ctx.addIssue({
    code: 'custom',
    message: `"${value}" ${parsed.why}`,
    params: { type: parsed.naive ? 'value_error.datetime.naive' : 'value_error.datetime' },
  });
  return z.NEVER;
});

export const TraceCreateOrUpdate = z
  .object({
    timestamp: TraceTimestamp.meta({
      description: 'ISO 8601 instant with a UTC offset (`Z` or `±hh:mm`); a naive date-time is 422',
      example: '2026-05-18T17:32:00+02:00',
    }),
    test_id: z.string().min(1).max(100).nullish().describe('The test (e.g. a lactate step test) this measurement belongs to'),
    lactate: z.number().nullish().describe('mmol/L'),
    rpe: int().nullish().describe('Rating of perceived exertion (an integer on the scale the client uses)'),
    notes: z.string().max(10_000).nullish(),
    power: nonNegativeInt().nullish().describe('W'),
    speed: z.number().min(0).nullish().describe('m/s'),
    heart_rate: nonNegativeInt().nullish().describe('bpm'),
    vo2: z.number().min(0).nullish().describe('mL/min/kg'),
    tags: z.array(z.string().min(1).max(64)).max(50).optional().describe('At most 50 tags of 1–64 characters; duplicates are dropped'),
    sport: SportParam.nullish().describe('OpenSportTaxonomy (legacy names are normalised, e.g. cycling.trainer → cycling+stationary)'),
  })
  .meta({ id: 'TraceCreateOrUpdate' });

/** The stored fields of a request body: omitted fields are null (PUT is a full replace). */
export function traceFields(body: z.output<typeof TraceCreateOrUpdate>): TraceFields {
  return {
    time: body.timestamp.time,
    utc_offset_seconds: body.timestamp.offsetSeconds,
    test_id: body.test_id ?? null,
    lactate: body.lactate ?? null,
    rpe: body.rpe ?? null,
    notes: body.notes ?? null,
    power: body.power ?? null,
    speed: body.speed ?? null,
    heart_rate: body.heart_rate ?? null,
    vo2: body.vo2 ?? null,
    tags: [...new Set(body.tags ?? [])],
    sport: body.sport ?? null,
  };
}
