import type { Kysely } from 'kysely';

// Frozen in time: never import application code here.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('activities')
    // Which version of the ingest rules (engine/ingest/rules.ts) made the row, its sample file and
    // curves: rows stored before versions were recorded are version 1 (`npm run cli -- reprocess`
    // re-derives them from their originals).
    .addColumn('ingest_version', 'smallint', (c) => c.notNull().defaultTo(1))
    // Seconds the timer ran (pauses left out) and of those the seconds in motion; null for version 1.
    .addColumn('timer_seconds', 'double precision')
    .addColumn('moving_seconds', 'double precision')
    // The file's own session values as recorded (FIT session message); null for CSV and version 1.
    .addColumn('device_summary', 'jsonb')
    // Per reason, the file's records left out (duplicate or out-of-session timestamps); null for version 1.
    .addColumn('dropped_records', 'jsonb')
    .execute();
  await db.schema.createIndex('activities_ingest_version_idx').on('activities').columns(['ingest_version', 'user_id']).execute();
}
