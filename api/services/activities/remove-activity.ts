import type { Deps } from '../../services/deps.ts';
import { deleteActivity } from '../../../db/activities.ts';
import { isUuid } from '../../../lib/ids.ts';
import { sampleKey, sourceKey } from '../../../lib/object-store.ts';
import { removeObjects } from '../../../db/object-deletions.ts';

/**
 * Delete one of a user's activities with its files, and its samples from the user's channel columns
 * (a tombstone, its bytes overwritten with zeros); false when there is none. Shared with the web page.
 */
export async function removeActivity(deps: Deps, userId: string, id: string): Promise<boolean> {
  const { db } = deps;
  const removed = isUuid(id) ? await deleteActivity(db, userId, id, deps.now()) : undefined;
  if (!removed) return false;
  const { activity, source } = removed;
  // The row is gone first, so no reader looks for them; a store out of reach now removes them later (housekeeping).
  const keys = [sampleKey(activity.user_id, activity.id), ...(source ? [sourceKey(source.user_id, source.id, source.type)] : [])];
  const { queued } = await removeObjects(db, deps.engine.files.store, keys);
  if (queued)
    deps.log.warn("the object store is out of reach: a deleted activity's objects are removed later", { activity_id: activity.id });
  await deps.engine.files.local.drop(keys);
  // The row is gone, so no request trusts the entry any more; this removes the bytes themselves.
  await deps.engine.columns
    .remove(activity.user_id, [activity.id])
    .catch((err: unknown) => deps.log.warn('could not remove an activity from the channel columns', { activity_id: activity.id, err }));
  return true;
}
