import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { Deps } from '../deps.ts';
import { deleteManagedUser } from '../../../db/managed-users.ts';
import { columnsDir } from '../../../lib/storage.ts';
import { withActor } from '../../../lib/actor.ts';

/**
 * A managed user deleted with all their data (db/managed-users.ts deleteManagedUser), then their
 * files: originals, sample files and channel columns all live under the user's own directory,
 * removed whole. False when the user is not the manager's.
 */
export async function removeUserData(deps: Deps, managerId: string, userId: string): Promise<boolean> {
  // The deletion's events name the manager as who acted, as for any change they make as the user.
  if (!(await withActor(managerId, () => deleteManagedUser(deps.db, managerId, userId, deps.now())))) return false;
  const userDir = path.dirname(columnsDir(deps.config.DATA_DIR, userId));
  await rm(userDir, { recursive: true, force: true, maxRetries: 3 }).catch((err: unknown) =>
    deps.log.warn("could not remove a deleted managed user's files", { user_id: userId, err }),
  );
  return true;
}
