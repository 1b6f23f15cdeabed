import { sql, type Kysely } from 'kysely';

// Frozen in time: never import application code here.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('applications')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('owner_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('url', 'text')
    .addColumn('image', 'text')
    .addColumn('privacy_statement', 'text')
    .addColumn('redirect_uris', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('published', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('webhook_endpoints', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('webhook_secret', 'text')
    .addColumn('page_slug', 'text', (c) => c.unique())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('applications_owner_idx').on('applications').columns(['owner_id', 'created_at']).execute();
  await sql`CREATE INDEX applications_published_idx ON applications (name) WHERE published`.execute(db);

  await db.schema
    .createTable('client_secrets')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('application_id', 'text', (c) => c.notNull().references('applications.id').onDelete('cascade'))
    .addColumn('label', 'text', (c) => c.notNull())
    .addColumn('secret_hash', 'text', (c) => c.notNull().unique())
    .addColumn('hint', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_used_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('client_secrets_application_idx').on('client_secrets').column('application_id').execute();

  await db.schema
    .createTable('consents')
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('application_id', 'text', (c) => c.notNull().references('applications.id').onDelete('cascade'))
    .addColumn('scopes', sql`text[]`, (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('consents_pkey', ['user_id', 'application_id'])
    .execute();
  await db.schema.createIndex('consents_application_idx').on('consents').column('application_id').execute();

  // A grant: what one authorization (or one personal token) issued. Access tokens carry its id
  // (`gid`) so that revoking the grant stops them as well as its refresh token.
  await db.schema
    .createTable('grants')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('application_id', 'text', (c) => c.references('applications.id').onDelete('cascade'))
    .addColumn('label', 'text')
    .addColumn('scopes', sql`text[]`, (c) => c.notNull())
    .addColumn('refresh_token_hash', 'text', (c) => c.unique())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_used_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('grants_user_application_idx').on('grants').columns(['user_id', 'application_id']).execute();
  await db.schema.createIndex('grants_application_idx').on('grants').column('application_id').execute();

  await db.schema
    .createTable('authorization_codes')
    .addColumn('code_hash', 'text', (c) => c.primaryKey())
    .addColumn('application_id', 'text', (c) => c.notNull().references('applications.id').onDelete('cascade'))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    .addColumn('scopes', sql`text[]`, (c) => c.notNull())
    .addColumn('code_challenge', 'text')
    .addColumn('nonce', 'text')
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('used_at', 'timestamptz')
    .addColumn('grant_id', 'uuid', (c) => c.references('grants.id').onDelete('set null'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('authorization_codes_expires_idx').on('authorization_codes').column('expires_at').execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
