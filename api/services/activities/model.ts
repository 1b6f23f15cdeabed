import { z } from 'zod';
import type { Source } from '../../../db/database.ts';
import { formatInstant } from '../../../lib/time.ts';

/** Sources as clients see them (docs/api-clients.md, "Activities": Upload). Activities themselves: api/services/resources/activities-traces.ts. */

export const SourceError = z.object({ code: z.string(), message: z.string() }).meta({ id: 'SourceError' });

export const SourceOut = z
  .object({
    id: z.string(),
    type: z.enum(['fit', 'csv', 'gpx', 'tcx']),
    origin: z.enum(['manual_upload', 'backfill']),
    filename: z.string(),
    status: z.enum(['processing', 'processed', 'failed']),
    error: SourceError.nullable().describe(
      'Why the file could not be read (`invalid_fit`, `empty_file`, `csv_missing_timestamp`, `invalid_xml`, `no_timestamps`, …; `activity_too_long` past 8 days, `too_many_samples` past 2,764,800 records, `ingest_timeout` past INGEST_TIMEOUT_MS)',
    ),
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
