import { Worker } from 'bullmq';
import type { Config } from '../lib/config.ts';
import type { Logger } from '../lib/log.ts';
import type { Lifecycle } from '../lib/lifecycle.ts';
import { createDb, type Db } from '../db/database.ts';
import { createQueues, createRedis, closeQueues, QUEUE_NAMES, waitForRedis } from './connections.ts';
import { HOUSEKEEPING_EVERY_MS, housekeepingProcessor } from './housekeeping.ts';

/**
 * Start every worker of this process. Shutdown (registered on `lifecycle`) waits for active jobs
 * to finish (`worker.close()`), then closes the connections this function opened.
 */
export async function startWorkers(config: Config, log: Logger, lifecycle: Lifecycle, opts: { db?: Db; now?: () => Date } = {}) {
  const now = opts.now ?? (() => new Date());
  let db = opts.db;
  if (!db) {
    const own = createDb(config.DATABASE_URL, config.DATABASE_POOL_SIZE);
    lifecycle.add('worker postgres', () => own.destroy());
    db = own;
  }
  const connection = createRedis(config.REDIS_URL, 'worker');
  lifecycle.add('worker redis', async () => void (await connection.quit().catch(() => connection.disconnect())));

  const housekeeping = new Worker(QUEUE_NAMES.housekeeping, housekeepingProcessor({ db, now }), {
    connection,
    prefix: config.QUEUE_PREFIX,
    concurrency: 1,
  });
  housekeeping.on('failed', (job, err) => log.error('job failed', { queue: QUEUE_NAMES.housekeeping, job_id: job?.id, err }));
  housekeeping.on('completed', (job, result) => log.info('job completed', { queue: QUEUE_NAMES.housekeeping, job_id: job.id, result }));
  lifecycle.add('housekeeping worker', () => housekeeping.close());

  // The schedule is an upsert keyed by name: every worker process may declare it, one job runs.
  const producer = createRedis(config.REDIS_URL, 'producer');
  const queues = createQueues(producer, config.QUEUE_PREFIX);
  await Promise.all([housekeeping.waitUntilReady(), waitForRedis(producer, 30_000)]);
  await queues.housekeeping.upsertJobScheduler('purge-expired', { every: HOUSEKEEPING_EVERY_MS }, { name: 'purge-expired', data: { task: 'purge-expired' } });
  await closeQueues(queues);
  await producer.quit();

  log.info('workers started', { queues: Object.values(QUEUE_NAMES) });
  return { workers: [housekeeping] };
}
