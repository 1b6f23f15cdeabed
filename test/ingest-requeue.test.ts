import test from 'ava';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestUser, tokenFor } from './helpers/users.ts';
import { upload } from './helpers/activities.ts';
import { fixturesDir } from './helpers/fixtures.ts';
import { housekeepingProcessor } from '../workers/housekeeping.ts';
import { ingestProcessor } from '../workers/ingest.ts';
import { createEnginePool } from '../engine/pool.ts';
import { createSampleStore } from '../engine/samples/sample-file.ts';
import { createLogger } from '../lib/log.ts';
import type { HousekeepingJob, IngestJob } from '../workers/queues.ts';

/**
 * Issue 16: a file whose ingest job failed for good while its source stayed `processing` (a worker
 * killed twice: BullMQ fails the job as "stalled more than allowable limit"; retries run out during
 * a PostgreSQL outage) is queued again, by housekeeping once the source is stale and by an upload of
 * the same file, and then processed.
 */
let service: TestService;
test.before(async () => {
  service = await startTestService(); // no workers: the jobs are taken and failed here by hand
});
test.after.always(() => service?.close());

/** Take the source's job as a worker would and fail it for good, as BullMQ does with a job stalled twice. */
async function failForGood(sourceId: string): Promise<void> {
  const queue = service.deps.queues.ingest;
  const connection = new Redis(service.config.REDIS_URL, { maxRetriesPerRequest: null });
  const worker = new Worker<IngestJob>(queue.name, null, { connection, prefix: queue.opts.prefix! });
  try {
    const token = randomUUID();
    let job: Job<IngestJob> | undefined;
    for (let i = 0; i < 50 && job?.data.sourceId !== sourceId; i++) job = await worker.getNextJob(token);
    if (job?.data.sourceId !== sourceId) throw new Error('the job was not found');
    await job.moveToFailed(new UnrecoverableError('job stalled more than allowable limit'), token); // (no retry left)
    if ((await job.getState()) !== 'failed') throw new Error('the job did not fail');
  } finally {
    await worker.close();
    await connection.quit();
  }
}

async function statusOf(token: string, id: string): Promise<string> {
  return (
    (await (await fetch(`${service.url}/api/v1/sources/${id}`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
      status: string;
    }
  ).status;
}

test('a source whose job failed for good is queued again by housekeeping once stale, and by the same file uploaded again; then processed once', async (t) => {
  const user = await createTestUser(service);
  const token = await tokenFor(service, user, ['data:read', 'data:write']);
  const bytes = new Uint8Array(readFileSync(join(fixturesDir(), 'fit', 'Garmin830_with_Stages.fit')));
  const other = new Uint8Array(readFileSync(join(fixturesDir(), 'fit', 'SigmaRox11_1.fit')));
  const first = (
    await upload(service, token, [
      { name: 'a.fit', bytes },
      { name: 'b.fit', bytes: other },
    ])
  ).body.sources as { id: string }[];
  const [a, b] = [first[0]!.id, first[1]!.id];
  await failForGood(a);
  await failForGood(b);
  t.is(await statusOf(token, a), 'processing', 'stuck: its job is failed, the source is not');

  // The same file uploaded again: the same source, queued again.
  const again = await upload(service, token, [{ name: 'a.fit', bytes }]);
  t.is(again.status, 202);
  t.is(again.body.sources[0].id, a);
  t.is(await (await service.deps.queues.ingest.getJob(a))!.getState(), 'waiting');

  // Housekeeping, once b is stale (created 16 minutes ago), queues it again.
  await service.deps.db
    .updateTable('sources')
    .set({ created_at: new Date(Date.now() - 16 * 60_000) })
    .where('id', '=', b)
    .execute();
  const housekeeping = housekeepingProcessor({
    db: service.deps.db,
    queues: service.deps.queues,
    dataDir: service.config.DATA_DIR,
    store: service.deps.engine.files.store,
    log: createLogger('silent'),
    now: () => new Date(),
  });
  const report = await housekeeping({ data: { task: 'purge-expired' } } as unknown as Job<HousekeepingJob>);
  t.is(report.requeuedSources, 1);
  t.is(await (await service.deps.queues.ingest.getJob(b))!.getState(), 'waiting');

  // Both jobs now run (here by hand, one each) and the sources end processed, once.
  const pool = createEnginePool({ threads: 1 });
  const samples = await createSampleStore();
  t.teardown(async () => {
    await pool.close();
    await samples.close();
  });
  const ingest = ingestProcessor({
    db: service.deps.db,
    pool,
    samples,
    files: service.deps.engine.files,
    log: createLogger('silent'),
    now: () => new Date(),
  });
  for (const id of [a, b]) {
    const job = (await service.deps.queues.ingest.getJob(id))!;
    await ingest(job);
    t.is(await statusOf(token, id), 'processed');
    t.like(await ingest(job), { skipped: 'source already processed' }, 'run again: nothing twice');
  }
  const activities = await service.deps.db.selectFrom('activities').select('id').where('user_id', '=', user.id).execute();
  t.is(activities.length, 2);
});
