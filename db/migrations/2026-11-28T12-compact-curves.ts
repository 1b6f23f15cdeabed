import type { Kysely } from 'kysely';

// Frozen in time: never import application code here.
export async function up(db: Kysely<any>): Promise<void> {
  // Stored curves take a fraction of the sample file's size (issue 25). The mean-max at every
  // duration and its starts are no longer stored: the per-activity mean-max route computes them from
  // the sample file (exact either way). Their bytes stay in the rows written before until those are
  // rewritten (`cli curves --all`, then (auto)vacuum makes the space reusable) and go back to the
  // operating system with `VACUUM FULL activity_curves`, which rewrites the table.
  await db.schema.alterTable('activity_curves').dropColumn('best').dropColumn('best_start').execute();
  // How `level_duration`, `level_start` and `awd` are encoded (engine/curves/curve-codec.ts): 0 =
  // little-endian Int32 (every row written before this migration), 1 = zigzag-delta varint runs (new
  // rows). Old rows are read as they are; `npm run cli -- curves --all` rewrites them compactly.
  await db.schema
    .alterTable('activity_curves')
    .addColumn('encoding', 'smallint', (c) => c.notNull().defaultTo(0))
    .execute();
}
