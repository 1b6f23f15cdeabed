import type { Kysely } from 'kysely';

// Frozen in time: never import application code here.
export async function up(db: Kysely<any>): Promise<void> {
  // Per channel, how many of the file's samples ingestion dropped as implausible (only channels with
  // at least one; '{}' when none). NULL for activities stored before samples were checked.
  await db.schema.alterTable('activities').addColumn('implausible_samples', 'jsonb').execute();
}
