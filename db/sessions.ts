import type { Db, Session } from './database.ts';
import { isUuid } from '../lib/ids.ts';

export function createSession(db: Db, s: { user_id: string; expires_at: Date; user_agent: string | null }): Promise<Session> {
  return db.insertInto('sessions').values(s).returningAll().executeTakeFirstOrThrow();
}

/** A session that exists and has not expired at `now`. */
export function findLiveSession(db: Db, id: string, now: Date): Promise<Session | undefined> {
  if (!isUuid(id)) return Promise.resolve(undefined);
  return db.selectFrom('sessions').selectAll().where('id', '=', id).where('expires_at', '>', now).executeTakeFirst();
}

export async function deleteSession(db: Db, id: string): Promise<void> {
  if (!isUuid(id)) return;
  await db.deleteFrom('sessions').where('id', '=', id).execute();
}

/** Sign out everywhere else: every session of the user but `keep`. */
export async function deleteOtherSessions(db: Db, userId: string, keep: string): Promise<void> {
  await db.deleteFrom('sessions').where('user_id', '=', userId).where('id', '!=', keep).execute();
}

export async function deleteExpiredSessions(db: Db, now: Date): Promise<number> {
  const res = await db.deleteFrom('sessions').where('expires_at', '<=', now).executeTakeFirst();
  return Number(res.numDeletedRows);
}
