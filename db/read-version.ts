import { sql, type Transaction } from 'kysely';
import type { Database, Db } from './database.ts';

/**
 * `users.read_version` keys the cached activity reads (api/rest/activities/read-cache.ts). Every change
 * to what they show bumps it in the change's own transaction: activities stored or deleted, traces
 * (linked to activities by time) created, replaced or deleted, and applications' metadata on an
 * activity or a trace. A page cached under an older version is then never found again.
 */
export async function bumpReadVersion(trx: Transaction<Database> | Db, userId: string): Promise<void> {
  await trx.updateTable('users').set({ read_version: sql`read_version + 1` }).where('id', '=', userId).execute();
}

/**
 * Bump both of the user's versions in one statement: `read_version` (above) and `data_version`
 * (db/curves.ts bumpDataVersion: the cached computed results), for a change that moves both.
 */
export async function bumpDataAndReadVersion(trx: Transaction<Database> | Db, userId: string): Promise<void> {
  await trx
    .updateTable('users')
    .set({ data_version: sql`data_version + 1`, read_version: sql`read_version + 1` })
    .where('id', '=', userId)
    .execute();
}

/** The user's read version (a bigint, as a string); '0' for an unknown user. */
export async function readVersion(db: Db, userId: string): Promise<string> {
  const row = await db.selectFrom('users').select('read_version').where('id', '=', userId).executeTakeFirst();
  return row?.read_version ?? '0';
}

/** Bump the read version of whoever owns an activity, a trace or a test. */
export async function bumpReadVersionOf(trx: Transaction<Database>, table: 'activities' | 'traces' | 'tests', id: string): Promise<void> {
  await sql`UPDATE users SET read_version = read_version + 1 WHERE id = (SELECT user_id FROM ${sql.table(table)} WHERE id = ${id})`.execute(
    trx,
  );
}
