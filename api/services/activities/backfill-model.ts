import { z } from 'zod';
import type { Backfill } from '../../../db/database.ts';
import { formatInstant } from '../../../lib/time.ts';

export const BackfillOut = z
  .object({
    id: z.string(),
    filename: z.string(),
    status: z
      .enum(['scanning', 'loading', 'completed', 'failed'])
      .describe('scanning (reading the archive) → loading (newest first) → completed; failed when the archive cannot be read'),
    files_total: z.number().int().describe('Activity files found (known after scanning)'),
    files_skipped: z.number().int().describe('Entries left out: other formats, unsafe names, too large'),
    error: z.string().nullable(),
    created_at: z.string(),
    completed_at: z.string().nullable(),
  })
  .meta({ id: 'Backfill' });

export function backfillOut(b: Backfill): z.output<typeof BackfillOut> {
  return {
    id: b.id,
    filename: b.filename,
    status: b.status,
    files_total: b.files_total,
    files_skipped: b.files_skipped,
    error: b.error_message,
    created_at: formatInstant(b.created_at),
    completed_at: b.completed_at ? formatInstant(b.completed_at) : null,
  };
}
