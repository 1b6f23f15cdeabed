import type { Redis } from 'ioredis';
import { Queue } from 'bullmq';
import { z } from 'zod';

/**
 * The BullMQ queues, their jobs' payloads and the helpers that queue them: every producer (API
 * routes, workers, the CLI) queues through these, so job ids, retries and retention are decided here.
 */
export const QUEUE_NAMES = {
  housekeeping: 'housekeeping',
  ingest: 'ingest',
  backfill: 'backfill',
  curves: 'curves',
  reprocess: 'reprocess',
  webhooks: 'webhooks',
  trainingLoad: 'training-load',
} as const;

/** The periodic clean-up (./housekeeping.ts); one task today. */
export const HousekeepingJob = z.object({ task: z.literal('purge-expired') });
export type HousekeepingJob = z.infer<typeof HousekeepingJob>;

/** Read one stored source file into activities. */
export interface IngestJob {
  sourceId: string;
  /** How many finished jobs of this source came before this one (requeueIngest). */
  requeues?: number;
}
/** Read a history archive into sources, then queue their ingest newest first. */
export interface BackfillJob {
  backfillId: string;
  /** How many finished jobs of this backfill came before this one (requeueBackfills). */
  requeues?: number;
}

/** (Re)compute the stored curves of existing activities: one user's, or every user's. */
export interface CurvesJob {
  userId?: string;
  /** Recompute every activity, not only those whose curves are missing or outdated. */
  all?: boolean;
}

/** Re-derive one source's activities (sample files, rows, curves) from its original file under the current ingest rules (./reprocess.ts). */
export interface ReprocessJob {
  sourceId: string;
  /** Re-derive its activities already at the current rules' version too (`cli reprocess --all`). */
  all?: boolean;
}

/** Compute the user's missing training-load rows under their inputs' `version` (./training-load.ts). */
export interface TrainingLoadJob {
  userId: string;
  version: number;
}

/** `fan-out`: create an event's deliveries; `deliver`: one attempt at one delivery (retried with backoff). */
export type WebhookJob = { eventId: string } | { deliveryId: string };

export interface Queues {
  housekeeping: Queue<HousekeepingJob>;
  ingest: Queue<IngestJob>;
  backfill: Queue<BackfillJob>;
  curves: Queue<CurvesJob>;
  reprocess: Queue<ReprocessJob>;
  webhooks: Queue<WebhookJob>;
  trainingLoad: Queue<TrainingLoadJob>;
}

export function createQueues(connection: Redis, prefix: string): Queues {
  const queues: Queues = {
    housekeeping: new Queue<HousekeepingJob>(QUEUE_NAMES.housekeeping, { connection, prefix }),
    ingest: new Queue<IngestJob>(QUEUE_NAMES.ingest, { connection, prefix }),
    backfill: new Queue<BackfillJob>(QUEUE_NAMES.backfill, { connection, prefix }),
    curves: new Queue<CurvesJob>(QUEUE_NAMES.curves, { connection, prefix }),
    reprocess: new Queue<ReprocessJob>(QUEUE_NAMES.reprocess, { connection, prefix }),
    webhooks: new Queue<WebhookJob>(QUEUE_NAMES.webhooks, { connection, prefix }),
    trainingLoad: new Queue<TrainingLoadJob>(QUEUE_NAMES.trainingLoad, { connection, prefix }),
  };
  // A queue re-emits its connection's errors; unheard, an 'error' event is an uncaught exception
  // that ends the process when Redis goes away. The commands that fail meanwhile say so themselves.
  for (const queue of Object.values(queues) as Queue[]) queue.on('error', () => {});
  return queues;
}

const BACKFILL_JOB = { attempts: 3, backoff: { type: 'exponential', delay: 5_000 }, removeOnComplete: 1_000, removeOnFail: 1_000 } as const;

/** A backfill's scan retries transient failures; its job id is the backfill's, so a retried request queues it once. */
export async function enqueueBackfill(queues: Queues, backfillId: string): Promise<void> {
  await queues.backfill.add('backfill', { backfillId }, { ...BACKFILL_JOB, jobId: backfillId });
}

/**
 * Queue again the scan of backfills still `scanning` whose job is gone (Redis restarted empty) or
 * over (its retries ran out while PostgreSQL was down): the scan resumes, recognising the files an
 * earlier attempt stored. As requeueIngest: a job waiting or running is left alone, a finished one
 * is replaced, and a backfill whose scan was requeued MAX_REQUEUES times is returned in `exhausted`
 * (the caller fails it).
 */
export async function requeueBackfills(queues: Queues, backfillIds: string[]): Promise<{ queued: string[]; exhausted: string[] }> {
  const queued: string[] = [];
  const exhausted: string[] = [];
  for (const backfillId of backfillIds) {
    const job = await queues.backfill.getJob(backfillId);
    let requeues = 0;
    if (job) {
      const state = await job.getState();
      if (state !== 'completed' && state !== 'failed') continue;
      requeues = (job.data.requeues ?? 0) + 1;
      if (requeues > MAX_REQUEUES) {
        exhausted.push(backfillId);
        continue;
      }
      await queues.backfill.remove(backfillId);
    }
    await queues.backfill.add('backfill', { backfillId, ...(requeues ? { requeues } : {}) }, { ...BACKFILL_JOB, jobId: backfillId });
    queued.push(backfillId);
  }
  return { queued, exhausted };
}

/** Ingest jobs retry transient failures (database, disk); a file that cannot be read fails at once. */
const INGEST_JOB = { attempts: 3, backoff: { type: 'exponential', delay: 2_000 }, removeOnComplete: 1_000, removeOnFail: 5_000 } as const;
/**
 * History files wait behind manual uploads: BullMQ serves unprioritised jobs first, then prioritised
 * ones lowest first (FIFO among equals). The k-th file of a backfill (newest first) gets
 * BACKFILL_PRIORITY + k, so the files of several users' histories take turns: a one-file import
 * does not wait behind another user's thousand (BullMQ's lowest priority is 2^21).
 */
const BACKFILL_PRIORITY = 10;
const LOWEST_PRIORITY = 2 ** 21;

/**
 * Queue the ingest of sources, in the given order. The job id is the source id, so queueing a
 * source twice (a retried request, a resumed backfill) runs it once.
 */
export async function enqueueIngest(queues: Queues, sourceIds: string[], opts: { backfill?: boolean } = {}): Promise<void> {
  if (!sourceIds.length) return;
  await queues.ingest.addBulk(
    sourceIds.map((sourceId, k) => ({
      name: 'ingest',
      data: { sourceId },
      opts: { ...INGEST_JOB, jobId: sourceId, ...(opts.backfill ? { priority: Math.min(BACKFILL_PRIORITY + k, LOWEST_PRIORITY) } : {}) },
    })),
  );
}

/**
 * Queue again the ingest of sources that are still `processing`: their job may be gone (Redis lost
 * it, or the request that stored them could not queue it) or over (failed for good after a worker
 * was killed twice, "stalled more than allowable limit", or after retries that ran out while
 * PostgreSQL was down, so that the source could not be marked). A finished job is removed first,
 * since a job id that still exists queues nothing; a job waiting, delayed or running is left alone,
 * so a source is never queued twice at once. A source requeued MAX_REQUEUES times already is
 * returned in `exhausted` instead: the caller marks it failed, so a file that kills its worker
 * every time ends `failed` instead of running forever.
 */
export async function requeueIngest(
  queues: Queues,
  sources: { id: string; backfill: boolean }[],
): Promise<{ queued: string[]; exhausted: string[] }> {
  const queued: string[] = [];
  const exhausted: string[] = [];
  const fresh: { id: string; backfill: boolean; requeues: number }[] = [];
  for (const source of sources) {
    const job = await queues.ingest.getJob(source.id);
    if (!job) {
      fresh.push({ ...source, requeues: 0 });
      continue;
    }
    const state = await job.getState();
    if (state !== 'completed' && state !== 'failed') continue;
    const requeues = job.data.requeues ?? 0;
    if (requeues >= MAX_REQUEUES) {
      exhausted.push(source.id);
      continue;
    }
    await queues.ingest.remove(source.id);
    fresh.push({ ...source, requeues: requeues + 1 });
  }
  if (fresh.length) {
    await queues.ingest.addBulk(
      fresh.map((s) => ({
        name: 'ingest',
        data: { sourceId: s.id, ...(s.requeues ? { requeues: s.requeues } : {}) },
        opts: { ...INGEST_JOB, jobId: s.id, ...(s.backfill ? { priority: BACKFILL_PRIORITY } : {}) },
      })),
    );
    queued.push(...fresh.map((s) => s.id));
  }
  return { queued, exhausted };
}

/** How many times one source's finished ingest job is replaced by requeueIngest before the source is failed. */
export const MAX_REQUEUES = 3;

/**
 * Queue the computation of a user's missing training-load rows under their inputs' version. One job
 * per (user, version): a change queues the job of its new version, which a running job of an older
 * one cannot swallow; the same version queued twice is one job.
 */
export async function enqueueTrainingLoad(queues: Queues, userId: string, version: number): Promise<void> {
  await queues.trainingLoad.add(
    'training-load',
    { userId, version },
    {
      jobId: `load-${userId}-${version}`,
      attempts: 3,
      backoff: { type: 'exponential', delay: 5_000 },
      removeOnComplete: true,
      removeOnFail: 100,
    },
  );
}

/**
 * Queue a curves recompute. One job per (user | everyone, all) is pending at a time: a second
 * request while the first waits is the same job.
 */
export async function enqueueCurves(queues: Queues, job: CurvesJob): Promise<string> {
  const jobId = curvesJobId(job);
  // Finished jobs are removed (a kept one would swallow the next request with its id); a waiting
  // caller listens for the job's completed/failed event from before it enqueues (bin/cli.ts).
  const added = await queues.curves.add('curves', job, {
    jobId,
    attempts: 3,
    backoff: { type: 'exponential', delay: 5_000 },
    removeOnComplete: true,
    removeOnFail: true,
  });
  return added.id ?? jobId;
}

/** The id of the curves job of (user | everyone, all): the same request while one waits is that job. */
export function curvesJobId(job: CurvesJob): string {
  return `curves-${job.userId ?? 'everyone'}-${job.all ? 'all' : 'missing'}`;
}

/**
 * Queue the re-derivation of sources' activities (`cli reprocess`), one job per source. The job id
 * is the source's, so a source is never reprocessed by two jobs at once: queueing it while its job
 * waits or runs (the command run twice, or again after Ctrl-C) is that job. Finished jobs are
 * removed, so the next request queues anew; the caller learns the outcome from the queue's
 * completed/failed events, read from before it queues (bin/cli.ts).
 */
export async function enqueueReprocess(queues: Queues, sourceIds: string[], opts: { all?: boolean } = {}): Promise<string[]> {
  if (!sourceIds.length) return [];
  await queues.reprocess.addBulk(
    sourceIds.map((sourceId) => ({
      name: 'reprocess',
      data: { sourceId, ...(opts.all ? { all: true } : {}) },
      opts: {
        jobId: reprocessJobId(sourceId),
        attempts: 3,
        backoff: { type: 'exponential', delay: 5_000 },
        removeOnComplete: true,
        removeOnFail: true,
      },
    })),
  );
  return sourceIds.map(reprocessJobId);
}

/** The id of the reprocess job of a source. */
export function reprocessJobId(sourceId: string): string {
  return `reprocess-${sourceId}`;
}

/**
 * Queue the fan-out of events. The job id is the event's, so the relay seeing an event twice (or
 * two relays seeing it) runs one job; finished jobs stay an hour to keep that true meanwhile.
 */
export async function enqueueFanOut(queues: Queues, eventIds: string[]): Promise<void> {
  if (!eventIds.length) return;
  await queues.webhooks.addBulk(
    eventIds.map((eventId) => ({
      name: 'fan-out',
      data: { eventId },
      opts: {
        jobId: `event-${eventId}`,
        attempts: 5,
        backoff: { type: 'exponential', delay: 1_000 },
        removeOnComplete: { age: 3600 },
        removeOnFail: { age: 7 * 86400 },
      },
    })),
  );
}

/**
 * How many attempts a delivery gets: retries wait base, 2·base, 4·base, … (BullMQ's exponential
 * backoff) for as long as the wait stays within `maxDelayMs`.
 */
export function deliveryAttempts(baseMs: number, maxDelayMs: number): number {
  let attempts = 1;
  for (let delay = baseMs; delay <= maxDelayMs; delay *= 2) attempts++;
  return attempts;
}

/** Queue attempts at deliveries; the job id is the delivery's, so a delivery is never queued twice at once. */
export async function enqueueDeliveries(
  queues: Queues,
  deliveryIds: string[],
  retry: { baseMs: number; maxDelayMs: number },
): Promise<void> {
  if (!deliveryIds.length) return;
  const attempts = deliveryAttempts(retry.baseMs, retry.maxDelayMs);
  await queues.webhooks.addBulk(
    deliveryIds.map((deliveryId) => ({
      name: 'deliver',
      data: { deliveryId },
      opts: {
        jobId: `delivery-${deliveryId}`,
        attempts,
        backoff: { type: 'exponential', delay: retry.baseMs },
        removeOnComplete: { age: 3600 },
        removeOnFail: { age: 86400 },
      },
    })),
  );
}

export async function closeQueues(queues: Queues): Promise<void> {
  await Promise.all(Object.values(queues).map((q: Queue) => q.close()));
}
