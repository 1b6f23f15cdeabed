import { sql } from 'kysely';
import type { Db } from './database.ts';

/**
 * Fatigue-grid entries (engine/curves/after-grid.ts) shared by every host in `activity_fatigue_grids`:
 * a ride's entry is the same wherever it is computed, so it is computed once (by the ingest job, or
 * by the first request that lacked it) and a host's empty grid column is filled from here. An entry
 * counts only for the stamp (the activity's updated_at) and layout it was computed for.
 */

/** The stored entries of these activities that match their stamp and the layout, by id. */
export async function storedGrids(
  db: Db,
  layout: string,
  activities: readonly { id: string; stamp: number }[],
): Promise<Map<string, Float64Array>> {
  if (!activities.length) return new Map();
  const rows = await db
    .selectFrom('activity_fatigue_grids')
    .select(['activity_id', 'stamp', 'entry'])
    .where(
      'activity_id',
      'in',
      activities.map((a) => a.id),
    )
    .where('layout', '=', layout)
    .execute();
  const stamps = new Map(activities.map((a) => [a.id, a.stamp]));
  const out = new Map<string, Float64Array>();
  for (const r of rows) {
    if (stamps.get(r.activity_id) !== r.stamp || r.entry.byteLength % 8) continue;
    // A copy: the row's Buffer may share a pooled ArrayBuffer at any offset.
    const entry = new Float64Array(r.entry.byteLength / 8);
    new Uint8Array(entry.buffer).set(r.entry);
    out.set(r.activity_id, entry);
  }
  return out;
}

/** Store entries (replacing any of another stamp or layout); an activity deleted meanwhile is skipped. */
export async function storeGrids(
  db: Db,
  layout: string,
  entries: readonly { id: string; stamp: number; entry: Float64Array }[],
): Promise<void> {
  if (!entries.length) return;
  const ids = entries.map((e) => e.id);
  const stamps = entries.map((e) => e.stamp);
  const bytes = entries.map((e) => Buffer.from(e.entry.buffer, e.entry.byteOffset, e.entry.byteLength));
  await sql`
    INSERT INTO activity_fatigue_grids (activity_id, layout, stamp, entry)
    SELECT v.id, ${layout}, v.stamp, v.entry
    FROM unnest(${ids}::uuid[], ${stamps}::float8[], ${bytes}::bytea[]) AS v(id, stamp, entry)
    JOIN activities a ON a.id = v.id
    ON CONFLICT (activity_id) DO UPDATE SET layout = excluded.layout, stamp = excluded.stamp, entry = excluded.entry
  `.execute(db);
}
