import { sql, type Kysely } from 'kysely';

// Frozen in time: never import application code here.
export async function up(db: Kysely<any>): Promise<void> {
  // Objects of deleted rows that the object store could not remove at the time (out of reach):
  // housekeeping removes them later, so a delete never leaves an object behind for good.
  await db.schema
    .createTable('object_deletions')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('queued_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}
