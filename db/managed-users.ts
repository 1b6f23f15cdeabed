import { sql } from 'kysely';
import type { Db, UserRow } from './database.ts';
import { isUuid } from '../lib/ids.ts';
import { recordEvents } from './events.ts';

/**
 * Managed users (accounts without a login, made and managed by another user) and the people a user
 * can reach: their managed users and the athletes who authorised a team they are a member of
 * (docs/coaching.md). A deleted managed user (`deleted_at`) is never returned.
 */

export type ManagedUser = Pick<UserRow, 'id' | 'first_name' | 'last_name' | 'created_at' | 'managed_by'>;
const COLUMNS = ['id', 'first_name', 'last_name', 'created_at', 'managed_by'] as const;

export async function createManagedUser(db: Db, managerId: string, name: { first_name: string; last_name: string }): Promise<ManagedUser> {
  return db
    .insertInto('users')
    .values({ ...name, managed_by: managerId, email: null, password_hash: null })
    .returning(COLUMNS)
    .executeTakeFirstOrThrow();
}

/** One of the manager's managed users, or undefined (unknown, deleted, or someone else's). */
export async function findManagedUser(db: Db, managerId: string, userId: string): Promise<ManagedUser | undefined> {
  if (!isUuid(userId)) return undefined;
  return db
    .selectFrom('users')
    .select(COLUMNS)
    .where('id', '=', userId)
    .where('managed_by', '=', managerId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

export async function updateManagedUser(
  db: Db,
  managerId: string,
  userId: string,
  name: { first_name?: string; last_name?: string },
): Promise<ManagedUser | undefined> {
  if (!isUuid(userId)) return undefined;
  return db
    .updateTable('users')
    .set({ ...name, updated_at: sql`now()` as never })
    .where('id', '=', userId)
    .where('managed_by', '=', managerId)
    .where('deleted_at', 'is', null)
    .returning(COLUMNS)
    .executeTakeFirst();
}

/** The manager's managed users, by name. */
export function managedUsers(db: Db, managerId: string): Promise<ManagedUser[]> {
  return db
    .selectFrom('users')
    .select(COLUMNS)
    .where('managed_by', '=', managerId)
    .where('deleted_at', 'is', null)
    .orderBy('first_name')
    .orderBy('last_name')
    .orderBy('id')
    .execute();
}

export interface SharedUser extends ManagedUser {
  /** The union of the scopes granted to the teams the viewer is a member of. */
  scopes: string[];
}

/** The athletes who authorised a team `memberId` belongs to (or only `teamId`), with the scopes granted; never `memberId`. */
export async function sharedUsers(db: Db, memberId: string, teamId?: string): Promise<SharedUser[]> {
  let q = db
    .selectFrom('team_authorizations as a')
    .innerJoin('team_members as m', (j) => j.onRef('m.team_id', '=', 'a.team_id').on('m.user_id', '=', memberId))
    .innerJoin('users as u', 'u.id', 'a.user_id')
    .select(['u.id', 'u.first_name', 'u.last_name', 'u.created_at', 'u.managed_by', 'a.scopes'])
    .where('u.deleted_at', 'is', null)
    .where('u.id', '<>', memberId);
  if (teamId !== undefined) q = q.where('a.team_id', '=', teamId);
  const rows = await q.orderBy('u.first_name').orderBy('u.last_name').orderBy('u.id').execute();
  const byUser = new Map<string, SharedUser>();
  for (const row of rows) {
    const seen = byUser.get(row.id);
    if (seen) seen.scopes = [...new Set([...seen.scopes, ...row.scopes])].sort();
    else byUser.set(row.id, { ...row, scopes: [...row.scopes].sort() });
  }
  return [...byUser.values()];
}

/**
 * Deletes a managed user's data and hides the user, in one transaction: the events of every deleted
 * activity, trace and test (so applications drop them as they would any deletion), the rows of
 * everything the user had (activities with their curves and metadata, sources, traces, tests,
 * dailies, imports, profile metadata, team authorisations), and `deleted_at` set, which ends every
 * delegation at once (db/credentials.ts). The row itself stays until its events have gone out
 * (housekeeping). The caller removes the user's files. False when it is not the manager's.
 */
export async function deleteManagedUser(db: Db, managerId: string, userId: string, now: Date): Promise<boolean> {
  if (!isUuid(userId)) return false;
  return db.transaction().execute(async (tx) => {
    const user = await tx
      .selectFrom('users')
      .select('id')
      .where('id', '=', userId)
      .where('managed_by', '=', managerId)
      .where('deleted_at', 'is', null)
      .forUpdate()
      .executeTakeFirst();
    if (!user) return false;
    const activities = await tx.deleteFrom('activities').where('user_id', '=', userId).returning('id').execute();
    const traces = await tx.deleteFrom('traces').where('user_id', '=', userId).returning('id').execute();
    const tests = await tx.deleteFrom('tests').where('user_id', '=', userId).returning('id').execute();
    for (const table of [
      'sources',
      'dailies',
      'backfills',
      'profile_app_metadata',
      'team_authorizations',
      'thresholds',
      'training_settings',
    ] as const) {
      await tx.deleteFrom(table).where('user_id', '=', userId).execute();
    }
    await recordEvents(
      tx,
      [
        ...activities.map((a) => ({ user_id: userId, type: 'activity_deleted' as const, resource_id: a.id })),
        ...traces.map((a) => ({ user_id: userId, type: 'trace_deleted' as const, resource_id: a.id })),
        ...tests.map((a) => ({ user_id: userId, type: 'test_deleted' as const, resource_id: a.id })),
      ],
      now,
    );
    await tx.updateTable('users').set({ deleted_at: now, updated_at: now }).where('id', '=', userId).execute();
    return true;
  });
}

/**
 * Removes the rows of managed users deleted before `before` whose events have all gone out: every
 * event fanned out and none with a delivery still pending (their events, deliveries and delegations
 * go with them). Returns how many.
 */
export async function purgeDeletedUsers(db: Db, before: Date): Promise<number> {
  const res = await db
    .deleteFrom('users')
    .where('deleted_at', '<', before)
    .where('managed_by', 'is not', null)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('events as e')
            .leftJoin('webhook_deliveries as d', (j) => j.onRef('d.event_id', '=', 'e.id').on('d.status', '=', 'pending'))
            .select('e.id')
            .whereRef('e.user_id', '=', 'users.id')
            .where((eb) => eb.or([eb('e.fanned_out_at', 'is', null), eb('d.id', 'is not', null)])),
        ),
      ),
    )
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}
