import { sql } from 'kysely';
import { isUuid } from '../lib/ids.ts';
import type { Db, NewUser, User } from './database.ts';

export class DuplicateEmailError extends Error {
  constructor(readonly email: string) {
    super(`an account with email ${email} already exists`);
  }
}

/** An account with a login (a managed user is made by db/managed-users.ts). */
export async function createUser(db: Db, user: NewUser & { email: string; password_hash: string }): Promise<User> {
  try {
    return (await db.insertInto('users').values(user).returningAll().executeTakeFirstOrThrow()) as User;
  } catch (err) {
    if ((err as { code?: string }).code === '23505') throw new DuplicateEmailError(user.email);
    throw err;
  }
}

/** Emails match case-insensitively (the unique index is on lower(email)). */
export async function findUserByEmail(db: Db, email: string): Promise<User | undefined> {
  return (await db
    .selectFrom('users')
    .selectAll()
    .where(sql<string>`lower(email)`, '=', email.toLowerCase())
    .where('managed_by', 'is', null)
    .executeTakeFirst()) as User | undefined;
}

/** An account with a login by id; undefined for a managed user (db/managed-users.ts reads those). */
export async function findUserById(db: Db, id: string): Promise<User | undefined> {
  if (!isUuid(id)) return undefined;
  return (await db.selectFrom('users').selectAll().where('id', '=', id).where('managed_by', 'is', null).executeTakeFirst()) as
    | User
    | undefined;
}

/** The accounts with a login, newest first. */
export async function listUsers(db: Db): Promise<User[]> {
  return (await db
    .selectFrom('users')
    .selectAll()
    .where('managed_by', 'is', null)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .execute()) as User[];
}

export async function updateUserName(db: Db, id: string, name: { first_name: string; last_name: string }) {
  await db
    .updateTable('users')
    .set({ ...name, updated_at: sql`now()` as never })
    .where('id', '=', id)
    .execute();
}

export async function updateUserPassword(db: Db, id: string, password_hash: string) {
  await db
    .updateTable('users')
    .set({ password_hash, updated_at: sql`now()` as never })
    .where('id', '=', id)
    .execute();
}

export async function updateUserUnits(db: Db, id: string, units: 'metric' | 'imperial') {
  await db
    .updateTable('users')
    .set({ units, updated_at: sql`now()` as never })
    .where('id', '=', id)
    .execute();
}
