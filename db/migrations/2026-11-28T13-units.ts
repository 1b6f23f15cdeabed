import type { Kysely } from 'kysely';
import { sql } from 'kysely';

// Frozen in time: never import application code here.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('users')
    // How the web pages show distances and speeds (api/web/static/units.js): metric or imperial.
    .addColumn('units', 'text', (c) => c.notNull().defaultTo('metric').check(sql`units IN ('metric', 'imperial')`))
    .execute();
}
