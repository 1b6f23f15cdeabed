import { sql } from 'kysely';
import type { Backfill, Db, Source } from './database.ts';
import type { StravaCounts } from '../lib/strava-export.ts';
import { actorColumn } from '../lib/actor.ts';

export function createBackfill(
  db: Db,
  values: { user_id: string; origin: 'api' | 'cli'; filename: string; id?: string },
): Promise<Backfill> {
  return db
    .insertInto('backfills')
    .values({ ...values, ...actorColumn() })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** A backfill still being read or loaded: scanning or loading. */
export function backfillInProgress(db: Db, userId: string): Promise<Backfill | undefined> {
  return db
    .selectFrom('backfills')
    .selectAll()
    .where('user_id', '=', userId)
    .where('status', 'in', ['scanning', 'loading'])
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/**
 * Start a user's backfill unless one of theirs is still in progress (then `{ busy }`, nothing stored):
 * a user's history imports run one at a time, which bounds the archive work one user can put on the
 * workers to one archive (BACKFILL_MAX_ARCHIVE_BYTES, its entries' limits) at once. Two requests at
 * once are serialised by a per-user transaction lock, so exactly one of them starts.
 */
export async function startBackfill(
  db: Db,
  values: { user_id: string; origin: 'api' | 'cli'; filename: string },
): Promise<{ backfill: Backfill } | { busy: Backfill }> {
  return db.transaction().execute(async (trx) => {
    await sql`SELECT pg_advisory_xact_lock(hashtext('backfill:' || ${values.user_id}))`.execute(trx);
    const busy = await backfillInProgress(trx, values.user_id);
    if (busy) return { busy };
    return { backfill: await createBackfill(trx, values) };
  });
}

/** Delete a backfill that is still `scanning` and has no source yet (its scan could not be queued). */
export async function deleteUnstartedBackfill(db: Db, id: string): Promise<void> {
  await db
    .deleteFrom('backfills')
    .where('id', '=', id)
    .where('status', '=', 'scanning')
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('sources').select(sql`1`.as('one')).where('sources.backfill_id', '=', id))),
    )
    .execute();
}

/** Backfills still `scanning` or `loading` that were started before `before` (housekeeping checks their jobs). */
export function staleUnfinishedBackfills(db: Db, before: Date): Promise<Pick<Backfill, 'id' | 'status'>[]> {
  return db
    .selectFrom('backfills')
    .select(['id', 'status'])
    .where('status', 'in', ['scanning', 'loading'])
    .where('created_at', '<', before)
    .orderBy('created_at')
    .limit(1000)
    .execute();
}

export function findBackfill(db: Db, id: string): Promise<Backfill | undefined> {
  return db.selectFrom('backfills').selectAll().where('id', '=', id).executeTakeFirst();
}

export function latestBackfill(db: Db, userId: string): Promise<Backfill | undefined> {
  return db
    .selectFrom('backfills')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** What a backfill's scan found (the backfill's `scan_counts`). */
export interface ScanCounts {
  /** Activity files found, by the format of their content (fit, gpx, tcx, csv): stored as sources, or already stored. */
  formats: Record<string, number>;
  /**
   * Entries left out, by reason: unsupported (another extension, encrypted, …), unsafe_name, too_large,
   * too_deep (a zip nested deeper than allowed), unreadable (corrupt in the archive), not_activity (the
   * content is no activity file), export_csv (a Strava export's activities.csv), export_other (its other files).
   */
  skipped: Record<string, number>;
  /** Zips inside the history that were opened. */
  nested_archives: number;
  /** A Strava export's activities.csv: its rows and how many matched a file; null for other histories. */
  strava: StravaCounts | null;
}

/** The archive has been read: its files are sources, queued newest first. */
export async function markBackfillScanned(
  db: Db,
  id: string,
  counts: { total: number; skipped: number; scan?: ScanCounts },
  now: Date,
): Promise<void> {
  await db
    .updateTable('backfills')
    .set({
      status: 'loading',
      files_total: counts.total,
      files_skipped: counts.skipped,
      scan_counts: counts.scan ? JSON.stringify(counts.scan) : null,
      scanned_at: now,
    })
    .where('id', '=', id)
    .where('status', '=', 'scanning')
    .execute();
}

export async function markBackfillFailed(db: Db, id: string, message: string, now: Date): Promise<void> {
  await db
    .updateTable('backfills')
    .set({ status: 'failed', error_message: message.slice(0, 2000), completed_at: now })
    .where('id', '=', id)
    .where('status', 'in', ['scanning', 'loading'])
    .execute();
}

/**
 * Complete a loading backfill once none of its sources is still processing. Each ingest calls this
 * after committing its own source, so the last one to finish always sees the backfill done.
 */
export async function completeBackfillIfDone(db: Db, id: string, now: Date): Promise<boolean> {
  const result = await db
    .updateTable('backfills')
    .set({ status: 'completed', completed_at: now })
    .where('id', '=', id)
    .where('status', '=', 'loading')
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('sources').select(sql`1`.as('one')).where('sources.backfill_id', '=', id).where('sources.status', '=', 'processing'),
        ),
      ),
    )
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** The backfill's sources still to ingest, newest first (files with no readable date last). */
export async function pendingBackfillSources(db: Db, id: string): Promise<string[]> {
  const rows = await db
    .selectFrom('sources')
    .select('id')
    .where('backfill_id', '=', id)
    .where('status', '=', 'processing')
    .orderBy(sql`recorded_at DESC NULLS LAST`)
    .orderBy('id')
    .execute();
  return rows.map((r) => r.id);
}

/**
 * How far back the history is loaded: the local start of the oldest activity among the backfill's
 * files that are done with no newer file still waiting (loading runs newest first, so this moves
 * backward). Null until the first file is done.
 */
export async function backfillLoadedUntil(db: Db, id: string): Promise<string | null> {
  const row = await sql<{ until: string | null }>`
    SELECT to_char(min(a.start_time AT TIME ZONE 'UTC' + make_interval(secs => a.utc_offset_seconds)), 'YYYY-MM-DD"T"HH24:MI:SS') AS until
    FROM activities a JOIN sources s ON s.id = a.source_id
    WHERE s.backfill_id = ${id} AND s.status = 'processed'
      AND s.recorded_at > coalesce(
        (SELECT max(p.recorded_at) FROM sources p WHERE p.backfill_id = ${id} AND p.status = 'processing'),
        '-infinity'::timestamptz)`.execute(db);
  return row.rows[0]?.until ?? null;
}

/** The earliest local start of any of the user's activities (what a user without a backfill has loaded). */
export async function earliestActivityStart(db: Db, userId: string): Promise<string | null> {
  const row = await sql<{ until: string | null }>`
    SELECT to_char(a.start_time AT TIME ZONE 'UTC' + make_interval(secs => a.utc_offset_seconds), 'YYYY-MM-DD"T"HH24:MI:SS') AS until
    FROM activities a WHERE a.user_id = ${userId} ORDER BY a.start_time ASC LIMIT 1`.execute(db);
  return row.rows[0]?.until ?? null;
}

/** Files of the backfill that failed, in the order they failed, after the ones already reported. */
export function failedBackfillSources(
  db: Db,
  id: string,
  notIn: string[],
): Promise<Pick<Source, 'id' | 'filename' | 'error_code' | 'error_message'>[]> {
  let q = db
    .selectFrom('sources')
    .select(['id', 'filename', 'error_code', 'error_message'])
    .where('backfill_id', '=', id)
    .where('status', '=', 'failed');
  if (notIn.length) q = q.where('id', 'not in', notIn);
  return q.orderBy('processed_at').orderBy('id').execute();
}

/** What became of one format's files. */
export interface FormatCounts {
  found: number;
  loaded: number;
  already_stored: number;
  failed: number;
  waiting: number;
}

/** What became of a backfill's files so far (`total` = loaded + failed + waiting: the files it stores and loads itself). */
export interface BackfillCounts {
  /** Activity files found in the history (the backfill row's `files_total`, known once scanned). */
  found: number;
  /** Entries left out: other formats, unsafe names, too large. */
  skipped: number;
  /** Files whose content was stored before (an upload or an earlier backfill): not loaded again. */
  already_stored: number;
  total: number;
  loaded: number;
  failed: number;
  waiting: number;
  /** By format of the files' content (fit, gpx, tcx, csv); {} for backfills scanned before these counts. */
  formats: Record<string, FormatCounts>;
  /** The entries left out, by reason (ScanCounts.skipped). */
  skipped_by_reason: Record<string, number>;
  nested_archives: number;
  /** A Strava export's activities.csv rows (ScanCounts.strava); null otherwise. */
  strava: StravaCounts | null;
}

export async function backfillCounts(
  db: Db,
  backfill: Pick<Backfill, 'id' | 'files_total' | 'files_skipped' | 'scan_counts'>,
): Promise<BackfillCounts> {
  const rows = await db
    .selectFrom('sources')
    .select([
      'type',
      sql<number>`count(*) FILTER (WHERE status = 'processed')::int`.as('loaded'),
      sql<number>`count(*) FILTER (WHERE status = 'failed')::int`.as('failed'),
      sql<number>`count(*) FILTER (WHERE status = 'processing')::int`.as('waiting'),
    ])
    .where('backfill_id', '=', backfill.id)
    .groupBy('type')
    .execute();
  const scan = backfill.scan_counts as ScanCounts | null;
  const formats: Record<string, FormatCounts> = {};
  for (const [format, found] of Object.entries(scan?.formats ?? {}))
    formats[format] = { found, loaded: 0, already_stored: 0, failed: 0, waiting: 0 };
  let loaded = 0;
  let failed = 0;
  let waiting = 0;
  for (const r of rows) {
    loaded += r.loaded;
    failed += r.failed;
    waiting += r.waiting;
    const f = (formats[r.type] ??= { found: 0, loaded: 0, already_stored: 0, failed: 0, waiting: 0 });
    Object.assign(f, { loaded: r.loaded, failed: r.failed, waiting: r.waiting });
  }
  for (const f of Object.values(formats)) f.already_stored = Math.max(0, f.found - f.loaded - f.failed - f.waiting);
  const total = loaded + failed + waiting;
  return {
    found: backfill.files_total,
    skipped: backfill.files_skipped,
    already_stored: Math.max(0, backfill.files_total - total),
    total,
    loaded,
    failed,
    waiting,
    formats,
    skipped_by_reason: scan?.skipped ?? {},
    nested_archives: scan?.nested_archives ?? 0,
    strava: scan?.strava ?? null,
  };
}
