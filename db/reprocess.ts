import { sql } from 'kysely';
import type { ActivityRow, Db } from './database.ts';
import { jsonColumns, type NewActivity } from './activities.ts';
import { storeCurves, storedCurvesEqual } from './curves.ts';
import { recordEvents } from './events.ts';
import { bumpDataAndReadVersion } from './read-version.ts';
import { INGEST_RULES_VERSION } from '../engine/ingest/rules.ts';

/**
 * Re-deriving stored activities from their original files under the current ingest rules
 * (`npm run cli -- reprocess`, workers/reprocess.ts): which sources to queue, and the transaction
 * that replaces what an activity was derived into (its row's derived columns and its curves; its
 * sample file is written by the caller while the transaction holds the rows).
 */

/** Whose activities, and whether those already at INGEST_RULES_VERSION are re-derived too. */
export interface ReprocessSelection {
  userId?: string;
  all?: boolean;
}

function selected(db: Db, sel: ReprocessSelection) {
  let q = db.selectFrom('activities');
  if (!sel.all) q = q.where('ingest_version', '<', INGEST_RULES_VERSION);
  if (sel.userId) q = q.where('user_id', '=', sel.userId);
  return q;
}

/** A page of the selection's sources by id (pass the last one as `after` for the next), each with its selected activities' count. */
export async function sourcesToReprocess(
  db: Db,
  sel: ReprocessSelection & { after?: string; limit: number },
): Promise<{ source_id: string; activities: number }[]> {
  let q = selected(db, sel).select(['source_id', sql<string>`count(*)`.as('activities')]);
  if (sel.after) q = q.where('source_id', '>', sel.after);
  const rows = await q.groupBy('source_id').orderBy('source_id').limit(sel.limit).execute();
  return rows.map((r) => ({ source_id: r.source_id, activities: Number(r.activities) }));
}

/** How many activities (of every user) were made by ingest rules older than INGEST_RULES_VERSION: one index range (activities_ingest_version_idx). */
export async function countOlderIngestRules(db: Db): Promise<number> {
  const row = await selected(db, {}).select(sql<string>`count(*)`.as('n')).executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** The activities still stored of a source, by session. */
export function activitiesOfSource(
  db: Db,
  sourceId: string,
): Promise<Pick<ActivityRow, 'id' | 'session_index' | 'ingest_version' | 'updated_at'>[]> {
  return db
    .selectFrom('activities')
    .select(['id', 'session_index', 'ingest_version', 'updated_at'])
    .where('source_id', '=', sourceId)
    .orderBy('session_index')
    .execute();
}

/** The columns a parse derives (everything but identity, ownership and the user's tags). */
const DERIVED = [
  'sport',
  'start_time',
  'end_time',
  'utc_offset_seconds',
  'metrics',
  'summary',
  'laps',
  'distance',
  'devices',
  'samples',
  'implausible_samples',
  'ingest_version',
  'timer_seconds',
  'moving_seconds',
  'device_summary',
  'dropped_records',
  'device_checks',
] as const;

type Derived = Pick<ActivityRow, (typeof DERIVED)[number]>;

/** A new row's derived columns as stored (absent fields are null; the rules' version defaults to the current). */
function derivedOf(a: NewActivity): Derived {
  return {
    sport: a.sport,
    start_time: a.start_time,
    end_time: a.end_time,
    utc_offset_seconds: a.utc_offset_seconds,
    metrics: a.metrics,
    summary: a.summary,
    laps: a.laps,
    distance: a.distance,
    devices: a.devices,
    samples: a.samples,
    implausible_samples: a.implausible_samples,
    ingest_version: a.ingest_version ?? INGEST_RULES_VERSION,
    timer_seconds: a.timer_seconds ?? null,
    moving_seconds: a.moving_seconds ?? null,
    device_summary: a.device_summary ?? null,
    dropped_records: a.dropped_records ?? null,
    device_checks: a.device_checks ?? null,
  };
}

/**
 * The derived columns as JSON with sorted keys: jsonb keeps its own key order, and a value goes
 * through JSON on its way in (NaN and undefined as null, -0 as 0), so both sides are compared so.
 */
function comparable(d: Derived): string {
  const picked = Object.fromEntries(DERIVED.map((k) => [k, d[k]]));
  const plain = JSON.parse(JSON.stringify({ ...picked, start_time: d.start_time.getTime(), end_time: d.end_time.getTime() })) as unknown;
  return JSON.stringify(plain, (_key, value: unknown) =>
    value && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : value,
  );
}

export interface ReprocessHooks {
  /** Called with the activities' rows locked: which of these ids' sample files differ from what the new parse gives (missing ones do). */
  samplesDiffer(ids: string[]): Promise<Set<string>>;
  /** Write these ids' sample files; awaited before the versions and events are written and the transaction commits. */
  writeSamples(ids: string[]): Promise<void>;
  /**
   * A retried attempt: an earlier one may have put sample files in place and died before its
   * commit, so a file that now equals the new one may still hide a change from caches. Its rows'
   * `updated_at` and the user's versions then move even when nothing differs (no event).
   */
  retried?: boolean;
}

export interface ReprocessOutcome {
  /** Activities whose row, curves or sample file changed: each got one `activity_updated`. */
  changed: string[];
  unchanged: string[];
  /** Activities deleted since the caller listed them: not written. */
  gone: string[];
}

/**
 * Replace what a source's activities were derived into with `rows` (a new parse of its original,
 * ids as stored), in one transaction: the activities still stored are locked (a deletion waits for
 * the commit, so no sample file is written for a deleted activity after its removal), compared with
 * the new parse (derived columns, curves, and the sample file through `samplesDiffer`), and those
 * that differ get their derived columns (`updated_at` set: the channel columns' stamp), their
 * curves when those differ, and their sample file (`writeSamples`, awaited last, so the commit comes
 * only once the files are in place). Then, if any changed, the user's data and read versions are
 * bumped (cached reads and computed results, and channel columns, of the old data are no longer
 * used) and one `activity_updated` per changed activity is recorded. Rows are only updated, never
 * inserted: an activity deleted meanwhile (or before: one session of a multisport file) stays
 * deleted. Tags, ids, sources and app metadata are not touched.
 *
 * Idempotent: a second run with the same rules finds nothing different and writes nothing.
 */
export async function replaceDerivedActivities(
  db: Db,
  source: { id: string; user_id: string },
  rows: NewActivity[],
  now: Date,
  hooks: ReprocessHooks,
): Promise<ReprocessOutcome> {
  return db.transaction().execute(async (trx) => {
    const ids = rows.map((r) => r.id);
    const stored = ids.length
      ? await trx
          .selectFrom('activities')
          .selectAll()
          .where('source_id', '=', source.id)
          .where('id', 'in', ids)
          .orderBy('id')
          .forUpdate()
          .execute()
      : [];
    const byId = new Map(stored.map((r) => [r.id, r]));
    const present = rows.filter((r) => byId.has(r.id));
    const gone = rows.filter((r) => !byId.has(r.id)).map((r) => r.id);
    const filesDiffer = present.length ? await hooks.samplesDiffer(present.map((r) => r.id)) : new Set<string>();
    const changed: string[] = [];
    const unchanged: string[] = [];
    for (const row of present) {
      const next = derivedOf(row);
      const rowDiffers = comparable(next) !== comparable(byId.get(row.id)!);
      const curvesDiffer = !(await storedCurvesEqual(trx, row.id, row.curves));
      if (!rowDiffers && !curvesDiffer && !filesDiffer.has(row.id)) {
        unchanged.push(row.id);
        continue;
      }
      changed.push(row.id);
      await trx
        .updateTable('activities')
        .set({ ...next, ...jsonColumns(next), updated_at: now })
        .where('id', '=', row.id)
        .execute();
      if (curvesDiffer) await storeCurves(trx, row.id, row.curves, now);
    }
    const touched = hooks.retried ? unchanged : [];
    if (touched.length) await trx.updateTable('activities').set({ updated_at: now }).where('id', 'in', touched).execute();
    await hooks.writeSamples(present.filter((r) => filesDiffer.has(r.id)).map((r) => r.id));
    if (changed.length || touched.length) await bumpDataAndReadVersion(trx, source.user_id);
    await recordEvents(
      trx,
      changed.map((id) => ({ user_id: source.user_id, type: 'activity_updated' as const, resource_id: id })),
      now,
    );
    return { changed, unchanged, gone };
  });
}
