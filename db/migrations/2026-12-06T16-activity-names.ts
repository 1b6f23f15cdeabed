import type { Kysely } from 'kysely';
import { sql } from 'kysely';

// Frozen in time: never import application code here.
export async function up(db: Kysely<any>): Promise<void> {
  // An activity's name and description as the athlete gave them on a platform (a Strava export's
  // activities.csv); null for files that say nothing of them. Bounded like other free text.
  await db.schema
    .alterTable('activities')
    .addColumn('name', 'text', (c) => c.check(sql`char_length(name) <= 255`))
    .addColumn('description', 'text', (c) => c.check(sql`char_length(description) <= 10000`))
    .execute();
  // What a platform's export says of a source's activity ({name, description, sport}), kept with the
  // source so that a retried or reprocessed ingest applies it again; null for other files.
  await db.schema.alterTable('sources').addColumn('metadata', 'jsonb').execute();
  // A backfill's scan, counted by format and by why entries were skipped (db/backfills.ts ScanCounts).
  await db.schema.alterTable('backfills').addColumn('scan_counts', 'jsonb').execute();
}
