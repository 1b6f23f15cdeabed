import { sql, type Kysely } from 'kysely';

// Frozen in time: never import application code here.
export async function up(db: Kysely<any>): Promise<void> {
  // The outbox of domain events: written in the transaction of the change it reports, so a change
  // and its event commit together and a retried job that changes nothing publishes nothing.
  // `fanned_out_at` is set once deliveries exist for every application that should receive it.
  await db.schema
    .createTable('events')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('resource_id', 'text', (c) => c.notNull())
    .addColumn('occurred_at', 'timestamptz', (c) => c.notNull())
    .addColumn('fanned_out_at', 'timestamptz')
    .execute();
  await sql`CREATE INDEX events_pending_idx ON events (occurred_at) WHERE fanned_out_at IS NULL`.execute(db);

  // One event to one endpoint of one application, with the outcome of its latest attempt. The
  // response is kept only as a short excerpt.
  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('event_id', 'uuid', (c) => c.notNull().references('events.id').onDelete('cascade'))
    .addColumn('application_id', 'text', (c) => c.notNull().references('applications.id').onDelete('cascade'))
    .addColumn('endpoint', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending').check(sql`status IN ('pending', 'delivered', 'failed')`))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('response_excerpt', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_attempt_at', 'timestamptz')
    .addColumn('delivered_at', 'timestamptz')
    .addUniqueConstraint('webhook_deliveries_event_app_endpoint_key', ['event_id', 'application_id', 'endpoint'])
    .execute();
  await db.schema.createIndex('webhook_deliveries_app_idx').on('webhook_deliveries').columns(['application_id', 'created_at']).execute();
}
