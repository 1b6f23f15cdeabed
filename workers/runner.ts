import { loadSecretBox, type SecretBox } from '../lib/secret-box.ts';
import { Worker } from 'bullmq';
import type { Config } from '../lib/config.ts';
import type { Logger } from '../lib/log.ts';
import type { Lifecycle } from '../lib/lifecycle.ts';
import { createDb, type Db } from '../db/database.ts';
import { createQueues, createRedis, closeQueues, QUEUE_NAMES, waitForRedis } from './connections.ts';
import { HOUSEKEEPING_EVERY_MS, housekeepingProcessor } from './housekeeping.ts';
import { ingestGaveUp, ingestProcessor } from './ingest.ts';
import { backfillProcessor } from './backfill.ts';
import { curvesProcessor } from './curves.ts';
import { webhooksProcessor } from './webhooks.ts';
import { startEventRelay } from './event-relay.ts';
import { createEnginePool } from '../engine/pool.ts';
import { createSampleStore } from '../engine/sample-file.ts';

/** The relay's fallback poll of the outbox (a NOTIFY wakes it at once otherwise). */
const EVENT_RELAY_POLL_MS = 5_000;

/**
 * Start every worker of this process. Shutdown (registered on `lifecycle`) waits for active jobs
 * to finish (`worker.close()`), then closes the connections this function opened.
 */
export async function startWorkers(config: Config, log: Logger, lifecycle: Lifecycle, opts: { db?: Db; box?: SecretBox; now?: () => Date } = {}) {
  const now = opts.now ?? (() => new Date());
  let db = opts.db;
  if (!db) {
    const own = createDb(config.DATABASE_URL, config.DATABASE_POOL_SIZE);
    lifecycle.add('worker postgres', () => own.destroy());
    db = own;
  }
  const connection = createRedis(config.REDIS_URL, 'worker');
  lifecycle.add('worker redis', async () => void (await connection.quit().catch(() => connection.disconnect())));

  // Queue handles for the jobs workers produce (a backfill queues ingests), open for the process's life.
  const producer = createRedis(config.REDIS_URL, 'producer');
  lifecycle.add('worker producer redis', async () => void (await producer.quit().catch(() => producer.disconnect())));
  const queues = createQueues(producer, config.QUEUE_PREFIX);
  lifecycle.add('worker queues', () => closeQueues(queues));

  const housekeeping = new Worker(QUEUE_NAMES.housekeeping, housekeepingProcessor({ db, queues, dataDir: config.DATA_DIR, now }), {
    connection,
    prefix: config.QUEUE_PREFIX,
    concurrency: 1,
  });
  housekeeping.on('failed', (job, err) => log.error('job failed', { queue: QUEUE_NAMES.housekeeping, job_id: job?.id, err }));
  housekeeping.on('completed', (job, result) => log.info('job completed', { queue: QUEUE_NAMES.housekeeping, job_id: job.id, result }));
  lifecycle.add('housekeeping worker', () => housekeeping.close());

  const pool = createEnginePool({ threads: config.ENGINE_THREADS });
  lifecycle.add('engine pool', () => pool.close());
  const samples = await createSampleStore();
  lifecycle.add('sample store', () => samples.close());

  const ingestDeps = { db, pool, samples, dataDir: config.DATA_DIR, log, now };
  const ingest = new Worker(QUEUE_NAMES.ingest, ingestProcessor(ingestDeps), {
    connection,
    prefix: config.QUEUE_PREFIX,
    concurrency: config.INGEST_CONCURRENCY,
    lockDuration: config.JOB_LOCK_MS,
    stalledInterval: config.JOB_LOCK_MS,
  });
  ingest.on('failed', (job, err) => {
    log.error('job failed', { queue: QUEUE_NAMES.ingest, job_id: job?.id, err });
    void ingestGaveUp(ingestDeps, job, err).catch((e) => log.error('could not mark the source failed', { err: e }));
  });
  ingest.on('completed', (job, result) => log.debug('job completed', { queue: QUEUE_NAMES.ingest, job_id: job.id, result }));

  const backfillDeps = { db, queues, dataDir: config.DATA_DIR, maxFileBytes: config.UPLOAD_MAX_FILE_BYTES, log, now };
  const backfill = new Worker(QUEUE_NAMES.backfill, backfillProcessor(backfillDeps), {
    connection,
    prefix: config.QUEUE_PREFIX,
    concurrency: 1,
    lockDuration: config.JOB_LOCK_MS,
    stalledInterval: config.JOB_LOCK_MS,
  });
  backfill.on('failed', (job, err) => log.error('job failed', { queue: QUEUE_NAMES.backfill, job_id: job?.id, err }));
  backfill.on('completed', (job, result) => log.info('job completed', { queue: QUEUE_NAMES.backfill, job_id: job.id, result }));
  const curves = new Worker(QUEUE_NAMES.curves, curvesProcessor(ingestDeps), {
    connection,
    prefix: config.QUEUE_PREFIX,
    concurrency: 1,
    lockDuration: config.JOB_LOCK_MS,
    stalledInterval: config.JOB_LOCK_MS,
  });
  curves.on('failed', (job, err) => log.error('job failed', { queue: QUEUE_NAMES.curves, job_id: job?.id, err }));
  curves.on('completed', (job, result) => log.info('job completed', { queue: QUEUE_NAMES.curves, job_id: job.id, result }));
  const webhookDeps = {
    db,
    box: opts.box ?? (await loadSecretBox(config)),
    queues,
    log,
    now,
    allowHttpLoopback: config.WEBHOOK_ALLOW_HTTP_LOOPBACK,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    retry: { baseMs: config.WEBHOOK_RETRY_BASE_MS, maxDelayMs: config.WEBHOOK_RETRY_MAX_DELAY_MS },
  };
  const webhooks = new Worker(QUEUE_NAMES.webhooks, webhooksProcessor(webhookDeps), {
    connection,
    prefix: config.QUEUE_PREFIX,
    concurrency: 16,
    lockDuration: config.JOB_LOCK_MS,
    stalledInterval: config.JOB_LOCK_MS,
  });
  webhooks.on('failed', (job, err) => log.warn('webhook job failed', { queue: QUEUE_NAMES.webhooks, job_id: job?.id, attempts: job?.attemptsMade, err: err.message }));
  webhooks.on('completed', (job, result) => log.debug('job completed', { queue: QUEUE_NAMES.webhooks, job_id: job.id, result }));

  // Registered after what they use, so shutdown closes the workers (finishing their jobs) first.
  lifecycle.add('ingest worker', () => ingest.close());
  lifecycle.add('backfill worker', () => backfill.close());
  lifecycle.add('curves worker', () => curves.close());
  lifecycle.add('webhooks worker', () => webhooks.close());

  // The schedule is an upsert keyed by name: every worker process may declare it, one job runs.
  await Promise.all([
    housekeeping.waitUntilReady(),
    ingest.waitUntilReady(),
    backfill.waitUntilReady(),
    curves.waitUntilReady(),
    webhooks.waitUntilReady(),
    waitForRedis(producer, 30_000),
  ]);
  const relay = await startEventRelay({ databaseUrl: config.DATABASE_URL, db, queues, log, pollMs: EVENT_RELAY_POLL_MS });
  lifecycle.add('event relay', () => relay.close());
  await queues.housekeeping.upsertJobScheduler('purge-expired', { every: HOUSEKEEPING_EVERY_MS }, { name: 'purge-expired', data: { task: 'purge-expired' } });

  log.info('workers started', { queues: Object.values(QUEUE_NAMES) });
  return { workers: [housekeeping, ingest, backfill, curves, webhooks] };
}
