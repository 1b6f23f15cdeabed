import { loadSecretBox, type SecretBox } from '../lib/secret-box.ts';
import { Worker, type Job, type Processor } from 'bullmq';
import type { Config } from '../lib/config.ts';
import type { Logger } from '../lib/log.ts';
import { POOL_CLOSE_TIMEOUT_MS, type Lifecycle } from '../lib/lifecycle.ts';
import { gateOnMemory } from './memory-gate.ts';
import { createDb, type Db } from '../db/database.ts';
import { createRedis, waitForRedis } from './connections.ts';
import { createQueues, closeQueues, QUEUE_NAMES } from './queues.ts';
import { housekeepingProcessor, requeueUnfinished } from './housekeeping.ts';
import { ingestGaveUp, ingestProcessor } from './ingest.ts';
import { backfillProcessor } from './backfill.ts';
import { curvesProcessor } from './curves.ts';
import { reprocessProcessor } from './reprocess.ts';
import { webhooksProcessor } from './webhooks.ts';
import { trainingLoadProcessor } from './training-load.ts';
import { OUTAGE_RETRY_MS, outageSafe } from './outage.ts';
import { isOutage } from '../lib/outage.ts';
import { startEventRelay } from './event-relay.ts';
import { createEnginePool, type EnginePool } from '../engine/pool.ts';
import { createSampleStore, type SampleStore } from '../engine/samples/sample-file.ts';
import type { ChannelColumns } from '../engine/samples/channel-columns.ts';
import type { StoredFiles } from '../lib/object-store-setup.ts';
import type { ObjectStore } from '../lib/object-store.ts';
import { createFilesAndColumns } from './files.ts';

/** How often a worker process compares its memory with WORKER_MAX_RSS_MB. */
const MEMORY_CHECK_MS = 1_000;

/** The relay's fallback poll of the outbox (a NOTIFY wakes it at once otherwise). */
const EVENT_RELAY_POLL_MS = 5_000;

/** The engine the workers compute with; in single-process mode the API's (one pool, one DuckDB instance). */
export interface WorkerEngine {
  pool: EnginePool;
  samples: SampleStore;
  /** The users' channel columns, appended to by each ingest (engine/samples/channel-columns.ts). */
  columns: ChannelColumns;
  /** The object store and its objects as local files (./files.ts). */
  files: StoredFiles;
}

/** What differs between the workers: queue, processor, concurrency, and how loudly each job's end is logged. */
interface WorkerSpec<D, R> {
  queue: (typeof QUEUE_NAMES)[keyof typeof QUEUE_NAMES];
  processor: Processor<D, R>;
  concurrency: number;
  /** Long jobs (ingest, scans, recomputes) hold their lock this long; housekeeping uses BullMQ's default. */
  longJobs: boolean;
  /** Whether a PostgreSQL or Redis outage delays the job without spending an attempt (./outage.ts); not for webhook deliveries. */
  outageSafe: boolean;
  completed: 'info' | 'debug';
  onFailed?: (job: Job<D, R> | undefined, err: Error) => void;
}

/**
 * Start every worker of this process. Shutdown (registered on `lifecycle`) waits for active jobs
 * to finish (`worker.close()`), then closes the connections this function opened.
 */
export async function startWorkers(
  config: Config,
  log: Logger,
  lifecycle: Lifecycle,
  opts: { db?: Db; box?: SecretBox; engine?: WorkerEngine; now?: () => Date } = {},
) {
  const now = opts.now ?? (() => new Date());
  const { db, connection, producer, queues } = openConnections(config, lifecycle, opts.db);
  const engine = opts.engine ?? (await createWorkerEngine(config, lifecycle, db));
  const { start, workers, runningJobs } = workerStarter(config, log, connection);
  const heavy = startJobWorkers(start, { config, log, db, queues, engine, now });
  // Only in a worker process of its own (`npm run worker`): beside the API (`npm start`) the process's
  // memory is mostly the API's caches, which a paused worker would never bring down. Checked at once,
  // in the tick the workers were made: an oversized process takes not even a first job.
  const gated = !opts.engine && config.WORKER_MAX_RSS_MB > 0;
  const stopGate = gated
    ? gateOnMemory(heavy, { maxRssBytes: config.WORKER_MAX_RSS_MB * 2 ** 20, everyMs: MEMORY_CHECK_MS, log })
    : () => {};
  startWebhookWorker(start, { config, log, db, queues, now, box: opts.box ?? (await loadSecretBox(config)) });

  // Registered after what they use, so shutdown closes the workers (finishing their jobs) first.
  // All at once, within SHUTDOWN_TIMEOUT_MS: a job still running then is handed back (its lock
  // released without finishing it, the worker closed by force), and another worker runs it again.
  lifecycle.add('workers', async () => {
    stopGate();
    await closeWorkers(runningJobs, config.SHUTDOWN_TIMEOUT_MS, log);
  });

  await Promise.all([...workers.map((w) => w.waitUntilReady()), waitForRedis(producer, 30_000)]);
  const relay = await startEventRelay({ databaseUrl: config.DATABASE_URL, db, queues, log, pollMs: EVENT_RELAY_POLL_MS, now });
  lifecycle.add('event relay', () => relay.close());
  await scheduleAndCatchUp({ config, log, db, queues, now, producer, store: engine.files.store });

  log.info('workers started', { queues: Object.values(QUEUE_NAMES) });
  return { workers };
}

type Queues = ReturnType<typeof createQueues>;
type Redis = ReturnType<typeof createRedis>;

/** The database (`given`, or a pool of this function's), the workers' and the producer's Redis connections and the queues, each closed by `lifecycle`. */
function openConnections(config: Config, lifecycle: Lifecycle, given: Db | undefined) {
  let db = given;
  if (!db) {
    const own = createDb(config.DATABASE_URL, config.DATABASE_POOL_SIZE);
    lifecycle.add('worker postgres', () => own.destroy(), { timeoutMs: POOL_CLOSE_TIMEOUT_MS });
    db = own;
  }
  const connection = createRedis(config.REDIS_URL, 'worker');
  lifecycle.add('worker redis', async () => void (await connection.quit().catch(() => connection.disconnect())));

  // Queue handles for the jobs workers produce (a backfill queues ingests), open for the process's life.
  const producer = createRedis(config.REDIS_URL, 'producer');
  lifecycle.add('worker producer redis', async () => void (await producer.quit().catch(() => producer.disconnect())));
  const queues = createQueues(producer, config.QUEUE_PREFIX);
  lifecycle.add('worker queues', () => closeQueues(queues));
  return { db, connection, producer, queues };
}

type StartWorker = <D, R>(spec: WorkerSpec<D, R>) => Worker<D, R>;

/** `start` makes a worker of a spec on `connection`; `workers` and `runningJobs` (each worker's jobs under way, for the shutdown) list what it made. */
function workerStarter(config: Config, log: Logger, connection: Redis) {
  const workers: Worker[] = [];
  const runningJobs = new Map<Worker, Map<string, { job: Job; token: string }>>();
  function start<D, R>(spec: WorkerSpec<D, R>): Worker<D, R> {
    const running = new Map<string, { job: Job; token: string }>();
    const run = spec.outageSafe ? outageSafe(spec.processor, log, spec.queue) : spec.processor;
    const processor: Processor<D, R> = async (job, token, signal) => {
      const key = `${job.id}`;
      if (token) running.set(key, { job: job as Job, token });
      try {
        return await run(job, token, signal);
      } finally {
        running.delete(key);
      }
    };
    const worker = new Worker<D, R>(spec.queue, processor, {
      connection,
      prefix: config.QUEUE_PREFIX,
      concurrency: spec.concurrency,
      ...(spec.longJobs ? { lockDuration: config.JOB_LOCK_MS, stalledInterval: config.JOB_LOCK_MS } : {}),
    });
    // Connection errors while Redis is away: BullMQ reconnects; unheard, the 'error' event would end the process.
    worker.on('error', (err) => log.warn('worker error', { queue: spec.queue, err: err.message }));
    worker.on('failed', spec.onFailed ?? ((job, err) => log.error('job failed', { queue: spec.queue, job_id: job?.id, err })));
    worker.on('completed', (job, result) => log[spec.completed]('job completed', { queue: spec.queue, job_id: job.id, result }));
    workers.push(worker as unknown as Worker);
    runningJobs.set(worker as unknown as Worker, running);
    return worker;
  }
  return { start, workers, runningJobs };
}

interface JobDeps {
  config: Config;
  log: Logger;
  db: Db;
  queues: Queues;
  now: () => Date;
}

/** Housekeeping and the workers of the data's jobs (ingest, backfill, curves, reprocess); returns the latter, whose jobs take memory. */
function startJobWorkers(start: StartWorker, { config, log, db, queues, engine, now }: JobDeps & { engine: WorkerEngine }): Worker[] {
  start({
    queue: QUEUE_NAMES.housekeeping,
    processor: housekeepingProcessor({
      db,
      queues,
      dataDir: config.DATA_DIR,
      store: engine.files.store,
      log,
      now,
      staleSourceSeconds: config.STALE_SOURCE_SECONDS,
      columns: engine.columns,
    }),
    concurrency: 1,
    longJobs: false,
    outageSafe: true,
    completed: 'info',
  });

  const ingestDeps = {
    db,
    pool: engine.pool,
    samples: engine.samples,
    columns: engine.columns,
    files: engine.files,
    log,
    now,
    timeoutMs: config.INGEST_TIMEOUT_MS,
    queues,
  };
  const ingestWorker = start({
    queue: QUEUE_NAMES.ingest,
    processor: ingestProcessor(ingestDeps),
    concurrency: config.INGEST_CONCURRENCY,
    longJobs: true,
    outageSafe: true,
    completed: 'debug',
    onFailed: (job, err) => {
      log.error('job failed', { queue: QUEUE_NAMES.ingest, job_id: job?.id, err });
      void ingestGaveUp({ ...ingestDeps, queues }, job, err).catch((e) => log.error('could not mark the source failed', { err: e }));
    },
  });

  const backfillDeps = {
    db,
    queues,
    dataDir: config.DATA_DIR,
    store: engine.files.store,
    maxFileBytes: config.UPLOAD_MAX_FILE_BYTES,
    log,
    now,
  };
  // Two archives at once: one user's large import does not hold up another's (a user's own imports run one at a time, startBackfill).
  const backfillWorker = start({
    queue: QUEUE_NAMES.backfill,
    processor: backfillProcessor(backfillDeps),
    concurrency: 2,
    longJobs: true,
    outageSafe: true,
    completed: 'info',
  });
  const curvesWorker = start({
    queue: QUEUE_NAMES.curves,
    processor: curvesProcessor(ingestDeps),
    concurrency: 1,
    longJobs: true,
    outageSafe: true,
    completed: 'info',
  });
  // One source at a time per process: re-deriving a history (`cli reprocess`) shares the engine
  // pool with uploads' ingests and should not hold them up; more worker processes go faster.
  const reprocessWorker = start({
    queue: QUEUE_NAMES.reprocess,
    processor: reprocessProcessor(ingestDeps),
    concurrency: 1,
    longJobs: true,
    outageSafe: true,
    completed: 'debug',
  });
  // Training load rows from sample files (thresholds changed, or activities stored before training load).
  const loadWorker = start({
    queue: QUEUE_NAMES.trainingLoad,
    processor: trainingLoadProcessor(ingestDeps),
    concurrency: 1,
    longJobs: true,
    outageSafe: true,
    completed: 'debug',
  });
  /** The workers whose jobs take memory: WORKER_MAX_RSS_MB stops them taking more. */
  return [ingestWorker, backfillWorker, curvesWorker, reprocessWorker, loadWorker] as unknown as Worker[];
}

/** The webhook deliveries' worker (an outage is not waited out: a delivery's attempts are its own). */
function startWebhookWorker(start: StartWorker, { config, log, db, queues, now, box }: JobDeps & { box: SecretBox }): void {
  const webhookDeps = {
    db,
    box,
    queues,
    log,
    now,
    allowHttpLoopback: config.WEBHOOK_ALLOW_HTTP_LOOPBACK,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    retry: { baseMs: config.WEBHOOK_RETRY_BASE_MS, maxDelayMs: config.WEBHOOK_RETRY_MAX_DELAY_MS },
  };
  start({
    queue: QUEUE_NAMES.webhooks,
    processor: webhooksProcessor(webhookDeps),
    concurrency: 16,
    longJobs: true,
    outageSafe: false,
    completed: 'debug',
    onFailed: (job, err) =>
      log.warn('webhook job failed', { queue: QUEUE_NAMES.webhooks, job_id: job?.id, attempts: job?.attemptsMade, err: err.message }),
  });
}

/**
 * Declare housekeeping's schedule, and again whenever the producer's Redis connection is ready anew,
 * with the unfinished work queued again (see below).
 */
async function scheduleAndCatchUp({
  config,
  log,
  db,
  queues,
  now,
  producer,
  store,
}: JobDeps & { producer: Redis; store: ObjectStore }): Promise<void> {
  // The schedule is an upsert keyed by name: every worker process may declare it, one job runs.
  const schedule = () =>
    queues.housekeeping.upsertJobScheduler(
      'purge-expired',
      { every: config.HOUSEKEEPING_EVERY_SECONDS * 1000 },
      { name: 'purge-expired', data: { task: 'purge-expired' } },
    );
  await schedule();
  // A Redis restarted empty (or failed over) lost the schedule and the jobs: on every reconnection,
  // declare the schedule again and queue again whatever is unfinished without a job (sources still
  // `processing`, backfills still `scanning`), so that the service catches up at once instead of at
  // housekeeping's next run past STALE_SOURCE_SECONDS. Jobs that survived are left alone.
  // (PostgreSQL may still be down then: tried again every OUTAGE_RETRY_MS for up to 10 minutes.)
  const requeueAfterRedis = async (deadline: number): Promise<void> => {
    try {
      const r = await requeueUnfinished({ db, queues, store, log, now }, now());
      if (r.requeuedSources || r.requeuedBackfills) log.info('Redis is back: unfinished work queued again', r);
    } catch (err) {
      if (!isOutage(err) || Date.now() > deadline)
        return void log.warn('could not queue unfinished work again after Redis came back', { err: (err as Error).message });
      await new Promise((r) => setTimeout(r, OUTAGE_RETRY_MS).unref());
      return requeueAfterRedis(deadline);
    }
  };
  producer.on('ready', () => {
    void schedule().catch((err) => log.warn('could not restore the housekeeping schedule', { err: (err as Error).message }));
    void requeueAfterRedis(Date.now() + 10 * 60_000);
  });
}

/** A worker process's own engine (bin/worker.ts); closed after the workers, which are registered later. */
async function createWorkerEngine(config: Config, lifecycle: Lifecycle, db: Db): Promise<WorkerEngine> {
  const pool = createEnginePool({ threads: config.ENGINE_THREADS });
  lifecycle.add('engine pool', () => pool.close());
  const samples = await createSampleStore();
  lifecycle.add('sample store', () => samples.close());
  const { files, columns } = createFilesAndColumns(config, samples, db, lifecycle);
  return { pool, samples, columns, files };
}

/**
 * Close the workers, letting their active jobs finish for up to `timeoutMs`; then close them by
 * force and hand the jobs still running back to the queue (moved to waiting, their attempt not
 * counted), so another worker runs them at once instead of after their lock expires.
 */
async function closeWorkers(workers: Map<Worker, Map<string, { job: Job; token: string }>>, timeoutMs: number, log: Logger): Promise<void> {
  const closing = Promise.all([...workers.keys()].map((w) => w.close()));
  let timer: NodeJS.Timeout | undefined;
  const timedOut = await Promise.race([
    closing.then(() => false),
    new Promise<boolean>((r) => (timer = setTimeout(() => r(true), timeoutMs))),
  ]);
  clearTimeout(timer);
  if (!timedOut) return;
  const running = [...workers.values()].flatMap((m) => [...m.values()]);
  log.warn('jobs still running at the shutdown timeout: handing them back', {
    timeout_ms: timeoutMs,
    jobs: running.map((r) => `${r.job.queueName}:${r.job.id}`),
  });
  await Promise.all(
    running.map(({ job, token }) =>
      job.moveToWait(token).catch((err) => log.warn('could not hand a job back', { job_id: job.id, err: (err as Error).message })),
    ),
  );
  // Not awaited: BullMQ's close(true) after a close() is that same close, which waits for the jobs
  // just handed back. What they still hold is let go when the process exits.
  for (const w of workers.keys()) void w.close(true).catch(() => {});
}
