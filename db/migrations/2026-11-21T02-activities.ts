import { sql, type Kysely } from 'kysely';

// Frozen in time: never import application code here.
export async function up(db: Kysely<any>): Promise<void> {
  // A history import: an archive or directory of files, loaded newest first.
  await db.schema
    .createTable('backfills')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('origin', 'text', (c) => c.notNull().check(sql`origin IN ('api', 'cli')`))
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) =>
      c.notNull().defaultTo('scanning').check(sql`status IN ('scanning', 'loading', 'completed', 'failed')`),
    )
    .addColumn('error_message', 'text')
    .addColumn('files_total', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('files_skipped', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('scanned_at', 'timestamptz')
    .addColumn('completed_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('backfills_user_idx').on('backfills').columns(['user_id', 'created_at']).execute();

  // One uploaded file. Its content hash makes a second upload of the same bytes find the first.
  await db.schema
    .createTable('sources')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull().check(sql`type IN ('fit', 'csv')`))
    .addColumn('origin', 'text', (c) => c.notNull().check(sql`origin IN ('manual_upload', 'backfill')`))
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('content_sha256', 'text', (c) => c.notNull())
    .addColumn('size_bytes', 'integer', (c) => c.notNull())
    .addColumn('sport', 'text')
    .addColumn('tags', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('processing').check(sql`status IN ('processing', 'processed', 'failed')`))
    .addColumn('error_code', 'text')
    .addColumn('error_message', 'text')
    .addColumn('backfill_id', 'uuid', (c) => c.references('backfills.id').onDelete('set null'))
    .addColumn('recorded_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('processed_at', 'timestamptz')
    .addUniqueConstraint('sources_user_content_key', ['user_id', 'content_sha256'])
    .execute();
  await db.schema.createIndex('sources_user_idx').on('sources').columns(['user_id', 'created_at']).execute();
  await db.schema.createIndex('sources_backfill_idx').on('sources').columns(['backfill_id', 'status', 'recorded_at']).execute();

  // One recorded session. Its id is derived from (source, session index), so a retried ingest
  // writes the same row and the same sample file.
  await db.schema
    .createTable('activities')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('source_id', 'uuid', (c) => c.notNull().references('sources.id').onDelete('cascade'))
    .addColumn('session_index', 'integer', (c) => c.notNull())
    .addColumn('sport', 'text', (c) => c.notNull())
    .addColumn('start_time', 'timestamptz', (c) => c.notNull())
    .addColumn('end_time', 'timestamptz', (c) => c.notNull())
    .addColumn('utc_offset_seconds', 'integer', (c) => c.notNull())
    .addColumn('metrics', sql`text[]`, (c) => c.notNull())
    .addColumn('tags', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('summary', 'jsonb')
    .addColumn('laps', 'jsonb')
    .addColumn('distance', 'double precision')
    .addColumn('devices', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('samples', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('activities_source_session_key', ['source_id', 'session_index'])
    .execute();
  await sql`CREATE INDEX activities_user_start_idx ON activities (user_id, start_time DESC, id DESC)`.execute(db);
  await sql`CREATE INDEX activities_user_sport_idx ON activities (user_id, sport, start_time DESC)`.execute(db);
  await sql`CREATE INDEX activities_tags_idx ON activities USING gin (tags)`.execute(db);

  // Each application's own free-form object on an activity.
  await db.schema
    .createTable('activity_app_metadata')
    .addColumn('activity_id', 'uuid', (c) => c.notNull().references('activities.id').onDelete('cascade'))
    .addColumn('application_id', 'text', (c) => c.notNull().references('applications.id').onDelete('cascade'))
    .addColumn('data', 'jsonb', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('activity_app_metadata_pkey', ['activity_id', 'application_id'])
    .execute();
}
