import { sql, type Kysely } from 'kysely';

// Frozen in time: never import application code here.
export async function up(db: Kysely<any>): Promise<void> {
  // Who made a change through a delegation (docs/coaching.md): the acting user; null when the user made
  // it themself. No foreign key on events: an event keeps saying who acted after that account is gone.
  await sql`ALTER TABLE events ADD COLUMN actor_id uuid`.execute(db);
  // A source uploaded, or a history imported, through a delegation: its ingest's events (and the import's
  // sources) carry the same actor.
  await sql`ALTER TABLE sources ADD COLUMN actor_id uuid REFERENCES users(id) ON DELETE SET NULL`.execute(db);
  await sql`ALTER TABLE backfills ADD COLUMN actor_id uuid REFERENCES users(id) ON DELETE SET NULL`.execute(db);
  // The athlete's "changes made by others" (the web app's Settings → Teams): their events with an actor, newest first.
  await sql`CREATE INDEX events_user_actor_idx ON events (user_id, occurred_at DESC) WHERE actor_id IS NOT NULL`.execute(db);
}
