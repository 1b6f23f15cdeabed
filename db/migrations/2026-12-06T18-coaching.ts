import { sql, type Kysely } from 'kysely';

// Frozen in time: never import application code here.
export async function up(db: Kysely<any>): Promise<void> {
  // A managed user: an account without a login (no email, no password), managed by the user who
  // created it (a child, a lab subject, a historical athlete). `deleted_at`: a deleted managed user's
  // row stays, hidden everywhere, until its deletion events have gone out (housekeeping removes it).
  await sql`ALTER TABLE users
    ALTER COLUMN email DROP NOT NULL,
    ALTER COLUMN password_hash DROP NOT NULL,
    ADD COLUMN managed_by uuid REFERENCES users(id) ON DELETE CASCADE,
    ADD COLUMN deleted_at timestamptz,
    ADD CONSTRAINT users_login_or_managed CHECK (
      (managed_by IS NULL AND email IS NOT NULL AND password_hash IS NOT NULL)
      OR (managed_by IS NOT NULL AND email IS NULL AND password_hash IS NULL))`.execute(db);
  await sql`CREATE INDEX users_managed_by_idx ON users (managed_by) WHERE managed_by IS NOT NULL`.execute(db);

  // Teams: a coach's group, a club, a lab. Members are owners (who manage the team and its
  // invitations) or coaches; athletes are not members: they authorise a team (team_authorizations).
  await db.schema
    .createTable('teams')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    // What a client shows of the team (SweatStack's TeamResponse); the service's own when unset.
    .addColumn('url', 'text')
    .addColumn('image', 'text')
    .addColumn('privacy_statement', 'text')
    .addColumn('created_by', 'uuid', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createTable('team_members')
    .addColumn('team_id', 'uuid', (c) => c.notNull().references('teams.id').onDelete('cascade'))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('role', 'text', (c) => c.notNull().check(sql`role IN ('owner', 'coach')`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('team_members_pkey', ['team_id', 'user_id'])
    .execute();
  await sql`CREATE INDEX team_members_user_idx ON team_members (user_id)`.execute(db);
  // An invitation link: its secret stored as SHA-256, single use, expiring, revocable.
  await db.schema
    .createTable('team_invitations')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('team_id', 'uuid', (c) => c.notNull().references('teams.id').onDelete('cascade'))
    .addColumn('secret_hash', 'text', (c) => c.notNull().unique())
    .addColumn('role', 'text', (c) => c.notNull().check(sql`role IN ('owner', 'coach')`))
    .addColumn('created_by', 'uuid', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('used_at', 'timestamptz')
    .addColumn('used_by', 'uuid', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('revoked_at', 'timestamptz')
    .execute();
  await sql`CREATE INDEX team_invitations_team_idx ON team_invitations (team_id, created_at DESC)`.execute(db);
  // An athlete's authorisation of a team: the team's members may act for them with these scopes.
  await db.schema
    .createTable('team_authorizations')
    .addColumn('team_id', 'uuid', (c) => c.notNull().references('teams.id').onDelete('cascade'))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('scopes', sql`text[]`, (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('team_authorizations_pkey', ['team_id', 'user_id'])
    .execute();
  await sql`CREATE INDEX team_authorizations_user_idx ON team_authorizations (user_id)`.execute(db);

  // A delegation: `actor_id` acting as `user_id`, through a team or as the manager of a managed user
  // (team_id null), under the actor's credential (a grant, or a web session), which ends it when it
  // ends. What it may still do is checked on every request (db/credentials.ts); the row is what a
  // delegated token is bound to, and holds its refresh token (SHA-256) when it has one.
  await db.schema
    .createTable('delegations')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('actor_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('team_id', 'uuid', (c) => c.references('teams.id').onDelete('cascade'))
    .addColumn('grant_id', 'uuid', (c) => c.references('grants.id').onDelete('cascade'))
    .addColumn('session_id', 'uuid', (c) => c.references('sessions.id').onDelete('cascade'))
    .addColumn('application_id', 'text')
    .addColumn('scopes', sql`text[]`, (c) => c.notNull())
    .addColumn('refresh_token_hash', 'text', (c) => c.unique())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_used_at', 'timestamptz')
    .addCheckConstraint('delegations_one_credential', sql`(grant_id IS NULL) <> (session_id IS NULL)`)
    .execute();
  await sql`CREATE INDEX delegations_user_idx ON delegations (user_id)`.execute(db);
  await sql`CREATE INDEX delegations_actor_idx ON delegations (actor_id)`.execute(db);
}
