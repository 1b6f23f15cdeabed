import type { Kysely } from 'kysely';

// Frozen in time: never import application code here.
export async function up(db: Kysely<any>): Promise<void> {
  // Bumped in the transaction of every change to what activity reads show (activities, the traces
  // linked to them, applications' metadata on either): it keys the cached list pages.
  await db.schema
    .alterTable('users')
    .addColumn('read_version', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
}
