import { z } from 'zod';
import type { StoredLap, TraceRow } from '../../db/database.ts';
import type { ActivitySummaryRow } from '../../db/activities.ts';
import type { TraceFields } from '../../db/traces.ts';
import { formatInstant, formatLocal, parseInstant } from '../../lib/time.ts';
import { SportParam } from '../activities/query.ts';
import { ActivitySummary, Lap, activitySummaryOut, lapOut } from '../activities/model.ts';

/** The trace resources as clients see them (SPEC Trace, TraceCreateOrUpdate; API.md Traces). */

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
    timestamp: TraceTimestamp.meta({ description: 'ISO 8601 instant with a UTC offset (`Z` or `±hh:mm`); a naive date-time is 422', example: '2026-05-18T17:32:00+02:00' }),
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

export const TestSummary = z
  .object({
    id: z.string(),
    sport: z.string(),
    start: z.string(),
    start_local: z.string(),
    end: z.string().nullable(),
    end_local: z.string().nullable(),
    tags: z.array(z.string()),
    title: z.string().nullable(),
    created_by: z.string().nullable(),
    app_metadata: z.record(z.string(), z.unknown()).nullable(),
    results: z.record(z.string(), z.unknown()).nullable(),
  })
  .meta({ id: 'TestSummary', description: 'A test session. This service stores no tests yet, so `test` is always null.' });

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
  // Getters: activities/model.ts and this module refer to each other (an activity lists its traces).
  get lap() {
    return Lap.nullable().describe('The lap of `activity` containing the timestamp');
  },
  get activity() {
    return ActivitySummary.nullable().describe(
      'The activity whose span [start, end] contains the timestamp (the one that started last when activities overlap); its `traces` and `laps` are null here',
    );
  },
  test: TestSummary.nullable(),
  test_match: z.enum(['explicit', 'window']).nullable().describe('`explicit` when `test_id` is set; otherwise null (`window` would match a stored test by time; none are stored)'),
  app_metadata: z.record(z.string(), z.unknown()).nullable().describe("The calling application's own metadata (null for first-party credentials)"),
};

export const TraceDetails = z.object(TraceDetailsFields).meta({ id: 'TraceDetails' });

export type TraceDetailsOut = z.output<typeof TraceDetails>;

export interface TraceLinks {
  /** The containing activity, the caller's metadata on it, and the trace's lap of it (db/traces.ts). */
  activity?: { row: ActivitySummaryRow; appMetadata: Record<string, unknown> | null; lap: StoredLap | null };
  appMetadata: Record<string, unknown> | null;
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
    test: null,
    test_match: row.test_id ? 'explicit' : null,
    app_metadata: links.appMetadata,
  };
}
