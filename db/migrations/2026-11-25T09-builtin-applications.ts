import { sql, type Kysely } from 'kysely';

// Frozen in time: never import application code here.
export async function up(db: Kysely<any>): Promise<void> {
  // A built-in application (the API reference's Swagger UI client, `api-docs`) belongs to no user.
  await sql`ALTER TABLE applications ALTER COLUMN owner_id DROP NOT NULL`.execute(db);
}
