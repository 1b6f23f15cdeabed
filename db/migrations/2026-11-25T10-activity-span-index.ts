import { sql, type Kysely } from 'kysely';

// Frozen in time: never import application code here.
export async function up(db: Kysely<any>): Promise<void> {
  // The user's longest activity bounds the search for each trace's containing activity (a trace
  // list page asks on every request): one step down this index instead of reading every activity
  // the user has.
  await sql`CREATE INDEX activities_user_span_idx ON activities (user_id, (end_time - start_time))`.execute(db);
}
