import { z } from 'zod';
import type { ActivityRow, Source, StoredLap } from '../../db/database.ts';
import type { ActivitySummaryRow } from '../../db/activities.ts';
import { formatDuration, formatInstant, formatLocal } from '../../lib/time.ts';
import { TraceDetails, type TraceDetailsOut } from '../traces/model.ts';

/** The activity resources as clients see them (SPEC Activity, ActivitySummarySummary, Lap; API.md Upload). */

const n = z.number();
const Extremes = { max: n.optional(), mean: n.optional() };
const Course = { start: n.optional(), end: n.optional(), min: n.optional(), max: n.optional(), mean: n.optional() };

const SummaryMembers = {
  altitude: z.object({ gain: n.optional(), loss: n.optional(), max: n.optional(), mean: n.optional(), min: n.optional() }).optional().describe('m'),
  cadence: z.object(Extremes).optional().describe('rpm'),
  core_temperature: z.object(Course).optional().describe('°C'),
  distance: z.object({ sum: n.optional() }).optional().describe('m'),
  heart_rate: z.object(Course).optional().describe('bpm'),
  power: z.object(Extremes).optional().describe('W'),
  smo2: z.object(Course).optional().describe('%'),
  speed: z.object(Extremes).optional().describe('m/s'),
  temperature: z.object(Course).optional().describe('°C'),
};

export const ActivitySummarySummary = z
  .object(SummaryMembers)
  .meta({ id: 'ActivitySummarySummary', description: 'Statistics of each channel the activity has; means are over recorded samples.' });

export const Lap = z
  .object({
    start: z.string().describe('UTC instant'),
    end: z.string().describe('UTC instant'),
    start_local: z.string().describe('Local wall-clock time, no offset'),
    end_local: z.string(),
    duration: z.string().describe('ISO 8601 duration'),
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
  summary: ActivitySummarySummary.nullable(),
  laps: z.array(Lap).nullable().describe('Null in lists; read one activity for its laps'),
  get traces() {
    return z.array(TraceDetails).nullable().describe('The traces whose timestamp lies within the activity (oldest first); null inside a trace\'s `activity`');
  },
  app_metadata: z.record(z.string(), z.unknown()).nullable().describe("The calling application's own metadata (null for first-party credentials)"),
};

export const ActivitySummary = z.object(ActivityFields).meta({ id: 'ActivitySummary' });
export const ActivityDetails = z
  .object({ ...ActivityFields, distance: z.number().nullable().describe('m'), devices: z.array(z.string()) })
  .meta({ id: 'ActivityDetails' });
export type ActivitySummaryOut = z.output<typeof ActivitySummary>;
export type ActivityDetailsOut = z.output<typeof ActivityDetails>;


export function lapOut(lap: StoredLap, offset: number) {
  const { start, end, ...stats } = lap;
  return {
    start: formatInstant(start),
    end: formatInstant(end),
    start_local: formatLocal(start, offset),
    end_local: formatLocal(end, offset),
    duration: formatDuration((end - start) / 1000),
    ...stats,
  };
}

/** `traces`: the traces within the activity (api/traces/links.ts); null where they are not read (inside a trace's `activity`). */
export function activitySummaryOut(
  row: ActivitySummaryRow & { laps?: StoredLap[] | null },
  appMetadata: Record<string, unknown> | null,
  opts: { laps?: boolean; traces?: TraceDetailsOut[] | null } = {},
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
    summary: row.summary,
    laps: opts.laps && row.laps ? row.laps.map((lap) => lapOut(lap, offset)) : null,
    traces: opts.traces ?? null,
    app_metadata: appMetadata,
  };
}

export function activityDetailsOut(row: ActivityRow, appMetadata: Record<string, unknown> | null, traces: TraceDetailsOut[] | null): ActivityDetailsOut {
  return { ...activitySummaryOut(row, appMetadata, { laps: true, traces }), distance: row.distance, devices: row.devices };
}

export const SourceError = z.object({ code: z.string(), message: z.string() }).meta({ id: 'SourceError' });

export const SourceOut = z
  .object({
    id: z.string(),
    type: z.enum(['fit', 'csv']),
    origin: z.enum(['manual_upload', 'backfill']),
    filename: z.string(),
    status: z.enum(['processing', 'processed', 'failed']),
    error: SourceError.nullable().describe('Why the file could not be read (`invalid_fit`, `empty_file`, `csv_missing_timestamp`, …)'),
    activity_ids: z.array(z.string()),
    created_at: z.string(),
  })
  .meta({ id: 'Source' });

export function sourceOut(source: Source, activityIds: string[]): z.output<typeof SourceOut> {
  return {
    id: source.id,
    type: source.type,
    origin: source.origin,
    filename: source.filename,
    status: source.status,
    error: source.status === 'failed' ? { code: source.error_code ?? 'failed', message: source.error_message ?? '' } : null,
    activity_ids: activityIds,
    created_at: formatInstant(source.created_at),
  };
}
