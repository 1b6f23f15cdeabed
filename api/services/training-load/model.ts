import { z } from 'zod';
import { parseDay } from '../../../lib/time.ts';
import { SportParam } from '../activities/query.ts';
import { THRESHOLD_FIELDS } from '../../../engine/load/thresholds.ts';
import { ZONE_METRICS } from '../../../engine/load/zones.ts';
import type { ActivityLoadTable } from '../../../db/training-load-tables.ts';
import type { Selectable } from 'kysely';

/**
 * Training load as clients see it (docs/training-load.md): thresholds with a history, zones, and per
 * activity its training stress, time in zones and lowest W′ balance. Every bound here is what the API
 * accepts: a value outside it is a 422 naming the field.
 */

/** The accepted range of each threshold (inclusive), in its unit. */
export const THRESHOLD_RANGES = {
  critical_power: { min: 1, max: 2500, unit: 'W' },
  w_prime: { min: 100, max: 200_000, unit: 'J' },
  critical_speed: { min: 0.1, max: 30, unit: 'm/s' },
  threshold_heart_rate: { min: 40, max: 250, unit: 'bpm' },
  max_heart_rate: { min: 40, max: 250, unit: 'bpm' },
  resting_heart_rate: { min: 20, max: 150, unit: 'bpm' },
} as const satisfies Record<(typeof THRESHOLD_FIELDS)[number], { min: number; max: number; unit: string }>;

const bounded = (field: keyof typeof THRESHOLD_RANGES, what: string) => {
  const { min, max, unit } = THRESHOLD_RANGES[field];
  return z
    .number()
    .min(min)
    .max(max)
    .nullish()
    .describe(`${what}, ${unit} (${min}–${max}); absent or null: the earlier entry's value holds`);
};

/** A day no later than tomorrow (UTC): a threshold cannot hold from a day that has not come anywhere on Earth. */
const ValidFrom = z.string().transform((value, ctx) => {
  const day = parseDay(value);
  const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
  if (!day || day > tomorrow) {
    ctx.addIssue({
      code: 'custom',
      message: day ? `${value} is in the future` : `"${value}" is not a date (YYYY-MM-DD)`,
      params: { type: 'value_error.date' },
    });
    return z.NEVER;
  }
  return day;
});

const ThresholdValues = {
  critical_power: bounded('critical_power', 'Critical power'),
  w_prime: bounded('w_prime', 'W′, the work capacity above critical power'),
  critical_speed: bounded('critical_speed', 'Critical speed or threshold pace, as a speed'),
  threshold_heart_rate: bounded('threshold_heart_rate', 'Threshold (lactate threshold) heart rate'),
  max_heart_rate: bounded('max_heart_rate', 'Maximum heart rate'),
  resting_heart_rate: bounded('resting_heart_rate', 'Resting heart rate (else the daily `resting_hr` measure of the day or before)'),
};

export const ThresholdEntryIn = z
  .object({
    sport: SportParam.describe('OpenSportTaxonomy: the entry holds for this sport and its sub-sports (`cycling` for every ride)'),
    valid_from: ValidFrom.describe('YYYY-MM-DD: the entry holds from this local day until the next entry of the same sport'),
    origin: z.literal('declared').optional().describe('Only `declared` entries are written (what GET returns may be sent back)'),
    ...ThresholdValues,
  })
  .strict()
  .meta({ id: 'ThresholdEntryIn' });

export const ThresholdsBody = z
  .object({
    thresholds: z
      .array(ThresholdEntryIn)
      .max(1000)
      .superRefine((entries, ctx) => {
        const seen = new Map<string, number>();
        entries.forEach((e, i) => {
          const key = `${e.sport} ${e.valid_from}`;
          if (seen.has(key))
            ctx.addIssue({
              code: 'custom',
              path: [i, 'valid_from'],
              message: `Overlapping periods: entries ${seen.get(key)} and ${i} both hold for ${e.sport} from ${e.valid_from}`,
              params: { type: 'value_error.overlap' },
            });
          seen.set(key, i);
          if (!THRESHOLD_FIELDS.some((f) => e[f] !== undefined && e[f] !== null))
            ctx.addIssue({
              code: 'custom',
              path: [i],
              message: 'An entry needs at least one value',
              params: { type: 'value_error.empty' },
            });
          if (e.threshold_heart_rate && e.max_heart_rate && e.threshold_heart_rate > e.max_heart_rate)
            ctx.addIssue({
              code: 'custom',
              path: [i, 'threshold_heart_rate'],
              message: 'The threshold heart rate is above the maximum heart rate',
              params: { type: 'value_error.range' },
            });
        });
      })
      .describe('The whole declared history: it replaces the stored one'),
  })
  .strict()
  .meta({ id: 'ThresholdsBody' });

const nullableValues = Object.fromEntries(THRESHOLD_FIELDS.map((f) => [f, z.number().nullable()])) as Record<
  (typeof THRESHOLD_FIELDS)[number],
  z.ZodNullable<z.ZodNumber>
>;

export const ThresholdEntryOut = z
  .object({
    sport: z.string(),
    valid_from: z.string(),
    origin: z.enum(['declared', 'test']).describe('`declared` by the athlete, or a lab `test`’s results'),
    test_id: z.string().nullable().describe('The test whose results give the entry; null for declared ones'),
    ...nullableValues,
  })
  .meta({ id: 'ThresholdEntry' });

export const ThresholdsOut = z
  .object({
    thresholds: z.array(ThresholdEntryOut).describe('The declared entries, by sport then day: what PUT replaces'),
    from_tests: z
      .array(ThresholdEntryOut)
      .describe(
        "Entries from lab tests' results (critical_power, w_prime, critical_speed, heart_rate_max; the threshold heart rate from lt2, mlss, second_threshold or vt2), from the test's local day; change them through the test",
      ),
  })
  .meta({ id: 'Thresholds' });

const ZoneDefinitionIn = z
  .object({
    name: z.string().min(1).max(50),
    low: z.number().min(0).max(1000).describe("The zone's lower bound, % of the threshold"),
  })
  .strict();

export const ZoneModelIn = z
  .object({
    sport: SportParam.describe('A root sport (`cycling`, `running`, `swimming`, …): the zones hold for all of its sub-sports'),
    metric: z.enum(ZONE_METRICS),
    zones: z
      .array(ZoneDefinitionIn)
      .min(2)
      .max(20)
      .superRefine((zones, ctx) => {
        if (zones[0]!.low !== 0)
          ctx.addIssue({ code: 'custom', path: [0, 'low'], message: 'The first zone starts at 0', params: { type: 'value_error.zones' } });
        for (let i = 1; i < zones.length; i++)
          if (zones[i]!.low <= zones[i - 1]!.low)
            ctx.addIssue({
              code: 'custom',
              path: [i, 'low'],
              message: 'Lower bounds must increase',
              params: { type: 'value_error.zones' },
            });
      }),
  })
  .strict();

export const ZonesBody = z
  .object({ zones: z.array(ZoneModelIn).max(100).describe('The edited models; a sport and metric left out has its default model') })
  .strict()
  .meta({ id: 'ZonesBody' });

export const ZoneModelOut = z
  .object({
    sport: z.string(),
    metric: z.enum(ZONE_METRICS),
    model: z
      .string()
      .describe('`coggan`, `friel-cycling`, `friel-running`, `goldencheetah-pace-running`, `goldencheetah-pace-swimming` or `custom`'),
    threshold: z.string().describe('What the bounds are percentages of'),
    zones: z.array(z.object({ name: z.string(), low: z.number() })),
  })
  .meta({ id: 'ZoneModel' });

export const ZonesOut = z.object({ zones: z.array(ZoneModelOut) }).meta({ id: 'Zones' });

const UsedThreshold = z
  .object({
    value: z.number(),
    origin: z
      .enum(['declared', 'test', 'modelled', 'daily'])
      .describe(
        "`declared` by the athlete, a lab `test`'s results, `modelled` (the critical-power model fitted to the 90 days before the activity, when no declared or test value held), or the `daily` resting_hr measure",
      ),
    valid_from: z.string().describe('The day the value holds from (for `modelled`, the first day of the fitted window)'),
    test_id: z.string().optional(),
  })
  .meta({ id: 'UsedThreshold' });

export const TrainingStress = z
  .object({
    score: z.number().nullable().describe('The training stress score; null when no method applies'),
    method: z.enum(['power', 'pace', 'heart_rate']).nullable(),
    intensity_factor: z.number().nullable().describe('NP / CP (power), normalised or mean speed / CS (pace); null for heart rate'),
    reason: z.string().nullable().describe('Why there is no score (what is missing); null when there is one'),
    thresholds: z
      .partialRecord(z.enum(THRESHOLD_FIELDS), UsedThreshold)
      .describe("The thresholds of the activity's day the score, zones and W′ balance used, each with where it came from"),
  })
  .meta({ id: 'TrainingStress' });

export const ZoneTime = z
  .object({
    zone: z.number().int(),
    name: z.string(),
    low: z.number(),
    high: z.number().nullable().describe('Null for the last zone'),
    seconds: z.number().int(),
  })
  .meta({ id: 'ZoneTime' });

export const TimeInZones = z
  .partialRecord(z.enum(ZONE_METRICS), z.array(ZoneTime))
  .describe(
    'Per metric the activity records whose threshold is known: its zones (bounds in W, bpm or m/s on the activity’s day) and the seconds in each',
  );

export type ActivityLoadRow = Selectable<ActivityLoadTable>;
type LoadRow = ActivityLoadRow;

export function trainingStressOut(row: LoadRow | undefined): z.output<typeof TrainingStress> | null {
  if (!row) return null;
  return {
    score: row.stress,
    method: row.method as 'power' | 'pace' | 'heart_rate' | null,
    intensity_factor: row.intensity_factor,
    reason: row.reason,
    thresholds: row.thresholds as z.output<typeof TrainingStress>['thresholds'],
  };
}

export function timeInZonesOut(row: LoadRow | undefined): z.output<typeof TimeInZones> | null {
  if (!row) return null;
  const stored = row.time_in_zones as Record<string, { zones: z.output<typeof ZoneTime>[] }>;
  return Object.fromEntries(Object.entries(stored).map(([metric, v]) => [metric, v.zones]));
}
