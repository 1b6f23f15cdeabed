import type { Kysely } from 'kysely';

// Frozen in time: never import application code here.
export async function up(db: Kysely<any>): Promise<void> {
  // Whether the code exchange that made the grant was authenticated with the application's client
  // secret: its refresh token then needs the secret too. False for grants made before (as they were).
  await db.schema
    .alterTable('grants')
    .addColumn('client_authenticated', 'boolean', (c) => c.notNull().defaultTo(false))
    .execute();
}
