import { sql } from 'kysely';
import type { Db } from '../db/database.ts';

/**
 * The storage benchmark's athletes made by SQL copy (bench/storage.ts): one athlete's sources,
 * activities, stored curves and fatigue-grid rows copied to another user under new ids, the rows'
 * `updated_at` kept, so each copied grid row holds for its activity's stamp. A host answers the copies'
 * fatigue curves on the grid from those rows; their sample objects are not copied (the load is on the
 * grid, and no request of it reads samples).
 */
async function columnsOf(db: Db, table: string): Promise<string[]> {
  const rows = await sql<{ column_name: string }>`
    SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ${table} ORDER BY ordinal_position
  `.execute(db);
  return rows.rows.map((r) => r.column_name);
}

export async function cloneAthlete(db: Db, from: string, to: string): Promise<void> {
  const sourceCols = await columnsOf(db, 'sources');
  const activityCols = await columnsOf(db, 'activities');
  const curveCols = await columnsOf(db, 'activity_curves');
  const pick = (cols: string[], table: string, replace: Record<string, string>) =>
    sql.raw(cols.map((c) => replace[c] ?? `${table}.${c}`).join(', '));
  const names = (cols: string[]) => sql.raw(cols.join(', '));
  await db.transaction().execute(async (trx) => {
    await sql`CREATE TEMP TABLE smap ON COMMIT DROP AS SELECT id AS old, gen_random_uuid() AS new FROM sources WHERE user_id = ${from}`.execute(
      trx,
    );
    await sql`CREATE TEMP TABLE amap ON COMMIT DROP AS SELECT id AS old, gen_random_uuid() AS new FROM activities WHERE user_id = ${from}`.execute(
      trx,
    );
    await sql`
      INSERT INTO sources (${names(sourceCols)})
      SELECT ${pick(sourceCols, 's', { id: 'smap.new', user_id: `'${to}'::uuid`, backfill_id: 'NULL' })}
      FROM sources s JOIN smap ON smap.old = s.id
    `.execute(trx);
    await sql`
      INSERT INTO activities (${names(activityCols)})
      SELECT ${pick(activityCols, 'a', { id: 'amap.new', user_id: `'${to}'::uuid`, source_id: 'smap.new' })}
      FROM activities a JOIN amap ON amap.old = a.id JOIN smap ON smap.old = a.source_id
    `.execute(trx);
    await sql`
      INSERT INTO activity_curves (${names(curveCols)})
      SELECT ${pick(curveCols, 'c', { activity_id: 'amap.new' })}
      FROM activity_curves c JOIN amap ON amap.old = c.activity_id
    `.execute(trx);
    await sql`
      INSERT INTO activity_fatigue_grids (activity_id, layout, stamp, entry)
      SELECT amap.new, g.layout, g.stamp, g.entry FROM activity_fatigue_grids g JOIN amap ON amap.old = g.activity_id
    `.execute(trx);
  });
}
