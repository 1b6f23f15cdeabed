import { sql, type Kysely } from 'kysely';

// Frozen in time: never import application code here.
export async function up(db: Kysely<any>): Promise<void> {
  // The thresholds an athlete declares, per sport, each holding from `valid_from` until the next
  // entry of the same sport. Every value is optional: an entry that leaves one out keeps the
  // earlier entry's value for it. Lab tests' results are read from `tests` where they are needed.
  await db.schema
    .createTable('thresholds')
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('sport', 'text', (c) => c.notNull())
    .addColumn('valid_from', 'date', (c) => c.notNull())
    .addColumn('critical_power', 'double precision')
    .addColumn('w_prime', 'double precision')
    .addColumn('critical_speed', 'double precision')
    .addColumn('threshold_heart_rate', 'double precision')
    .addColumn('max_heart_rate', 'double precision')
    .addColumn('resting_heart_rate', 'double precision')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('thresholds_pkey', ['user_id', 'sport', 'valid_from'])
    .execute();

  // Per user: the version of everything a training-load row is computed from (thresholds, lab tests'
  // results, zone boundaries), bumped by every change in the transaction that makes it, and the zone
  // boundaries the athlete edited (null: the default models).
  await db.schema
    .createTable('training_settings')
    .addColumn('user_id', 'uuid', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('zones', 'jsonb')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  // Per activity, what its thresholds make of it: training stress (null with a reason when there is
  // none), time in zones, the lowest W′ balance; `version` is the user's training_settings.version it
  // was computed under, `day` the local date of its start (the day its stress counts on).
  await db.schema
    .createTable('activity_load')
    .addColumn('activity_id', 'uuid', (c) => c.primaryKey().references('activities.id').onDelete('cascade'))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('sport', 'text', (c) => c.notNull())
    .addColumn('day', 'date', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('stress', 'double precision')
    .addColumn('method', 'text')
    .addColumn('intensity_factor', 'double precision')
    .addColumn('reason', 'text')
    .addColumn('time_in_zones', 'jsonb', (c) => c.notNull())
    .addColumn('w_prime_balance_min', 'double precision')
    .addColumn('thresholds', 'jsonb', (c) => c.notNull())
    .addColumn('computed_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  // The chart's scan: a user's days in order, the stress summed per day.
  await sql`CREATE INDEX activity_load_user_day_idx ON activity_load (user_id, day) INCLUDE (stress, sport)`.execute(db);
}
