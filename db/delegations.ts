import type { Db, Delegation } from './database.ts';
import { isUuid } from '../lib/ids.ts';
import { newSecret, SECRET_PREFIX, sha256 } from '../lib/secrets.ts';

/**
 * Delegations: a user (the actor) acting as another, through a team or as the manager of a managed
 * user (docs/coaching.md). A delegated access token is bound to its row (claim `did`), and whether
 * the row still allows anything is checked on every request with the other credentials
 * (db/credentials.ts). Its refresh token, when it has one, is stored as SHA-256.
 */
export async function createDelegation(
  db: Db,
  d: {
    actorId: string;
    userId: string;
    teamId: string | null;
    grantId: string | null;
    sessionId: string | null;
    applicationId: string | null;
    scopes: string[];
    withRefreshToken: boolean;
  },
): Promise<{ delegation: Delegation; refreshToken: string | undefined }> {
  const refreshToken = d.withRefreshToken ? newSecret(SECRET_PREFIX.refreshToken) : undefined;
  const delegation = await db
    .insertInto('delegations')
    .values({
      actor_id: d.actorId,
      user_id: d.userId,
      team_id: d.teamId,
      grant_id: d.grantId,
      session_id: d.sessionId,
      application_id: d.applicationId,
      scopes: d.scopes,
      refresh_token_hash: refreshToken ? sha256(refreshToken) : null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { delegation, refreshToken };
}

export function findDelegationByRefreshToken(db: Db, refreshToken: string): Promise<Delegation | undefined> {
  return db.selectFrom('delegations').selectAll().where('refresh_token_hash', '=', sha256(refreshToken)).executeTakeFirst();
}

export async function findDelegation(db: Db, id: string): Promise<Delegation | undefined> {
  if (!isUuid(id)) return undefined;
  return db.selectFrom('delegations').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function touchDelegation(db: Db, id: string, now: Date): Promise<void> {
  await db.updateTable('delegations').set({ last_used_at: now }).where('id', '=', id).execute();
}

/** Ends a delegation: its tokens fail from the next request. */
export async function deleteDelegation(db: Db, id: string): Promise<void> {
  await db.deleteFrom('delegations').where('id', '=', id).execute();
}

/**
 * Deletes the delegations made before `before` that nothing can use any more: no refresh token, so
 * their one access token has expired, and not bound to a web session (the web app's "act as" mints
 * its token again while the session lives; its row goes with the session). Returns how many.
 */
export async function deleteSpentDelegations(db: Db, before: Date): Promise<number> {
  const res = await db
    .deleteFrom('delegations')
    .where('refresh_token_hash', 'is', null)
    .where('session_id', 'is', null)
    .where('created_at', '<', before)
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** Ends the delegations a user made under one web session (the web app's "act as", docs/coaching.md). */
export async function deleteSessionDelegations(db: Db, sessionId: string, actorId: string): Promise<void> {
  await db.deleteFrom('delegations').where('session_id', '=', sessionId).where('actor_id', '=', actorId).execute();
}
