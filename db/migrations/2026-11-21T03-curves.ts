import { sql, type Kysely } from 'kysely';

// Frozen in time: never import application code here.
export async function up(db: Kysely<any>): Promise<void> {
  // Each activity's curves, computed once at ingestion (engine/curves/activity-curves.ts): one row per metric.
  // Arrays are little-endian typed-array bytes: `best` Float64 and `best_start` Int32 for every
  // duration 1..n s; `level_duration`/`level_start` Int32 for every intensity level 1..K (the
  // value-indexed view); `awd` Int32 seconds at or above each level 1..K.
  await db.schema
    .createTable('activity_curves')
    .addColumn('activity_id', 'uuid', (c) => c.notNull().references('activities.id').onDelete('cascade'))
    .addColumn('metric', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('best', 'bytea')
    .addColumn('best_start', 'bytea')
    .addColumn('level_duration', 'bytea')
    .addColumn('level_start', 'bytea')
    .addColumn('awd', 'bytea', (c) => c.notNull())
    .addColumn('computed_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('activity_curves_pkey', ['activity_id', 'metric'])
    .execute();

  // Bumped in the transaction of every change to a user's activities: cached curve results are
  // keyed by it, so a change makes every earlier result unreachable.
  await db.schema
    .alterTable('users')
    .addColumn('data_version', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
}
