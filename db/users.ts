import { sql } from 'kysely';
import { isUuid } from '../lib/ids.ts';
import type { Db, NewUser, User } from './database.ts';

export class DuplicateEmailError extends Error {
  constructor(readonly email: string) {
    super(`an account with email ${email} already exists`);
  }
}

export async function createUser(db: Db, user: NewUser): Promise<User> {
  try {
    return await db.insertInto('users').values(user).returningAll().executeTakeFirstOrThrow();
  } catch (err) {
    if ((err as { code?: string }).code === '23505') throw new DuplicateEmailError(user.email);
    throw err;
  }
}

/** Emails match case-insensitively (the unique index is on lower(email)). */
export function findUserByEmail(db: Db, email: string): Promise<User | undefined> {
  return db.selectFrom('users').selectAll().where(sql<string>`lower(email)`, '=', email.toLowerCase()).executeTakeFirst();
}

export function findUserById(db: Db, id: string): Promise<User | undefined> {
  if (!isUuid(id)) return Promise.resolve(undefined);
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

export function listUsers(db: Db): Promise<User[]> {
  return db.selectFrom('users').selectAll().orderBy('created_at', 'desc').orderBy('id').execute();
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
