import { sql, type Kysely } from 'kysely';

// Frozen in time: never import application code here.
export async function up(db: Kysely<any>): Promise<void> {
  // One timestamped point measurement. `utc_offset_seconds` is the offset the client wrote the
  // timestamp with: `timestamp_local` is read on that clock.
  await db.schema
    .createTable('traces')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('time', 'timestamptz', (c) => c.notNull())
    .addColumn('utc_offset_seconds', 'integer', (c) => c.notNull())
    .addColumn('test_id', 'text')
    .addColumn('lactate', 'double precision')
    .addColumn('rpe', 'integer')
    .addColumn('notes', 'text')
    .addColumn('power', 'integer', (c) => c.check(sql`power >= 0`))
    .addColumn('speed', 'double precision', (c) => c.check(sql`speed >= 0`))
    .addColumn('heart_rate', 'integer', (c) => c.check(sql`heart_rate >= 0`))
    .addColumn('vo2', 'double precision', (c) => c.check(sql`vo2 >= 0`))
    .addColumn('tags', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('sport', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`CREATE INDEX traces_user_time_idx ON traces (user_id, time DESC, id DESC)`.execute(db);
  await sql`CREATE INDEX traces_tags_idx ON traces USING gin (tags)`.execute(db);
  // Linking traces to activities looks activities up by span: (user, start) narrows, end filters.
  await sql`CREATE INDEX activities_user_end_idx ON activities (user_id, end_time)`.execute(db);

  await db.schema
    .createTable('trace_app_metadata')
    .addColumn('trace_id', 'uuid', (c) => c.notNull().references('traces.id').onDelete('cascade'))
    .addColumn('application_id', 'text', (c) => c.notNull().references('applications.id').onDelete('cascade'))
    .addColumn('data', 'jsonb', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('trace_app_metadata_pkey', ['trace_id', 'application_id'])
    .execute();

  // One value per user, measure and calendar date (an upsert replaces it).
  await db.schema
    .createTable('dailies')
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('measure', 'text', (c) => c.notNull())
    .addColumn('day', 'date', (c) => c.notNull())
    .addColumn('value', 'double precision', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('dailies_pkey', ['user_id', 'measure', 'day'])
    .execute();

  // Each application's own free-form object on the user's profile.
  await db.schema
    .createTable('profile_app_metadata')
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('application_id', 'text', (c) => c.notNull().references('applications.id').onDelete('cascade'))
    .addColumn('data', 'jsonb', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('profile_app_metadata_pkey', ['user_id', 'application_id'])
    .execute();
}
