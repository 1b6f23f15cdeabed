import { z } from 'zod';
import { CHANNELS } from '../../../engine/channels.ts';
import { AWD_METRICS, MEAN_MAX_METRICS } from '../../../engine/curves/activity-curves.ts';
import { allDurations, DEFAULT_DURATIONS, parseDurations } from '../../../engine/curves/durations.ts';
import { parseDay } from '../../../lib/time.ts';
import { queryArray } from './query.ts';
import { onTheWire } from '../openapi-schema.ts';

/**
 * Query parameters of the curve and time-series endpoints (docs/api-clients.md, "Curves and time series"): each a zod
 * schema, so validation, handler types and OpenAPI come from one place.
 */

export const TIME_SERIES_METRICS = ['duration', ...CHANNELS] as const;
export type TimeSeriesMetric = (typeof TIME_SERIES_METRICS)[number];
/** One activity's columns add `w_prime_balance`, derived from power and the thresholds of its day (docs/training-load.md). */
export const ACTIVITY_DATA_METRICS = [...TIME_SERIES_METRICS, 'w_prime_balance'] as const;
export type ActivityDataMetric = (typeof ACTIVITY_DATA_METRICS)[number];
export const DEFAULT_METRICS: TimeSeriesMetric[] = ['duration', 'power', 'speed', 'heart_rate'];

export const MetricsParam = onTheWire(
  queryArray(z.enum(TIME_SERIES_METRICS))
    .optional()
    .describe(
      `Columns after the timestamps, in this order: \`duration\` (each row's length in seconds) and sample channels (${CHANNELS.join(', ')}). Default: duration, power, speed, heart_rate.`,
    ),
  { default: DEFAULT_METRICS },
);

/** `/data`'s metrics: the channels and `w_prime_balance`. */
export const ActivityMetricsParam = onTheWire(
  queryArray(z.enum(ACTIVITY_DATA_METRICS))
    .optional()
    .describe(
      `Columns after the timestamps, in this order: \`duration\` (each row's length in seconds), sample channels (${CHANNELS.join(', ')}) and \`w_prime_balance\` (J: W′ balance by Skiba's integral model under the critical power and W′ of the activity's day; nulls without them or without power). Default: duration, power, speed, heart_rate.`,
    ),
  { default: DEFAULT_METRICS },
);

export const SegmentationOnParam = z
  .enum(['power', 'speed'])
  .optional()
  .describe(
    'Merge consecutive samples into segments whose power (or speed) stays within 5 W (0.05 m/s); each row is a segment, `duration` its length',
  );

export const FormatParam = z.enum(['parquet', 'json']).optional().meta({
  description: '`json` for column-oriented JSON; default `parquet` unless the request sends `Accept: application/json`',
  default: 'parquet',
});

export const MeanMaxMetricParam = z.enum(MEAN_MAX_METRICS);
export const AwdMetricParam = z.enum(AWD_METRICS);

/** `durations`: comma-separated (or repeated) whole seconds, or `all`. */
export const DurationsParam = durationsParam(
  'Comma-separated durations in seconds (e.g. `5,60,300,1200`), or `all`: every second to 180 s, then every 5 s to 600 s, 10 s to 1800 s, 30 s to 3600 s, 60 s beyond. ' +
    `Default: ${DEFAULT_DURATIONS.join(', ')}. Durations longer than the data are left out.`,
  DEFAULT_DURATIONS.join(','),
);

/** A durations parameter with its own description and default (shown as a comma-separated string). */
export function durationsParam(description: string, defaultValue: string) {
  return onTheWire(durationsSchema().meta({ description }), { type: 'string', default: defaultValue });
}

function durationsSchema() {
  return z
    .union([z.string(), z.array(z.string())])
    .transform((value, ctx) => {
      const parsed = parseDurations(value);
      if (!parsed.ok) {
        ctx.addIssue({ code: 'custom', message: parsed.message, params: { type: 'value_error.durations' } });
        return z.NEVER;
      }
      return parsed.durations;
    })
    .optional();
}

/** The durations a curve is sampled at, given the longest the data allows. */
export function durationsFor(asked: Int32Array | 'all' | undefined, longest: number): Int32Array {
  if (asked === 'all') return allDurations(longest);
  const grid = asked ?? Int32Array.from(DEFAULT_DURATIONS);
  return grid.filter((d) => d <= longest);
}

export const DateParam = onTheWire(
  z.string().refine((s) => parseDay(s) !== undefined, { message: 'expected a date YYYY-MM-DD' }),
  { type: 'string', format: 'date' },
);

/**
 * The largest fatigue state `after` may name, per metric: far above any real ride (100,000 kJ is
 * 28 hours at 1,000 W, or four days at 300 W; 10,000 km is twice the longest one-file rides), and
 * what keeps a client's number from reaching the engine as 1e20 or Infinity.
 */
export const AFTER_MAX = { power: 100_000, speed: 10_000_000 } as const satisfies Record<'power' | 'speed', number>;
const AFTER_UNIT = { power: 'kJ', speed: 'm' } as const;

/** The 422 item of `after` values beyond `metric`'s maximum (AFTER_MAX), or undefined. */
export function afterBeyondMax(after: number[], metric: 'power' | 'speed') {
  const beyond = after.find((x) => x > AFTER_MAX[metric]);
  if (beyond === undefined) return undefined;
  return {
    loc: ['query', 'after'],
    msg: `after ${beyond} ${AFTER_UNIT[metric]} is beyond the largest fatigue state of ${metric}, ${AFTER_MAX[metric]} ${AFTER_UNIT[metric]}`,
    type: 'less_than_equal',
  };
}

/** `after`: at most 5 non-negative numbers (kJ for power, metres for speed), none beyond AFTER_MAX. */
export const AfterParam = queryArray(
  z
    .string()
    .regex(/^\d+(\.\d+)?$/, 'expected a non-negative number (kJ for power, metres for speed)')
    .transform(Number)
    .refine((x) => x <= Math.max(AFTER_MAX.power, AFTER_MAX.speed), {
      message: `expected at most ${AFTER_MAX.power} kJ for power, ${AFTER_MAX.speed} m for speed`,
      params: { type: 'less_than_equal' },
    }),
  { count: 5, message: 'at most 5 after values are allowed' },
)
  .optional()
  .describe(
    'Fatigue states: accumulated work in kJ (metric=power, at most ' +
      `${AFTER_MAX.power.toLocaleString('en')} kJ) or distance in metres (metric=speed, at most ${AFTER_MAX.speed.toLocaleString('en')} m); ` +
      'a larger value is a 422 naming `after`. At most 5 values; repeat the key or separate with commas.',
  );
