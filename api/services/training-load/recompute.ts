import type { Deps } from '../deps.ts';
import { loadVersion } from '../../../db/training-load.ts';
import { enqueueTrainingLoad } from '../../../workers/queues.ts';

/**
 * After a change to what training load is computed from (thresholds, zones, a lab test's results, a
 * resting heart rate measure), queue the job of the user's new version: it computes the load rows the
 * change deleted (db/training-load.ts). Queueing a version already queued is that job; a failure to
 * reach Redis is only logged, since the housekeeping's sweep queues it later.
 */
export async function recomputeLoad(deps: Pick<Deps, 'db' | 'queues' | 'log'>, userId: string): Promise<void> {
  try {
    await enqueueTrainingLoad(deps.queues, userId, await loadVersion(deps.db, userId));
  } catch (err) {
    deps.log.warn('could not queue the training-load job; the housekeeping will', { user_id: userId, err });
  }
}
