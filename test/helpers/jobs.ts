import { QueueEvents, type Job, type Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { poll } from './curves.ts';

/**
 * Waiting for BullMQ jobs to be over instead of waiting a while: once a job has finished for good,
 * nothing more can come of it, so a test can then assert what did (or did not) happen.
 */

export type FinishedJob = { state: 'completed' | 'failed'; job: Job };

/**
 * The job once it has finished for good: `completed`, or `failed` after its last attempt (a job
 * waiting for a retry is `delayed`, not `failed`). Only for jobs kept after they finish; waits for
 * the job to be added when it is not there yet.
 */
export function finishedJob(queue: Queue, jobId: string, timeoutMs = 30_000): Promise<FinishedJob> {
  return poll(
    `job ${jobId} to finish`,
    async () => {
      const state = await queue.getJobState(jobId);
      if (state !== 'completed' && state !== 'failed') return undefined;
      // Read after the state is final, so attempts and stack traces are the last ones.
      const job = await queue.getJob(jobId);
      return job ? { state, job } : undefined;
    },
    timeoutMs,
  );
}

/**
 * Add a job with `add` and resolve with its return value once it completes (reject with its reason
 * when it fails for good). The queue's event stream is read from before the add, so the end cannot
 * be missed however soon it comes: this works for jobs removed when they finish.
 */
export async function addAndAwait<T>(
  queue: Queue,
  redisUrl: string,
  jobId: string,
  add: () => Promise<unknown>,
  timeoutMs = 30_000,
): Promise<T> {
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  let events: QueueEvents | undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    const [last] = await connection.xrevrange(queue.keys.events!, '+', '-', 'COUNT', 1);
    const listener = new QueueEvents(queue.name, { connection, prefix: queue.opts.prefix!, lastEventId: last?.[0] ?? '0-0' });
    events = listener;
    const finished = new Promise<T>((resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`job ${jobId} did not finish within ${timeoutMs} ms`)), timeoutMs);
      listener.on('completed', (args) => args.jobId === jobId && resolve(args.returnvalue as T));
      listener.on('failed', (args) => args.jobId === jobId && reject(new Error(`job ${jobId} failed: ${args.failedReason}`)));
    });
    await add();
    return await finished;
  } finally {
    clearTimeout(timer);
    await events?.close();
    await connection.quit().catch(() => connection.disconnect());
  }
}

/** The id of the `deliver` job of a webhook delivery, and of the `fan-out` job of an event (workers/queues.ts). */
export const deliveryJobId = (deliveryId: string) => `delivery-${deliveryId}`;
export const fanOutJobId = (eventId: string) => `event-${eventId}`;
