import { DelayedError, type Processor } from 'bullmq';
import type { Logger } from '../lib/log.ts';
import { isOutage } from '../lib/outage.ts';

/** How long a job waits, when PostgreSQL or Redis was unreachable, before it runs again. */
export const OUTAGE_RETRY_MS = 5_000;

/**
 * A job that failed because a dependency is unreachable (lib/outage.ts) does not spend an attempt:
 * it is moved back to the delayed set for OUTAGE_RETRY_MS (BullMQ's moveToDelayed skips the
 * attempt) and runs again then, for as long as the outage lasts, so that the service catches up
 * within seconds of the dependency's return with nothing left for housekeeping. The processors are
 * idempotent (a retried job never stores twice), so running one again from the start is safe.
 *
 * Not for jobs whose own network failures look alike (webhook deliveries: a receiver refusing
 * connections is theirs to retry with backoff). Should Redis be the one unreachable, the job cannot
 * be moved: it fails as before, and BullMQ's stalled-job check hands it back once Redis returns (or,
 * with Redis restarted empty, the worker queues its source again as Redis returns: ./runner.ts).
 */
export function outageSafe<D, R>(processor: Processor<D, R>, log: Logger, queue: string): Processor<D, R> {
  return async (job, token, signal) => {
    try {
      return await processor(job, token, signal);
    } catch (err) {
      if (!token || !isOutage(err)) throw err;
      try {
        await job.moveToDelayed(Date.now() + OUTAGE_RETRY_MS, token);
      } catch {
        throw err;
      }
      log.warn('dependency unavailable: the job runs again later, its attempt not spent', {
        queue,
        job_id: job.id,
        retry_ms: OUTAGE_RETRY_MS,
        err: (err as Error).message,
      });
      throw new DelayedError();
    }
  };
}
