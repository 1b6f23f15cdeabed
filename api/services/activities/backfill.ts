import type { Deps } from '../../services/deps.ts';
import { assertQueueReachable, Conflict, UnprocessableEntity } from '../errors.ts';
import type { UploadedFile } from './uploaded.ts';
import { backfillInProgress, deleteUnstartedBackfill, startBackfill } from '../../../db/backfills.ts';
import type { Backfill } from '../../../db/database.ts';
import { archiveKey } from '../../../lib/object-store.ts';
import { enqueueBackfill } from '../../../workers/queues.ts';

/**
 * What POST /api/v1/activities/backfill does (api/rest/routes/activities/backfill.ts parses the request
 * and answers): one import per user at a time (409 naming the running one), the archive moved into
 * DATA_DIR and its scan queued; should queueing fail (Redis went away meanwhile), the backfill is taken
 * back, so that the client's retry is not refused with 409 by a backfill nobody will scan.
 */

const busy = (running: Backfill) =>
  new Conflict(
    `A history import (${running.id}, ${running.filename}) is still ${running.status}: imports run one at a time; follow it on GET /api/v1/activities/backfill-status and send this one when it has completed`,
  );

/** 409 when the user already has an import running (checked before the archive is read). */
export async function refuseWhileImporting(deps: Deps, userId: string): Promise<void> {
  const running = await backfillInProgress(deps.db, userId);
  if (running) throw busy(running);
}

/** Start the import of `archive` (the multipart part, on disk): the backfill, `scanning`. */
export async function startArchiveBackfill(deps: Deps, userId: string, archive: UploadedFile | undefined): Promise<Backfill> {
  const { db, queues } = deps;
  if (!archive) throw new UnprocessableEntity([{ loc: ['body', 'archive'], msg: 'A zip archive is required', type: 'missing' }]);
  assertQueueReachable(deps);
  const started = await startBackfill(db, { user_id: userId, origin: 'api', filename: archive.filename.slice(0, 255) });
  if ('busy' in started) throw busy(started.busy);
  const { backfill } = started;
  const key = archiveKey(backfill.id);
  const store = deps.engine.files.store;
  try {
    // Into the object store, where the worker that scans it (on any host) reads it.
    await store.putFile(key, archive.path, { move: true });
    await enqueueBackfill(queues, backfill.id);
  } catch (err) {
    // Should taking it back fail too (PostgreSQL down as well), housekeeping queues the scan once the backfill is stale.
    await deleteUnstartedBackfill(db, backfill.id)
      .then(() => store.remove([key]))
      .catch(() => {});
    throw err;
  }
  return backfill;
}
