import type { Kysely } from 'kysely';

// Frozen in time: never import application code here.
export async function up(db: Kysely<any>): Promise<void> {
  // Each ride's fatigue grid (its best powers after every 250 kJ), computed at ingestion or by the
  // first request that lacked it, for every host: a host whose channel columns are empty (a new one,
  // one that lost its disk) fills its grid column from these rows instead of every ride's samples.
  // `stamp` is the activity's updated_at (epoch ms) the entry was computed for; `layout` the grid's
  // (engine/curves/after-grid.ts AFTER_GRID_CHANNEL): a row of another stamp or layout is not used.
  await db.schema
    .createTable('activity_fatigue_grids')
    .addColumn('activity_id', 'uuid', (c) => c.primaryKey().references('activities.id').onDelete('cascade'))
    .addColumn('layout', 'text', (c) => c.notNull())
    .addColumn('stamp', 'float8', (c) => c.notNull())
    .addColumn('entry', 'bytea', (c) => c.notNull())
    .execute();
}
