import type { Backfill, Db } from './database.ts';
import { backfillCounts, backfillLoadedUntil, failedBackfillSources, findBackfill, type BackfillCounts } from './backfills.ts';

export interface FailedFile {
  id: string;
  filename: string;
  code: string;
  message: string;
}

export interface BackfillProgress {
  backfill: Backfill;
  /** Naive local date-time of the oldest activity loaded with nothing newer still waiting (null until the first file is done). */
  loaded_until: string | null;
  /** Files that failed since the previous look, in the order they failed. */
  failed: FailedFile[];
  /** Present when asked for (`counts: true`). */
  counts?: BackfillCounts;
  /** Nothing more will change: completed, or the history could not be read. */
  done: boolean;
}

/**
 * Follow one backfill: each call reads where it stands and the files that failed since the last
 * call. What both the API's backfill-status stream and `cli backfill --wait` report.
 */
export function watchBackfill(db: Db, id: string, opts: { counts?: boolean } = {}) {
  const reported: string[] = [];
  return async function look(): Promise<BackfillProgress> {
    // The status first: once it says completed, the failures and counts read after it are final.
    const backfill = await findBackfill(db, id);
    if (!backfill) throw new Error(`backfill ${id} not found`);
    const failed = (await failedBackfillSources(db, id, reported)).map((s) => ({
      id: s.id,
      filename: s.filename,
      code: s.error_code ?? 'failed',
      message: s.error_message ?? 'failed',
    }));
    reported.push(...failed.map((f) => f.id));
    const loaded_until = await backfillLoadedUntil(db, id);
    const counts = opts.counts ? await backfillCounts(db, backfill) : undefined;
    return {
      backfill,
      loaded_until,
      failed,
      ...(counts ? { counts } : {}),
      done: backfill.status === 'completed' || backfill.status === 'failed',
    };
  };
}
