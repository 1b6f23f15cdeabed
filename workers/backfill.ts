import { mkdir } from 'node:fs/promises';
import type { Job } from 'bullmq';
import type { Backfill, Db } from '../db/database.ts';
import {
  completeBackfillIfDone,
  findBackfill,
  markBackfillFailed,
  markBackfillScanned,
  pendingBackfillSources,
  type ScanCounts,
} from '../db/backfills.ts';
import { recordedAt } from '../engine/ingest/peek.ts';
import { tmpDir } from '../lib/storage.ts';
import { archiveKey, isObjectMissing, type ObjectStore } from '../lib/object-store.ts';
import { withLocalCopy } from '../lib/object-cache.ts';
import type { Logger } from '../lib/log.ts';
import { ArchiveError } from '../lib/archive.ts';
import { withActor } from '../lib/actor.ts';
import { openNestedHistory, type History, type HistoryLimits } from '../lib/archive-nested.ts';
import { planHistory } from './backfill-plan.ts';
import { enqueueIngest, type BackfillJob, type Queues } from './queues.ts';
import { checkFile } from '../engine/ingest/check-file.ts';
import { storeSource } from '../db/source-store.ts';

export interface BackfillDeps {
  db: Db;
  queues: Queues;
  /** Where this host spools (DATA_DIR/tmp): nested zips too large for memory, a remote store's archive while it is read. */
  dataDir: string;
  /** The object store the originals are written to and the archive read from. */
  store: ObjectStore;
  maxFileBytes: number;
  log: Logger;
  now: () => Date;
}

/** Where a history's files come from: a zip archive or a directory tree, with the zips inside (lib/archive-nested.ts). */
export type HistoryReader = History;

/** Open a history; nested zips too large for memory are spooled to DATA_DIR/tmp (whose leftovers housekeeping removes after a day). */
export async function openHistory(
  file: string,
  kind: 'archive' | 'directory',
  limits: Partial<HistoryLimits>,
  dataDir: string,
): Promise<HistoryReader> {
  const spoolDir = tmpDir(dataDir);
  await mkdir(spoolDir, { recursive: true });
  return openNestedHistory(file, kind, limits, { spoolDir });
}

/** Files being stored (original written, source row inserted) while the scan reads the next ones. */
const STORES_IN_FLIGHT = 4;

const increment = (counts: Record<string, number>, key: string) => {
  counts[key] = (counts[key] ?? 0) + 1;
};

/**
 * Turn every file of a history into a source of the backfill's user (content already stored,
 * by an upload or an earlier attempt, is recognised by its hash and not stored twice), then queue
 * the backfill's unfinished sources newest first. Safe to run again: a resumed scan finds what the
 * first one stored, and queueing is keyed by source id.
 *
 * A Strava export's files carry their activities.csv row (./backfill-plan.ts) as the source's
 * `metadata` (name, description, sport) and tags (gear): stored with the source, so a retried or
 * reprocessed ingest applies them again, and content already stored keeps what it had.
 *
 * Entries are read one after another; up to STORES_IN_FLIGHT of them are being stored meanwhile
 * (their file writes and inserts overlap the reading and decompressing of the next: the scan of
 * 500 2 h rides took 4.2 ms a file when each waited for the one before). The first failure to
 * store one fails the scan once those in flight have settled.
 */
export async function scanHistory(
  deps: BackfillDeps,
  backfill: Backfill,
  reader: HistoryReader,
): Promise<{ total: number; skipped: number; queued: number; counts: ScanCounts }> {
  const counts: ScanCounts = { formats: {}, skipped: {}, nested_archives: reader.containers, strava: null };
  for (const s of reader.skipped) increment(counts.skipped, s.reason);
  const history = await planHistory(reader, deps.log);
  let total = 0;
  const storing = new Set<Promise<unknown>>();
  let failure: { error: unknown } | undefined;
  for (const entry of reader.entries) {
    if (failure) break;
    const plan = history.plan(entry);
    if ('skip' in plan) {
      increment(counts.skipped, plan.skip);
      continue;
    }
    let bytes: Buffer;
    try {
      bytes = await reader.read(entry);
    } catch (err) {
      if (!(err instanceof ArchiveError)) throw err;
      deps.log.warn('backfill entry skipped', { backfill_id: backfill.id, entry: entry.name, code: err.code });
      increment(counts.skipped, 'unreadable');
      continue;
    }
    const file = await checkFile(entry.fileName, bytes, deps.maxFileBytes);
    if (!file.format) {
      increment(counts.skipped, 'not_activity');
      continue;
    }
    total += 1;
    increment(counts.formats, file.format);
    const meta = plan.metadata;
    const stored: Promise<unknown> = storeSource(
      deps.db,
      deps.store,
      { ...file, format: file.format },
      {
        userId: backfill.user_id,
        origin: 'backfill',
        sport: null,
        tags: meta?.tags ?? [],
        backfillId: backfill.id,
        recordedAt: recordedAt(file.bytes, file.format),
        metadata: meta ? { name: meta.name, description: meta.description, sport: meta.sport } : null,
      },
    ).then(
      () => storing.delete(stored),
      (error: unknown) => {
        storing.delete(stored);
        failure ??= { error };
      },
    );
    storing.add(stored);
    if (storing.size >= STORES_IN_FLIGHT) await Promise.race(storing);
  }
  await Promise.all(storing);
  if (failure) throw failure.error;
  counts.strava = history.strava;
  const skipped = Object.values(counts.skipped).reduce((a, b) => a + b, 0);
  await markBackfillScanned(deps.db, backfill.id, { total, skipped, scan: counts }, deps.now());
  const pending = await pendingBackfillSources(deps.db, backfill.id);
  await enqueueIngest(deps.queues, pending, { backfill: true });
  if (!pending.length) await completeBackfillIfDone(deps.db, backfill.id, deps.now());
  return { total, skipped, queued: pending.length, counts };
}

/** The job behind POST /api/v1/activities/backfill: scan the stored archive, then delete it. */
export function backfillProcessor(deps: BackfillDeps) {
  return async function backfill(job: Job<BackfillJob>) {
    const row = await findBackfill(deps.db, job.data.backfillId);
    if (!row || row.status === 'completed' || row.status === 'failed') return { skipped: true };
    // An import started through a delegation: its sources (and so their ingests' events) name the same actor.
    return withActor(row.actor_id, () => scan(deps, job, row));
  };
}

/** The scan of one backfill's archive (or, after a crash past the scan, the queueing of what is left). */
async function scan(deps: BackfillDeps, job: Job<BackfillJob>, row: Backfill) {
  const key = archiveKey(row.id);
  // A retry after the scan finished (the worker stopped before the job completed): queue what is left.
  if (row.status === 'loading') {
    await deps.store.remove([key]);
    const pending = await requeue(deps, row.id);
    if (!pending.length) await completeBackfillIfDone(deps.db, row.id, deps.now());
    return { queued: pending.length };
  }
  const opened = await withLocalCopy(deps.store, key, tmpDir(deps.dataDir), async (file) => {
    let reader: HistoryReader;
    try {
      reader = await openHistory(file, 'archive', { maxEntryBytes: deps.maxFileBytes }, deps.dataDir);
    } catch (err) {
      if (!(err instanceof ArchiveError) && (err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      return { failed: err };
    }
    try {
      return { result: await scanHistory(deps, row, reader) };
    } finally {
      reader.close();
    }
  }).catch((err: unknown) => {
    if (isObjectMissing(err)) return { failed: err };
    throw err;
  });
  if ('result' in opened) {
    await deps.store.remove([key]);
    return opened.result;
  }
  const err = opened.failed;
  const message = err instanceof ArchiveError ? err.message : 'The archive is no longer stored';
  // Removed before the failure is recorded: whoever sees the backfill failed sees no archive left.
  await deps.store.remove([key]);
  await markBackfillFailed(deps.db, row.id, message, deps.now());
  deps.log.warn('backfill failed: its archive could not be opened', {
    backfill_id: row.id,
    code: err instanceof ArchiveError ? err.code : 'ENOENT',
    reason: message,
    attempt: job.attemptsMade + 1,
  });
  return { failed: message };
}

async function requeue(deps: BackfillDeps, id: string) {
  const pending = await pendingBackfillSources(deps.db, id);
  await enqueueIngest(deps.queues, pending, { backfill: true });
  return pending;
}
