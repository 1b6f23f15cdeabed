import type { Deps } from '../../services/deps.ts';
import { deleteActivity } from '../../../db/activities.ts';
import { isUuid } from '../../../lib/ids.ts';
import { originalPath, removeFiles, samplePath } from '../../../lib/storage.ts';

/**
 * Delete one of a user's activities with its files, and its samples from the user's channel columns
 * (a tombstone, its bytes overwritten with zeros); false when there is none. Shared with the web page.
 */
export async function removeActivity(deps: Deps, userId: string, id: string): Promise<boolean> {
  const { db, config } = deps;
  const removed = isUuid(id) ? await deleteActivity(db, userId, id, deps.now()) : undefined;
  if (!removed) return false;
  const { activity, source } = removed;
  await removeFiles([
    samplePath(config.DATA_DIR, activity.user_id, activity.id),
    ...(source ? [originalPath(config.DATA_DIR, source.user_id, source.id, source.type)] : []),
  ]);
  // The row is gone, so no request trusts the entry any more; this removes the bytes themselves.
  await deps.engine.columns
    .remove(activity.user_id, [activity.id])
    .catch((err: unknown) => deps.log.warn('could not remove an activity from the channel columns', { activity_id: activity.id, err }));
  return true;
}
