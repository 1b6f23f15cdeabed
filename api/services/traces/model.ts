import { z } from 'zod';
import type { TraceFields } from '../../../db/traces.ts';
import { parseInstant } from '../../../lib/time.ts';
import { SportParam } from '../activities/query.ts';
import { MEASUREMENT_RANGES } from '../measurements.ts';

/** Trace requests (TraceCreateOrUpdate; docs/api-clients.md, "Traces"). The trace as clients see it: api/services/resources/activities-traces.ts. */

/** Each measurement bounded by MEASUREMENT_RANGES (../measurements.ts); RPE by 120 (Borg's 6–20, CR10 and CR100, whose top is 120). */
const { power: POWER, speed: SPEED, heart_rate: HEART_RATE, lactate: LACTATE, vo2: VO2 } = MEASUREMENT_RANGES;
const bounded = (min: number, max: number) => z.number().min(min).max(max);
const boundedInt = (min: number, max: number) => z.number().int().min(min).max(max);

/** An instant with its offset: the offset is kept, so `timestamp_local` reads the client's clock. A naive date-time is refused. */
export const InstantWithOffset = z.string().transform((value, ctx) => {
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
    timestamp: InstantWithOffset.meta({
      description: 'ISO 8601 instant with a UTC offset (`Z` or `±hh:mm`); a naive date-time is 422',
      example: '2026-05-18T17:32:00+02:00',
    }),
    test_id: z
      .string()
      .min(1)
      .max(100)
      .nullish()
      .describe(
        "The id of one of the user's tests (e.g. a lactate step test) this measurement belongs to; one naming no test of the user's is 422",
      ),
    lactate: bounded(LACTATE.min, LACTATE.max).nullish().describe(`mmol/L, ${LACTATE.min}–${LACTATE.max}`),
    rpe: boundedInt(0, 120)
      .nullish()
      .describe('Rating of perceived exertion: an integer on the scale the client uses, 0–120 (Borg 6–20, CR10, CR100)'),
    notes: z.string().max(10_000).nullish(),
    power: boundedInt(POWER.min, POWER.max).nullish().describe(`W, ${POWER.min}–${POWER.max}`),
    speed: bounded(SPEED.min, SPEED.max).nullish().describe(`m/s, ${SPEED.min}–${SPEED.max}`),
    heart_rate: boundedInt(HEART_RATE.min, HEART_RATE.max).nullish().describe(`bpm, ${HEART_RATE.min}–${HEART_RATE.max}`),
    vo2: bounded(VO2.min, VO2.max).nullish().describe(`mL/min/kg, ${VO2.min}–${VO2.max}`),
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
