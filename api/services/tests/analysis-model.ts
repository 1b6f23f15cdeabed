import { z } from 'zod';
import { queryBoolean } from '../activities/query.ts';
import { onTheWire } from '../openapi-schema.ts';
import { Marker } from '../resources/tests.ts';

/**
 * What a test's analysis takes and answers (GET /api/v1/tests/{id}/analysis and its accept): the
 * options of the lactate methods and of the efforts, the analysis itself, and the body that keeps
 * chosen values in the test's results. docs/api-clients.md, "Tests", says what each method does.
 */

export const LACTATE_FITS = ['3rd degree polynomial', '4th degree polynomial', 'B-spline'] as const;
export const LACTATE_METHODS = [
  'Log-log',
  'OBLA 2.0',
  'OBLA 2.5',
  'OBLA 3.0',
  'OBLA 3.5',
  'OBLA 4.0',
  'Bsln + 0.5',
  'Bsln + 1.0',
  'Bsln + 1.5',
  'Dmax',
  'ModDmax',
  'Exp-Dmax',
  'Log-Poly-ModDmax',
  'Log-Exp-ModDmax',
  'LTP1',
  'LTP2',
  'LTratio',
] as const;
export const CRITICAL_MODELS = ['three-parameter', 'hyperbolic', 'linear-work-time', 'linear-inverse-time'] as const;

/** Effort durations a client may name: whole seconds in this range, at most this many. */
export const EFFORT_DURATION_RANGE = { min: 10, max: 7200, count: 20 } as const;

const EffortDurations = onTheWire(
  z
    .string()
    .max(200)
    .transform((text, ctx) => {
      const items = text.split(',').map((s) => s.trim());
      const { min, max, count } = EFFORT_DURATION_RANGE;
      const bad = items.find((s) => !/^\d{1,5}$/.test(s) || Number(s) < min || Number(s) > max);
      if (items.length > count || bad !== undefined) {
        ctx.addIssue({
          code: 'custom',
          message:
            items.length > count
              ? `at most ${count} durations`
              : `"${bad!.slice(0, 20)}" is not a whole number of seconds from ${min} to ${max}`,
          params: { type: 'value_error.durations' },
        });
        return z.NEVER;
      }
      return [...new Set(items.map(Number))].sort((a, b) => a - b);
    }),
  { type: 'string', example: '180,420,720' },
);

export const AnalysisQuery = z.object({
  fit: z
    .enum(LACTATE_FITS)
    .default('3rd degree polynomial')
    .describe('The fit of Log-log, OBLA, Bsln+ and LTP (lactater `fit`); Dmax methods and LTratio keep their own'),
  include_baseline: queryBoolean(false).describe(
    'Add the resting sample (a first step at intensity 0) to the fit (lactater `include_baseline`)',
  ),
  loglog_restrainer: onTheWire(
    z
      .string()
      .regex(/^(0(\.\d{1,6})?|1(\.0{1,6})?)$/, 'expected a decimal from 0 to 1')
      .transform(Number)
      .default(1),
    { type: 'number', minimum: 0, maximum: 1, default: 1 },
  ).describe('The leading fraction of the interpolated data the Log-log method uses (lactater `loglog_restrainer`)'),
  heart_rate: z
    .enum(['interpolate', 'regression'])
    .default('interpolate')
    .describe(
      "`interpolate`: between the steps that have one, never extrapolated; `regression`: lactater's straight line over the steps, whole bpm",
    ),
  durations: EffortDurations.optional().describe(
    `Effort durations (s, ${EFFORT_DURATION_RANGE.min}–${EFFORT_DURATION_RANGE.max}, at most ${EFFORT_DURATION_RANGE.count}): the efforts are the test's best mean at each; default: its laps that are maximal efforts`,
  ),
});
export type AnalysisQuery = z.output<typeof AnalysisQuery>;

const nullableNumber = z.number().nullable();

export const TestAnalysis = z
  .object({
    test_id: z.string(),
    metric: z.enum(['power', 'speed']).describe('The intensity of the steps and efforts: power (W) or speed (m/s)'),
    options: z.object({
      fit: z.enum(LACTATE_FITS),
      include_baseline: z.boolean(),
      loglog_restrainer: z.number(),
      heart_rate: z.enum(['interpolate', 'regression']),
    }),
    steps: z
      .array(
        z.object({
          trace_id: z.string(),
          timestamp: z.string(),
          intensity: z.number(),
          lactate: z.number(),
          heart_rate: nullableNumber,
          resting: z.boolean().describe('The resting sample: a first step at intensity 0'),
        }),
      )
      .describe('The steps the lactate methods used, in intensity order'),
    ignored: z
      .array(z.object({ trace_id: z.string(), reason: z.string() }))
      .describe("The test's lactate traces that are not steps, and why"),
    lactate: z.array(
      z.object({
        category: z.enum(['Log-log', 'OBLA', 'Bsln+', 'Dmax', 'LTP', 'LTratio']),
        method: z.enum(LACTATE_METHODS),
        fitting: z.string(),
        marker: Marker.nullable().describe('The threshold: the intensity under `power` or `speed`, its lactate and heart rate'),
        reason: z.string().nullable().describe('Why the method does not apply (then `marker` is null)'),
      }),
    ),
    efforts: z
      .array(z.object({ activity_id: z.string(), start: z.string(), duration: z.number().int(), value: z.number() }))
      .describe('The maximal efforts the critical-power models were fitted to: duration (s) and mean power (W) or speed (m/s)'),
    critical: z.array(
      z.object({
        model: z.enum(CRITICAL_MODELS),
        efforts: z.number().int(),
        critical_intensity: nullableNumber.describe('Critical power (W) or critical speed (m/s)'),
        critical_intensity_se: nullableNumber,
        work_capacity: nullableNumber.describe("W' (J) or D' (m)"),
        work_capacity_se: nullableNumber,
        max_intensity: nullableNumber.describe('Pmax (W) or Smax (m/s): the three-parameter model only'),
        max_intensity_se: nullableNumber,
        r2: nullableNumber,
        see: nullableNumber.describe("The residual standard error, in the model's response unit"),
        reason: z.string().nullable(),
      }),
    ),
    maxima: z.object({
      heart_rate_max: z.object({ value: nullableNumber, reason: z.string().nullable() }),
      vo2max: z.object({ value: nullableNumber, reason: z.string().nullable() }),
    }),
  })
  .meta({ id: 'TestAnalysis', description: "Every established method that applies to the test's traces and recordings" });
export type TestAnalysis = z.output<typeof TestAnalysis>;

export const MARKER_MEMBERS = ['lt1', 'lt2', 'vt1', 'vt2', 'mlss', 'fatmax', 'first_threshold', 'second_threshold'] as const;
export const CRITICAL_MEMBERS = { power: ['critical_power', 'w_prime'], speed: ['critical_speed', 'd_prime'] } as const;
export const MAXIMA_MEMBERS = ['heart_rate_max', 'vo2max', 'vo2peak'] as const;

export const AnalysisAccept = z
  .object({
    ...Object.fromEntries(MARKER_MEMBERS.map((m) => [m, z.enum(LACTATE_METHODS).optional()])),
    ...Object.fromEntries([...CRITICAL_MEMBERS.power, ...CRITICAL_MEMBERS.speed].map((m) => [m, z.enum(CRITICAL_MODELS).optional()])),
    ...Object.fromEntries(MAXIMA_MEMBERS.map((m) => [m, z.literal('highest').optional()])),
  } as Record<(typeof MARKER_MEMBERS)[number], z.ZodOptional<z.ZodEnum<{ [K in (typeof LACTATE_METHODS)[number]]: K }>>> &
    Record<(typeof CRITICAL_MEMBERS)['power' | 'speed'][number], z.ZodOptional<z.ZodEnum<{ [K in (typeof CRITICAL_MODELS)[number]]: K }>>> &
    Record<(typeof MAXIMA_MEMBERS)[number], z.ZodOptional<z.ZodLiteral<'highest'>>>)
  .strict()
  .refine((body) => Object.values(body).some((v) => v !== undefined), { message: 'choose at least one result' })
  .meta({
    id: 'TestAnalysisAccept',
    description:
      'Per result member, the method whose value to keep: a lactate method for a Marker member, a model for critical_power and w_prime (power) or ' +
      'critical_speed and d_prime (speed), `highest` for heart_rate_max, vo2max and vo2peak',
  });
export type AnalysisAccept = z.output<typeof AnalysisAccept>;
