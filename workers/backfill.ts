import { rm } from 'node:fs/promises';
import type { Job } from 'bullmq';
import type { Backfill, Db } from '../db/database.ts';
import { completeBackfillIfDone, findBackfill, markBackfillFailed, markBackfillScanned, pendingBackfillSources } from '../db/backfills.ts';
import { recordedAt } from '../engine/ingest/peek.ts';
import { archivePath } from '../lib/storage.ts';
import type { Logger } from '../lib/log.ts';
import { ArchiveError, openArchive, readDirectory, readDirectoryEntry, type ArchiveEntry, type ArchiveLimits } from '../lib/archive.ts';
import { enqueueIngest, type BackfillJob, type Queues } from './queues.ts';
import { checkFile } from '../engine/ingest/check-file.ts';
import { storeSource } from '../db/source-store.ts';

export interface BackfillDeps {
  db: Db;
  queues: Queues;
  dataDir: string;
  maxFileBytes: number;
  log: Logger;
  now: () => Date;
}

/** Where a history's files come from: a zip archive or a directory tree. */
export interface HistoryReader {
  entries: ArchiveEntry[];
  skipped: number;
  read(entry: ArchiveEntry): Promise<Buffer>;
  close(): void;
}

export async function openHistory(file: string, kind: 'archive' | 'directory', limits: Partial<ArchiveLimits>): Promise<HistoryReader> {
  if (kind === 'archive') {
    const archive = await openArchive(file, limits);
    return {
      entries: archive.entries,
      skipped: archive.skipped.length,
      read: (e) => archive.read(e, limits.maxEntryBytes),
      close: () => archive.close(),
    };
  }
  const listing = await readDirectory(file, limits);
  return {
    entries: listing.entries,
    skipped: listing.skipped.length,
    read: (e) => readDirectoryEntry(file, e, limits.maxEntryBytes),
    close: () => {},
  };
}

/** Files being stored (original written, source row inserted) while the scan reads the next ones. */
const STORES_IN_FLIGHT = 4;

/**
 * Turn every file of a history into a source of the backfill's user (content already stored,
 * by an upload or an earlier attempt, is recognised by its hash and not stored twice), then queue
 * the backfill's unfinished sources newest first. Safe to run again: a resumed scan finds what the
 * first one stored, and queueing is keyed by source id.
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
): Promise<{ total: number; skipped: number; queued: number }> {
  let skipped = reader.skipped;
  let total = 0;
  const storing = new Set<Promise<unknown>>();
  let failure: { error: unknown } | undefined;
  for (const entry of reader.entries) {
    if (failure) break;
    let bytes: Buffer;
    try {
      bytes = await reader.read(entry);
    } catch (err) {
      if (!(err instanceof ArchiveError)) throw err;
      deps.log.warn('backfill entry skipped', { backfill_id: backfill.id, entry: entry.name, code: err.code });
      skipped += 1;
      continue;
    }
    const file = await checkFile(entry.fileName, bytes, deps.maxFileBytes);
    if (!file.format) {
      skipped += 1;
      continue;
    }
    total += 1;
    const stored: Promise<unknown> = storeSource(
      deps.db,
      deps.dataDir,
      { ...file, format: file.format },
      {
        userId: backfill.user_id,
        origin: 'backfill',
        sport: null,
        tags: [],
        backfillId: backfill.id,
        recordedAt: recordedAt(file.bytes, file.format),
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
  await markBackfillScanned(deps.db, backfill.id, { total, skipped }, deps.now());
  const pending = await pendingBackfillSources(deps.db, backfill.id);
  await enqueueIngest(deps.queues, pending, { backfill: true });
  if (!pending.length) await completeBackfillIfDone(deps.db, backfill.id, deps.now());
  return { total, skipped, queued: pending.length };
}

/** The job behind POST /api/v1/activities/backfill: scan the stored archive, then delete it. */
export function backfillProcessor(deps: BackfillDeps) {
  return async function backfill(job: Job<BackfillJob>) {
    const row = await findBackfill(deps.db, job.data.backfillId);
    if (!row || row.status === 'completed' || row.status === 'failed') return { skipped: true };
    const file = archivePath(deps.dataDir, row.id);
    // A retry after the scan finished (the worker stopped before the job completed): queue what is left.
    if (row.status === 'loading') {
      await rm(file, { force: true });
      const pending = await requeue(deps, row.id);
      if (!pending.length) await completeBackfillIfDone(deps.db, row.id, deps.now());
      return { queued: pending.length };
    }
    let reader: HistoryReader;
    try {
      reader = await openHistory(file, 'archive', { maxEntryBytes: deps.maxFileBytes });
    } catch (err) {
      if (!(err instanceof ArchiveError) && (err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      const message = err instanceof ArchiveError ? err.message : 'The archive is no longer stored';
      // Removed before the failure is recorded: whoever sees the backfill failed sees no archive left.
      await rm(file, { force: true });
      await markBackfillFailed(deps.db, row.id, message, deps.now());
      deps.log.warn('backfill failed: its archive could not be opened', {
        backfill_id: row.id,
        code: err instanceof ArchiveError ? err.code : 'ENOENT',
        reason: message,
        attempt: job.attemptsMade + 1,
      });
      return { failed: message };
    }
    try {
      const result = await scanHistory(deps, row, reader);
      await rm(file, { force: true });
      return result;
    } finally {
      reader.close();
    }
  };
}

async function requeue(deps: BackfillDeps, id: string) {
  const pending = await pendingBackfillSources(deps.db, id);
  await enqueueIngest(deps.queues, pending, { backfill: true });
  return pending;
}
