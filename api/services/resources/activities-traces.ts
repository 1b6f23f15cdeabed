import { z } from 'zod';
import type { ActivityRow, StoredLap, TraceRow } from '../../../db/database.ts';
import type { ActivitySummaryRow } from '../../../db/activities.ts';
import { TimeInZones, timeInZonesOut, TrainingStress, trainingStressOut, type ActivityLoadRow } from '../training-load/model.ts';
import { PLAUSIBLE_RANGES } from '../../../engine/ingest/plausible.ts';
import { DEVICE_SUMMARY_FIELDS } from '../../../engine/ingest/recording.ts';
import { CHANNELS } from '../../../engine/channels.ts';
import { formatDuration, formatInstant, formatLocal } from '../../../lib/time.ts';
import type { TestMatch } from '../../../db/tests.ts';
import type { TestRow } from '../../../db/database.ts';
import { TestSummary, testSummaryOut } from './tests.ts';
import { DeviceChecksOut, deviceChecksOut } from './device-checks.ts';

/**
 * The two resources that embed each other, as clients see them (Activity, ActivitySummarySummary (named ActivityStatistics here),
 * Lap, Trace; docs/api-clients.md, "Activities" and "Traces"): an activity lists the traces within it, and a trace names its activity and
 * lap. Their zod schemas refer to each other (through getters), so they and their `…Out` builders live in
 * this one module; the request-side models stay in api/services/activities/ and api/services/traces/.
 */

const n = z.number();
const Extremes = { max: n.optional(), mean: n.optional() };
const Course = { start: n.optional(), end: n.optional(), min: n.optional(), max: n.optional(), mean: n.optional() };

const SummaryMembers = {
  altitude: z
    .object({ gain: n.optional(), loss: n.optional(), max: n.optional(), mean: n.optional(), min: n.optional() })
    .optional()
    .describe(
      "m; `gain`/`loss` are the device's own totals (FIT session or lap total_ascent/total_descent) when the file has them, else counted with a 3 m hysteresis",
    ),
  cadence: z.object(Extremes).optional().describe('rpm; `mean` over the seconds with cadence > 0 (coasting left out, as devices show it)'),
  core_temperature: z.object(Course).optional().describe('°C'),
  distance: z
    .object({ sum: n.optional() })
    .optional()
    .describe('m, from the activity start (the cumulative distance channel, or Σ speed × 1 s)'),
  heart_rate: z.object(Course).optional().describe('bpm'),
  power: z
    .object({
      ...Extremes,
      normalized: n
        .optional()
        .describe(
          'Normalized power (W): the fourth root of the mean of the fourth powers of the 30 s rolling mean, over the seconds the timer ran (pauses skipped, so a rolling window spans a pause; coasting zeros kept); absent under 30 s of power',
        ),
      work: n.optional().describe('Work (kJ): Σ power × 1 s over the 1 Hz grid'),
    })
    .optional()
    .describe('W; `mean` over the seconds recorded while the timer ran, zeros included'),
  smo2: z.object(Course).optional().describe('%'),
  speed: z
    .object(Extremes)
    .optional()
    .describe(
      'm/s; `mean` = distance / moving time (as Strava and GoldenCheetah; devices divide by timer time); under 5 s of moving time (a rest lap), the mean of the recorded speeds',
    ),
  temperature: z.object(Course).optional().describe('°C'),
};

export const ActivityStatistics = z
  .object(SummaryMembers)
  .meta({ id: 'ActivityStatistics', description: 'Statistics of each channel the activity has; means are over recorded samples.' });

export const Lap = z
  .object({
    start: z.string().describe('UTC instant'),
    end: z.string().describe('UTC instant'),
    start_local: z.string().describe('Local wall-clock time, no offset'),
    end_local: z.string(),
    duration: z.string().describe('ISO 8601 duration'),
    timer_duration: z
      .string()
      .optional()
      .describe('ISO 8601: the part of the lap the timer ran (absent for activities of ingest version 1)'),
    moving_duration: z.string().optional().describe('ISO 8601: of the timer time, the seconds in motion'),
    ...SummaryMembers,
  })
  .meta({ id: 'Lap' });

const ActivityFields = {
  id: z.string(),
  sport: z.string().describe('OpenSportTaxonomy, e.g. cycling.road, running+stationary'),
  start: z.string().describe('UTC instant, `Z`'),
  end: z.string(),
  start_local: z.string().describe('Naive local wall-clock time from the recorded UTC offset'),
  end_local: z.string(),
  duration: z.string().describe('ISO 8601 duration (end − start)'),
  metrics: z.array(z.string()).describe('The sample channels the activity has (Metric values)'),
  source_id: z.string(),
  tags: z.array(z.string()),
  name: z
    .string()
    .nullable()
    .describe(
      "The name the athlete gave the activity on a platform (a Strava export's activities.csv, through the history import): at most 255 characters, no control characters; null otherwise",
    ),
  description: z
    .string()
    .nullable()
    .describe('Its description there (line breaks kept, other control characters removed): at most 10,000 characters; null otherwise'),
  summary: ActivityStatistics.nullable(),
  laps: z.array(Lap).nullable().describe('Null in lists; read one activity for its laps'),
  training_stress: TrainingStress.nullable().describe(
    "The activity's training stress under the thresholds of its day (docs/training-load.md); null while it is being computed (after an upload or a threshold change) and inside a trace's or a test's `activity`",
  ),
  get traces() {
    return z
      .array(TraceDetails)
      .nullable()
      .describe("The traces whose timestamp lies within the activity (oldest first); null inside a trace's `activity`");
  },
  app_metadata: z
    .record(z.string(), z.unknown())
    .nullable()
    .describe("The calling application's own metadata (null for first-party credentials)"),
};

export const ActivitySummary = z.object(ActivityFields).meta({ id: 'ActivitySummary' });
export type ActivitySummaryOut = z.output<typeof ActivitySummary>;

/** What counts as implausible for a channel, e.g. `Samples below 0 W or above 3000 W`. */
function implausibleWhen(channel: (typeof CHANNELS)[number]): string {
  const { min, max, unit } = PLAUSIBLE_RANGES[channel];
  return Number.isFinite(max) ? `Samples below ${min} ${unit} or above ${max} ${unit}` : `Samples below ${min} ${unit} (no ceiling)`;
}

export const ImplausibleSamples = z
  .object(Object.fromEntries(CHANNELS.map((c) => [c, z.number().int().positive().optional().describe(implausibleWhen(c))])))
  .meta({
    id: 'ImplausibleSamples',
    description:
      "Per channel, how many of the file's samples were beyond the channel's plausible range (limits included) and were stored as missing, " +
      'before the 1 Hz resampling: the sample file has no value there, and the summary, laps and curves are computed without them. ' +
      'Only channels with at least one; `{}` when none.',
  });

const DEVICE_SUMMARY_UNITS: Record<(typeof DEVICE_SUMMARY_FIELDS)[number], string> = {
  total_elapsed_time: 's',
  total_timer_time: 's',
  total_distance: 'm',
  avg_speed: 'm/s (enhanced_avg_speed when the file has it)',
  max_speed: 'm/s (enhanced_max_speed when the file has it)',
  avg_power: 'W',
  max_power: 'W',
  normalized_power: 'W',
  total_work: 'J',
  avg_heart_rate: 'bpm',
  max_heart_rate: 'bpm',
  avg_cadence: 'rpm (with avg_fractional_cadence)',
  max_cadence: 'rpm',
  total_ascent: 'm',
  total_descent: 'm',
};

export const DeviceSummaryOut = z
  .object(Object.fromEntries(DEVICE_SUMMARY_FIELDS.map((f) => [f, n.optional().describe(DEVICE_SUMMARY_UNITS[f])])))
  .meta({
    id: 'DeviceSummary',
    description:
      "The FIT session message's own values, by their FIT profile names, as recorded (not checked or corrected): only the fields the file has.",
  });

export const DroppedRecordsOut = z
  .object({
    duplicate_timestamp: z
      .number()
      .int()
      .positive()
      .optional()
      .describe('Records with the timestamp of another record (the last in the file is kept)'),
    outside_session: z
      .number()
      .int()
      .positive()
      .optional()
      .describe(
        "Records whose timestamp lies outside every session's span (a device clock that jumped, records long after the end); counted on the session before them",
      ),
    no_time: z
      .number()
      .int()
      .positive()
      .optional()
      .describe('GPX and TCX points with values but no valid time (they cannot be placed in the activity)'),
  })
  .meta({
    id: 'DroppedRecords',
    description: 'Per reason, the records of the file left out of the activity; only reasons with at least one.',
  });

export function lapOut(lap: StoredLap, offset: number) {
  const { start, end, timer_seconds, moving_seconds, ...stats } = lap;
  return {
    start: formatInstant(start),
    end: formatInstant(end),
    start_local: formatLocal(start, offset),
    end_local: formatLocal(end, offset),
    duration: formatDuration((end - start) / 1000),
    ...(typeof timer_seconds === 'number' ? { timer_duration: formatDuration(timer_seconds) } : {}),
    ...(typeof moving_seconds === 'number' ? { moving_duration: formatDuration(moving_seconds) } : {}),
    ...stats,
  };
}

/** `traces`: the traces within the activity (api/services/traces/links.ts); null where they are not read (inside a trace's `activity`). */
export function activitySummaryOut(
  row: ActivitySummaryRow & { laps?: StoredLap[] | null },
  appMetadata: Record<string, unknown> | null,
  opts: { laps?: boolean; traces?: TraceDetailsOut[] | null; load?: ActivityLoadRow | undefined } = {},
): ActivitySummaryOut {
  const offset = row.utc_offset_seconds;
  return {
    id: row.id,
    sport: row.sport,
    start: formatInstant(row.start_time),
    end: formatInstant(row.end_time),
    start_local: formatLocal(row.start_time, offset),
    end_local: formatLocal(row.end_time, offset),
    duration: formatDuration((row.end_time.getTime() - row.start_time.getTime()) / 1000),
    metrics: row.metrics,
    source_id: row.source_id,
    tags: row.tags,
    name: row.name ?? null,
    description: row.description ?? null,
    summary: row.summary,
    laps: opts.laps && row.laps ? row.laps.map((lap) => lapOut(lap, offset)) : null,
    training_stress: trainingStressOut(opts.load),
    traces: opts.traces ?? null,
    app_metadata: appMetadata,
  };
}

export function activityDetailsOut(
  row: ActivityRow,
  appMetadata: Record<string, unknown> | null,
  traces: TraceDetailsOut[] | null,
  load?: ActivityLoadRow,
): ActivityDetailsOut {
  return {
    ...activitySummaryOut(row, appMetadata, { laps: true, traces, load }),
    time_in_zones: timeInZonesOut(load),
    w_prime_balance_min: load?.w_prime_balance_min ?? null,
    distance: row.distance,
    devices: row.devices,
    implausible_samples: row.implausible_samples,
    timer_duration: row.timer_seconds === null ? null : formatDuration(row.timer_seconds),
    moving_duration: row.moving_seconds === null ? null : formatDuration(row.moving_seconds),
    device_summary: row.device_summary,
    device_checks: deviceChecksOut(row.device_checks),
    dropped_records: row.dropped_records,
    ingest_version: row.ingest_version,
  };
}

const TraceDetailsFields = {
  id: z.string(),
  timestamp: z.string().describe('UTC instant, `Z`'),
  timestamp_local: z.string().describe('Naive local time on the clock of the offset the timestamp was written with'),
  test_id: z.string().nullable(),
  lactate: z.number().nullable(),
  rpe: z.number().int().nullable(),
  notes: z.string().nullable(),
  power: z.number().int().nullable(),
  speed: z.number().nullable(),
  heart_rate: z.number().int().nullable(),
  vo2: z.number().nullable(),
  tags: z.array(z.string()),
  sport: z.string().nullable(),
  // Getters: ActivitySummary and TraceDetails refer to each other (an activity lists its traces).
  get lap() {
    return Lap.nullable().describe('The lap of `activity` containing the timestamp');
  },
  get activity() {
    return ActivitySummary.nullable().describe(
      'The activity whose span [start, end] contains the timestamp (the one that started last when activities overlap); its `traces` and `laps` are null here',
    );
  },
  test: TestSummary.nullable(),
  test_match: z
    .enum(['explicit', 'window'])
    .nullable()
    .describe(
      "How the trace belongs to `test`: `explicit` when its `test_id` names the test, `window` when it names none and its timestamp lies in the test's [start, end] (the test that started last, when windows overlap); null when it belongs to no test",
    ),
  app_metadata: z
    .record(z.string(), z.unknown())
    .nullable()
    .describe("The calling application's own metadata (null for first-party credentials)"),
};

export const TraceDetails = z.object(TraceDetailsFields).meta({ id: 'TraceDetails' });

export type TraceDetailsOut = z.output<typeof TraceDetails>;

// After TraceDetails: the spread reads ActivityFields' `traces` getter at once.
export const ActivityDetails = z
  .object({
    ...ActivityFields,
    distance: z.number().nullable().describe('m'),
    devices: z.array(z.string()),
    implausible_samples: ImplausibleSamples.nullable().describe(
      'Null for activities stored before samples were checked (they keep whatever the file had, until `npm run cli -- reprocess` re-derives them)',
    ),
    timer_duration: z
      .string()
      .nullable()
      .describe(
        'ISO 8601: the time the timer ran, from start to end with the pauses the file records (FIT timer stop … start events; for files without them, gaps over 90 s) left out. Null for ingest version 1',
      ),
    moving_duration: z
      .string()
      .nullable()
      .describe(
        'ISO 8601: of the timer time, the seconds in motion (speed ≥ 0.5 m/s, power > 0 or cadence > 0; without those channels, every recorded second; a pool swim, the seconds of its active lengths). Null for ingest version 1',
      ),
    device_summary: DeviceSummaryOut.nullable().describe(
      "The file's own session values as the device recorded them (null for CSV files and ingest version 1)",
    ),
    device_checks: DeviceChecksOut.nullable().describe(
      'The data checks: each value of `device_summary` beside ours, and where they differ the rule that explains it (null without a device summary, and for activities stored before 2026-12: `npm run cli -- reprocess --all` makes them)',
    ),
    dropped_records: DroppedRecordsOut.nullable().describe(
      'Records of the file left out of the activity, per reason; `{}` when none; null for ingest version 1',
    ),
    time_in_zones: TimeInZones.nullable().describe(
      'Per metric the activity records whose threshold is known on its day, its zones and the seconds in each (`{}` when none is known); null while being computed',
    ),
    w_prime_balance_min: z
      .number()
      .nullable()
      .describe(
        "J: the lowest W′ balance of the ride (Skiba's integral model, τ as GoldenCheetah sets it; the series is `/data`'s `w_prime_balance`); null without power, critical power or W′",
      ),
    ingest_version: z
      .number()
      .int()
      .describe(
        'The version of the ingest rules that made the samples, summary and curves (1: before 2026-11, short gaps held ≤ 5 s, means over recorded seconds; 2: pauses from the file, gaps ≤ 90 s filled, field conventions). `npm run cli -- reprocess` re-derives older ones from their original files',
      ),
  })
  .meta({ id: 'ActivityDetails' });
export type ActivityDetailsOut = z.output<typeof ActivityDetails>;

export interface TraceLinks {
  /** The containing activity, the caller's metadata on it, and the trace's lap of it (db/traces.ts). */
  activity?: { row: ActivitySummaryRow; appMetadata: Record<string, unknown> | null; lap: StoredLap | null };
  appMetadata: Record<string, unknown> | null;
  /** The test the trace belongs to, how, and the caller's metadata on it (db/tests.ts). */
  test?: { row: TestRow; match: TestMatch; appMetadata: Record<string, unknown> | null };
}

export function traceOut(row: TraceRow, links: TraceLinks): TraceDetailsOut {
  const activity = links.activity;
  return {
    id: row.id,
    timestamp: formatInstant(row.time),
    timestamp_local: formatLocal(row.time, row.utc_offset_seconds),
    test_id: row.test_id,
    lactate: row.lactate,
    rpe: row.rpe,
    notes: row.notes,
    power: row.power,
    speed: row.speed,
    heart_rate: row.heart_rate,
    vo2: row.vo2,
    tags: row.tags,
    sport: row.sport,
    lap: activity?.lap ? lapOut(activity.lap, activity.row.utc_offset_seconds) : null,
    activity: activity ? activitySummaryOut(activity.row, activity.appMetadata) : null,
    test: links.test ? testSummaryOut(links.test.row, links.test.appMetadata) : null,
    test_match: links.test?.match ?? null,
    app_metadata: links.appMetadata,
  };
}
