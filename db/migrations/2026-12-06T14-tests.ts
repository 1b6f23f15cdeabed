import { sql, type Kysely } from 'kysely';

// Frozen in time: never import application code here.
export async function up(db: Kysely<any>): Promise<void> {
  // A test session (a lactate step test, a ramp test, a critical-power test): its time window, the
  // results the athlete or an application keeps, and who made it. `utc_offset_seconds` is the offset
  // `start` was written with (its `start_local` is read on that clock), `end_utc_offset_seconds` that
  // of `end`. `created_by` is the OAuth client id of the application that created it (null:
  // first-party); no foreign key, so a deleted application's tests keep saying who made them.
  await db.schema
    .createTable('tests')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('sport', 'text', (c) => c.notNull())
    .addColumn('start_time', 'timestamptz', (c) => c.notNull())
    .addColumn('utc_offset_seconds', 'integer', (c) => c.notNull())
    .addColumn('end_time', 'timestamptz', (c) => c.notNull())
    .addColumn('end_utc_offset_seconds', 'integer', (c) => c.notNull())
    .addColumn('title', 'text')
    .addColumn('tags', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('results', 'jsonb')
    .addColumn('created_by', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('tests_end_after_start', sql`end_time >= start_time`)
    .execute();
  await sql`CREATE INDEX tests_user_start_idx ON tests (user_id, start_time DESC, id DESC)`.execute(db);
  await sql`CREATE INDEX tests_tags_idx ON tests USING gin (tags)`.execute(db);
  // A trace's test by time: the user's tests whose window contains the trace's instant.
  await sql`CREATE INDEX tests_user_end_idx ON tests (user_id, end_time)`.execute(db);
  // The traces linked to a test by `test_id` (a text column: values written before tests were stored stay as they were).
  await sql`CREATE INDEX traces_user_test_idx ON traces (user_id, test_id) WHERE test_id IS NOT NULL`.execute(db);

  await db.schema
    .createTable('test_app_metadata')
    .addColumn('test_id', 'uuid', (c) => c.notNull().references('tests.id').onDelete('cascade'))
    .addColumn('application_id', 'text', (c) => c.notNull().references('applications.id').onDelete('cascade'))
    .addColumn('data', 'jsonb', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('test_app_metadata_pkey', ['test_id', 'application_id'])
    .execute();
}
