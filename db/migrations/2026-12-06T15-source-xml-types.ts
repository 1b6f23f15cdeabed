import type { Kysely } from 'kysely';
import { sql } from 'kysely';

// Frozen in time: never import application code here.
// Sources may be GPX and TCX files (issue 39): the type check of 2026-11-21T02-activities widened.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE sources DROP CONSTRAINT IF EXISTS sources_type_check`.execute(db);
  await sql`ALTER TABLE sources ADD CONSTRAINT sources_type_check CHECK (type IN ('fit', 'csv', 'gpx', 'tcx'))`.execute(db);
}
