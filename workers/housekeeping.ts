import { UnrecoverableError, type Job } from 'bullmq';
import type { Db } from '../db/database.ts';
import { deleteExpiredSessions } from '../db/sessions.ts';
import { deleteRetiredKeys, RETIRED_KEY_RETENTION_SECONDS } from '../db/signing-keys.ts';
import { deleteExpiredCodes, deleteSpentGrants } from '../db/grants.ts';
import { ACCESS_TOKEN_TTL_SECONDS } from '../lib/lifetimes.ts';
import { staleProcessingSources } from '../db/sources.ts';
import { markGaveUp } from './ingest.ts';
import type { Logger } from '../lib/log.ts';
import { activitiesDeletedSince, deleteFinishedEvents } from '../db/events.ts';
import { purgeDeletedUsers } from '../db/managed-users.ts';
import { deleteSpentDelegations } from '../db/delegations.ts';
import type { ChannelColumns } from '../engine/samples/channel-columns.ts';
import { removeStaleTemporaryFiles } from '../lib/storage.ts';
import { archiveKey, isStoreUnavailable, type ObjectStore } from '../lib/object-store.ts';
import { removeQueuedObjects } from '../db/object-deletions.ts';
import { enqueueTrainingLoad, requeueBackfills, requeueIngest, HousekeepingJob, type Queues } from './queues.ts';
import { loadVersion, usersNeedingLoad } from '../db/training-load.ts';
import { completeBackfillIfDone, markBackfillFailed, staleUnfinishedBackfills } from '../db/backfills.ts';

/**
 * Periodic clean-up: expired web sessions; signing keys retired long enough ago that no token
 * they signed can still be valid; authorization codes a day past expiry (kept that long so a late
 * replay still revokes its tokens); grants without a refresh token whose access tokens have all
 * expired; upload leftovers in DATA_DIR/tmp older than a day. And it queues again the ingest of
 * sources still `processing` after STALE_SOURCE_SECONDS (lib/config.ts) whose job was lost (an API process that
 * stopped between storing a source and queueing it, Redis down or restarted empty) or is over (failed
 * for good: a worker killed twice, retries run out during a PostgreSQL outage): see requeueIngest; a
 * source whose job waits or runs is not queued twice, one requeued too often is marked failed. Likewise
 * the scan of a backfill still `scanning` after STALE_SOURCE_SECONDS whose job is gone or over is
 * queued again (resumed), and a `loading` one with nothing left processing is completed. Events (and their delivery log) older than
 * EVENT_RETENTION_DAYS with nothing pending are deleted. The activities deleted in the last
 * COLUMN_SWEEP_HOURS are removed from their users' channel columns again (the delete request removes
 * them; this bounds how long their samples stay on disk should that have failed, or the process died
 * between the two). The users with activities lacking a training-load row (stored before training load,
 * or whose computation after ingest failed) stored over STALE_SOURCE_SECONDS ago get their load job queued. Idempotent: running it twice changes nothing more.
 */
export interface HousekeepingResult {
  sessions: number;
  signingKeys: number;
  codes: number;
  grants: number;
  /** Delegations whose only access token has expired (docs/coaching.md). */
  delegations: number;
  requeuedSources: number;
  /** Sources requeued too often already (MAX_REQUEUES), marked failed. */
  failedSources: number;
  /** Backfill scans queued again; backfills failed (scan requeued too often) or completed here. */
  requeuedBackfills: number;
  failedBackfills: number;
  completedBackfills: number;
  temporaryFiles: number;
  events: number;
  /** Deleted managed users removed for good (their deletion events all sent). */
  deletedUsers: number;
  /** Users whose channel columns were swept for activities deleted lately. */
  columnSweeps: number;
  /** Users whose training-load job was queued for activities without a load row. */
  trainingLoads: number;
  /** Objects of deleted rows removed now, the store having been out of reach at the deletion (db/object-deletions.ts); -1: still out of reach. */
  objectDeletions: number;
  /** Multipart uploads a killed writer left unfinished for a day, aborted (an S3 store's; their parts take room but are never visible). */
  abortedUploads: number;
}

/** How far back housekeeping sweeps deleted activities out of the channel columns (it runs hourly by default). */
export const COLUMN_SWEEP_HOURS = 25;

/** How long events and their webhook delivery log are kept. */
export const EVENT_RETENTION_DAYS = 30;

/** How long a deleted managed user's emptied row stays at least (docs/coaching.md): its deletion events go out meanwhile. */
export const DELETED_USER_RETENTION_HOURS = 1;

/** STALE_SOURCE_SECONDS's default. */
export const STALE_SOURCE_DEFAULT_SECONDS = 15 * 60;

export function housekeepingProcessor(deps: {
  db: Db;
  queues: Queues;
  /** This host's DATA_DIR, for its temporary files. */
  dataDir: string;
  store: ObjectStore;
  log: Logger;
  now: () => Date;
  staleSourceSeconds?: number;
  columns?: ChannelColumns;
}) {
  const staleMs = (deps.staleSourceSeconds ?? STALE_SOURCE_DEFAULT_SECONDS) * 1000;
  return async (job: Job<HousekeepingJob>): Promise<HousekeepingResult> => {
    const data = HousekeepingJob.safeParse(job.data);
    if (!data.success) throw new UnrecoverableError(`invalid job data: ${data.error.message}`);
    const now = deps.now();
    const sessions = await deleteExpiredSessions(deps.db, now);
    const signingKeys = await deleteRetiredKeys(deps.db, new Date(now.getTime() - RETIRED_KEY_RETENTION_SECONDS * 1000));
    const codes = await deleteExpiredCodes(deps.db, now);
    const grants = await deleteSpentGrants(deps.db, new Date(now.getTime() - (ACCESS_TOKEN_TTL_SECONDS + 60) * 1000));
    const delegations = await deleteSpentDelegations(deps.db, new Date(now.getTime() - (ACCESS_TOKEN_TTL_SECONDS + 60) * 1000));
    const { requeuedSources, failedSources, requeuedBackfills, failedBackfills, completedBackfills } = await requeueUnfinished(
      deps,
      new Date(now.getTime() - staleMs),
    );
    const temporaryFiles = await removeStaleTemporaryFiles(deps.dataDir, new Date(now.getTime() - 24 * 3600_000));
    const events = await deleteFinishedEvents(deps.db, new Date(now.getTime() - EVENT_RETENTION_DAYS * 86_400_000));
    const deletedUsers = await purgeDeletedUsers(deps.db, new Date(now.getTime() - DELETED_USER_RETENTION_HOURS * 3600_000));
    let columnSweeps = 0;
    if (deps.columns) {
      for (const [userId, ids] of await activitiesDeletedSince(deps.db, new Date(now.getTime() - COLUMN_SWEEP_HOURS * 3600_000))) {
        try {
          await deps.columns.remove(userId, ids);
          columnSweeps++;
        } catch (err) {
          deps.log.warn('could not remove deleted activities from the channel columns', { user_id: userId, err });
        }
      }
    }
    const objectDeletions = await removeQueuedObjects(deps.db, deps.store).catch((err: unknown) => {
      if (!isStoreUnavailable(err)) throw err;
      deps.log.warn('the object store is out of reach: queued object removals wait for the next run', { err: (err as Error).message });
      return -1;
    });
    const abortedUploads = deps.store.abortIncompleteUploads
      ? await deps.store.abortIncompleteUploads(new Date(now.getTime() - 24 * 3600_000)).catch((err: unknown) => {
          if (!isStoreUnavailable(err)) throw err;
          return -1;
        })
      : 0;
    let trainingLoads = 0;
    for (const userId of await usersNeedingLoad(deps.db, new Date(now.getTime() - staleMs))) {
      await enqueueTrainingLoad(deps.queues, userId, await loadVersion(deps.db, userId));
      trainingLoads++;
    }
    return {
      objectDeletions,
      abortedUploads,
      trainingLoads,
      columnSweeps,
      sessions,
      signingKeys,
      codes,
      grants,
      delegations,
      requeuedSources,
      failedSources,
      requeuedBackfills,
      failedBackfills,
      completedBackfills,
      temporaryFiles,
      events,
      deletedUsers,
    };
  };
}

/**
 * Queue again what is unfinished since before `before` and has no job waiting or running: the
 * ingest of sources still `processing` (one requeued MAX_REQUEUES times already is failed) and the
 * scan of backfills still `scanning`; complete the `loading` backfills with nothing left. Housekeeping
 * passes STALE_SOURCE_SECONDS ago; a worker whose Redis came back passes now (./runner.ts).
 */
export async function requeueUnfinished(deps: { db: Db; queues: Queues; store: ObjectStore; log: Logger; now: () => Date }, before: Date) {
  const now = deps.now();
  const stale = await staleProcessingSources(deps.db, before);
  const { queued, exhausted } = await requeueIngest(
    deps.queues,
    stale.map((s) => ({ id: s.id, backfill: !!s.backfill_id })),
  );
  for (const id of exhausted) await markGaveUp(deps, id);
  const backfills = await staleUnfinishedBackfills(deps.db, before);
  const scans = await requeueBackfills(
    deps.queues,
    backfills.filter((b) => b.status === 'scanning').map((b) => b.id),
  );
  for (const id of scans.exhausted) {
    await deps.store.remove([archiveKey(id)]); // removed first: a failed backfill has no archive left
    await markBackfillFailed(deps.db, id, 'The archive could not be read; send it again later', now);
    deps.log.warn('backfill failed: its scan was retried until its attempts ran out', { backfill_id: id });
  }
  let completedBackfills = 0;
  for (const b of backfills) if (b.status === 'loading' && (await completeBackfillIfDone(deps.db, b.id, now))) completedBackfills++;
  return {
    requeuedSources: queued.length,
    failedSources: exhausted.length,
    requeuedBackfills: scans.queued.length,
    failedBackfills: scans.exhausted.length,
    completedBackfills,
  };
}
