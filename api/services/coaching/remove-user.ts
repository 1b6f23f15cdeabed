import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { Deps } from '../deps.ts';
import { deleteManagedUser } from '../../../db/managed-users.ts';
import { columnsDir } from '../../../lib/storage.ts';
import { userPrefix } from '../../../lib/object-store.ts';
import { removeObjects } from '../../../db/object-deletions.ts';
import { withActor } from '../../../lib/actor.ts';

/**
 * A managed user deleted with all their data (db/managed-users.ts deleteManagedUser), then their
 * objects (originals and sample files, everything under their prefix in the object store; later,
 * by housekeeping, when the store is out of reach) and this host's files of theirs (channel
 * columns, cached copies). False when the user is not the manager's.
 */
export async function removeUserData(deps: Deps, managerId: string, userId: string): Promise<boolean> {
  // The deletion's events name the manager as who acted, as for any change they make as the user.
  if (!(await withActor(managerId, () => deleteManagedUser(deps.db, managerId, userId, deps.now())))) return false;
  const { queued } = await removeObjects(deps.db, deps.engine.files.store, [userPrefix(userId)]);
  if (queued) deps.log.warn("the object store is out of reach: a deleted managed user's objects are removed later", { user_id: userId });
  const local = [path.dirname(columnsDir(deps.config.DATA_DIR, userId)), path.resolve(deps.config.DATA_DIR, 'cache', userPrefix(userId))];
  for (const dir of local)
    await rm(dir, { recursive: true, force: true, maxRetries: 3 }).catch((err: unknown) =>
      deps.log.warn("could not remove a deleted managed user's files", { user_id: userId, err }),
    );
  return true;
}
