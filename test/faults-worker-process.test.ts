import test, { type ExecutionContext } from 'ava';
import type { ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { startTestService, type TestService } from './helpers/service.ts';
import { poll } from './helpers/curves.ts';
import { createTestUser, tokenFor } from './helpers/users.ts';
import { buildActivityFit } from './helpers/fit-builder.ts';
import { yazlZip } from './helpers/zip.ts';
import { kill, startWorkerProcess } from './helpers/worker-process.ts';
import { assertSampleFiles, backgroundUploads, readiness } from './helpers/faults.ts';
import { startOwnInfrastructure, type OwnPostgres, type OwnRedis } from './helpers/own-servers.ts';

// Production's layout: the API runs here (`npm run api`), the workers in a separate process
// (`npm run worker`), both against a PostgreSQL cluster and a Redis server of this file's own. Under
// a backfill of BACKFILL_FILES short rides and single uploads sent meanwhile, each test kills one
// thing mid-way (Redis, PostgreSQL, the worker process) and restarts it, then checks that everything
// acknowledged ends once, with its sample file, and that both processes stayed up.
//
// A Redis restarted empty has lost the queued ingest jobs: housekeeping queues them again once their
// sources are STALE_SOURCE_SECONDS old; the worker runs it every HOUSEKEEPING_EVERY_SECONDS here.
const BACKFILL_FILES = 400;
const WORKER_ENV = { STALE_SOURCE_SECONDS: '4', HOUSEKEEPING_EVERY_SECONDS: '2', SHUTDOWN_TIMEOUT_MS: '2000' };
const SETTLE_MS = 120_000;

let service: TestService;
let redis: OwnRedis;
let postgres: OwnPostgres;
let worker: ChildProcess | undefined;
/** The worker process's output, for the failure messages. */
let workerOutput = '';

test.before(async () => {
  ({ redis, postgres } = await startOwnInfrastructure());
  service = await startTestService({ workers: false, env: { JOB_LOCK_MS: '2000', INGEST_CONCURRENCY: '2' } });
  worker = await startWorker();
});
test.after.always(async () => {
  if (worker) await kill(worker, 'SIGKILL');
  await service?.close().catch(() => {});
  await redis?.kill();
  postgres?.remove();
});

async function startWorker() {
  const child = await startWorkerProcess(service.config, WORKER_ENV);
  const keep = (chunk: Buffer) => (workerOutput = (workerOutput + chunk).slice(-20_000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return child;
}

function assertWorkerUp(t: ExecutionContext, what: string) {
  t.true(
    worker!.exitCode === null && worker!.signalCode === null,
    `the worker process is up ${what} (exit ${worker!.exitCode}, ${worker!.signalCode}):\n${workerOutput.slice(-4000)}`,
  );
}

const DAY = 86_400_000;
/** A one-minute ride on day `n` of 2025 (the backfill's files). */
const historyRide = (n: number) =>
  buildActivityFit({ sessions: [{ sport: 'cycling', start: new Date(Date.parse('2025-01-01T07:00:00Z') + n * DAY), seconds: 60 }] });
/** A two-minute ride on a day of 2026 (the single uploads). */
const uploadRide = (n: number) =>
  buildActivityFit({ sessions: [{ sport: 'running', start: new Date(Date.parse('2026-01-01T07:00:00Z') + n * 3600_000), seconds: 120 }] });

/** The names in a folder; none when it does not exist. */
function listDir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

async function postBackfill(token: string, files = BACKFILL_FILES) {
  const archive = await yazlZip(Array.from({ length: files }, (_, n) => ({ name: `history/ride-${n}.fit`, data: historyRide(n) })));
  const form = new FormData();
  form.append('archive', new Blob([archive as Uint8Array<ArrayBuffer>], { type: 'application/zip' }), 'export.zip');
  return fetch(`${service.url}/api/v1/activities/backfill`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
}

async function startBackfill(userId: string, token: string, files = BACKFILL_FILES) {
  const res = await postBackfill(token, files);
  if (res.status !== 202) throw new Error(`backfill: ${res.status} ${await res.text()}`);
  return (await service.deps.db.selectFrom('backfills').select('id').where('user_id', '=', userId).executeTakeFirstOrThrow()).id;
}

async function athlete() {
  const user = await createTestUser(service);
  const token = await tokenFor(service, user, ['data:read', 'data:write']);
  return { user, token };
}

async function processedOfBackfill(backfillId: string) {
  const row = await service.deps.db
    .selectFrom('sources')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('backfill_id', '=', backfillId)
    .where('status', '=', 'processed')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Wait until part of the backfill is loaded and a few uploads are accepted; the backfill must still be mid-way when `what`. */
async function midway(t: ExecutionContext, backfillId: string, uploads: { accepted: Set<string> }, what: string) {
  await poll('some of the backfill loaded', async () => (await processedOfBackfill(backfillId)) >= 20, 60_000);
  await poll('a few uploads accepted', async () => uploads.accepted.size >= 3, 30_000);
  const loaded = await processedOfBackfill(backfillId);
  t.true(loaded < BACKFILL_FILES, `the backfill was mid-way when ${what} (${loaded} loaded)`);
}

/** What is still unfinished, for a timeout's message: each processing source's job state. */
async function unfinished(userId: string) {
  const rows = await service.deps.db
    .selectFrom('sources')
    .select(['id', 'status'])
    .where('user_id', '=', userId)
    .where('status', '=', 'processing')
    .execute();
  const states: Record<string, number> = {};
  for (const r of rows.slice(0, 200)) {
    const job = await service.deps.queues.ingest.getJob(r.id).catch(() => undefined);
    const state = job ? await job.getState() : 'no job';
    states[state] = (states[state] ?? 0) + 1;
  }
  const backfills = await service.deps.db.selectFrom('backfills').select(['id', 'status']).where('user_id', '=', userId).execute();
  return `${rows.length} sources processing (job states: ${JSON.stringify(states)}); backfills: ${JSON.stringify(backfills)}`;
}

/**
 * Wait for the backfill to complete and every source of the user to end, then check: every
 * acknowledged upload and every file of the backfill is stored and `processed` or `failed`, a
 * processed file has exactly one activity and a failed one none, and the user's sample files are
 * exactly their activities' (none orphaned, none missing, no temporary leftovers).
 */
async function assertSettled(
  t: ExecutionContext,
  userId: string,
  backfillId: string,
  accepted: Set<string>,
  opts: { allProcessed: boolean; files?: number },
) {
  const files = opts.files ?? BACKFILL_FILES;
  const db = service.deps.db;
  try {
    await poll(
      'the backfill completed and every source ended',
      async () => {
        const backfill = await db.selectFrom('backfills').select('status').where('id', '=', backfillId).executeTakeFirstOrThrow();
        const processing = await db
          .selectFrom('sources')
          .select('id')
          .where('user_id', '=', userId)
          .where('status', '=', 'processing')
          .limit(1)
          .execute();
        return backfill.status === 'completed' && processing.length === 0;
      },
      SETTLE_MS,
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}: ${await unfinished(userId)}\nworker output:\n${workerOutput.slice(-4000)}`);
  }
  const backfill = await db.selectFrom('backfills').selectAll().where('id', '=', backfillId).executeTakeFirstOrThrow();
  t.like(backfill, { status: 'completed', files_total: files, files_skipped: 0 });
  const sources = await db
    .selectFrom('sources')
    .select(['id', 'status', 'backfill_id', 'error_code'])
    .where('user_id', '=', userId)
    .execute();
  t.is(sources.filter((s) => s.backfill_id === backfillId).length, files, 'every file of the archive is a source');
  const byId = new Map(sources.map((s) => [s.id, s]));
  for (const id of accepted) t.truthy(byId.get(id), `acknowledged upload ${id} is stored`);
  const activities = await db.selectFrom('activities').select(['id', 'source_id']).where('user_id', '=', userId).execute();
  const perSource = new Map<string, number>();
  for (const a of activities) perSource.set(a.source_id, (perSource.get(a.source_id) ?? 0) + 1);
  for (const s of sources)
    t.is(
      perSource.get(s.id) ?? 0,
      s.status === 'processed' ? 1 : 0,
      `source ${s.id} (${s.status}) has ${s.status === 'processed' ? 'one activity' : 'none'}`,
    );
  const failed = sources.filter((s) => s.status === 'failed');
  if (opts.allProcessed) t.deepEqual(failed, [], 'nothing failed');
  else if (failed.length) t.log(`${failed.length} sources failed: ${JSON.stringify(failed.slice(0, 5))}`);
  await assertSampleFiles(t, service, userId);
  t.log(`${sources.length} sources (${accepted.size} single uploads), ${activities.length} activities, ${failed.length} failed`);
}

test.serial(
  'Redis killed (restarted empty) mid-backfill with the workers in their own process: uploads answer 503 meanwhile, the schedule comes back, housekeeping requeues the lost jobs, everything ends once',
  async (t) => {
    const { user, token } = await athlete();
    const backfillId = await startBackfill(user.id, token);
    const uploads = backgroundUploads(t, service, token, uploadRide, { pauseMs: 100 });
    try {
      await midway(t, backfillId, uploads, 'Redis was killed');
      t.is((await service.deps.queues.housekeeping.getJobSchedulers()).length, 1, 'the housekeeping schedule exists');

      await redis.kill();
      const before = uploads.statuses.length;
      await poll('an upload refused with 503', async () => uploads.statuses.slice(before).includes(503), 20_000);
      t.like(await readiness(service), { status: 503, body: { status: 'unavailable', checks: { postgres: 'ok', redis: 'error' } } });
      await new Promise((r) => setTimeout(r, 3_000));
      assertWorkerUp(t, 'while Redis is down');

      await redis.start(); // empty: every queued job and the housekeeping schedule are gone
      await poll('Redis back in /readyz', async () => (await readiness(service)).status === 200, 20_000);
      await poll(
        'the housekeeping schedule restored by the worker process',
        async () => (await service.deps.queues.housekeeping.getJobSchedulers().catch(() => [])).length === 1,
        20_000,
      );
      const after = uploads.statuses.length;
      await poll('uploads accepted again', async () => uploads.statuses.slice(after).includes(202), 20_000);
    } finally {
      await uploads.stop();
    }
    await assertSettled(t, user.id, backfillId, uploads.accepted, { allProcessed: true });
    assertWorkerUp(t, 'after the outage');
    t.like(await readiness(service), { status: 200 });
  },
);

test.serial(
  'PostgreSQL killed mid-backfill and mid-upload with the workers in their own process: 503 meanwhile, both processes stay up and reconnect, everything ends once',
  async (t) => {
    const { user, token } = await athlete();
    const backfillId = await startBackfill(user.id, token);
    const uploads = backgroundUploads(t, service, token, uploadRide, { pauseMs: 100 });
    try {
      await midway(t, backfillId, uploads, 'PostgreSQL was killed');

      postgres.kill();
      const before = uploads.statuses.length;
      await poll('an upload refused with 503', async () => uploads.statuses.slice(before).includes(503), 20_000);
      t.like(await readiness(service), { status: 503, body: { status: 'unavailable', checks: { postgres: 'error', redis: 'ok' } } });
      await new Promise((r) => setTimeout(r, 5_000)); // longer than an ingest job's first retries
      assertWorkerUp(t, 'while PostgreSQL is down');

      postgres.start();
      await poll('PostgreSQL back in /readyz', async () => (await readiness(service)).status === 200, 20_000);
      const after = uploads.statuses.length;
      await poll('uploads accepted again', async () => uploads.statuses.slice(after).includes(202), 20_000);
    } finally {
      await uploads.stop();
    }
    // A job whose retries ran out while PostgreSQL was down may have failed its source (`internal_error`)
    // or left it `processing` for housekeeping; either way it ends, once.
    await assertSettled(t, user.id, backfillId, uploads.accepted, { allProcessed: false });
    assertWorkerUp(t, 'after the outage');
    t.like(await readiness(service), { status: 200 });
  },
);

test.serial('the worker process killed (SIGKILL) mid-backfill: a new one finishes it, every file once', async (t) => {
  const { user, token } = await athlete();
  const backfillId = await startBackfill(user.id, token);
  const uploads = backgroundUploads(t, service, token, uploadRide, { pauseMs: 100 });
  try {
    await midway(t, backfillId, uploads, `the worker was killed (${await service.deps.queues.ingest.getActiveCount()} jobs active)`);
    await kill(worker!, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 1_000));
    t.like(await readiness(service), { status: 200 }, 'the API does not depend on the worker');
    worker = await startWorker();
  } finally {
    await uploads.stop();
  }
  t.deepEqual(
    uploads.statuses.filter((s) => s !== 202),
    [],
    'the API accepted every upload while no worker ran',
  );
  await assertSettled(t, user.id, backfillId, uploads.accepted, { allProcessed: true });
  assertWorkerUp(t, 'after its restart');
});

test.serial(
  'Redis down when a backfill is sent: 503 with Retry-After and nothing stored; sent again once Redis is back, it loads',
  async (t) => {
    const { user, token } = await athlete();
    await redis.kill();
    try {
      const archivesBefore = listDir(join(service.config.DATA_DIR, 'backfills'));
      const res = await postBackfill(token, 5);
      t.is(res.status, 503, await res.text());
      t.truthy(res.headers.get('retry-after'));
      t.deepEqual(
        await service.deps.db.selectFrom('backfills').select('id').where('user_id', '=', user.id).execute(),
        [],
        'no backfill stored',
      );
      t.deepEqual(listDir(join(service.config.DATA_DIR, 'backfills')), archivesBefore, 'no archive left behind');
    } finally {
      await redis.start();
    }
    await poll('Redis back in /readyz', async () => (await readiness(service)).status === 200, 20_000);
    const backfillId = await startBackfill(user.id, token, 5);
    await assertSettled(t, user.id, backfillId, new Set(), { allProcessed: true, files: 5 });
  },
);

test.serial(
  'Redis gone as a backfill is queued (after its check): 503, the backfill and its archive are taken back, and the retry is accepted',
  async (t) => {
    const { user, token } = await athlete();
    const queue = service.deps.queues.backfill;
    const add = queue.add.bind(queue);
    queue.add = async (...args) => {
      queue.add = add;
      await redis.kill();
      await poll('the API to see Redis gone', async () => service.deps.redis.status !== 'ready');
      return add(...args);
    };
    const archivesBefore = listDir(join(service.config.DATA_DIR, 'backfills'));
    try {
      const res = await postBackfill(token, 5);
      t.is(res.status, 503, await res.text());
      t.truthy(res.headers.get('retry-after'));
    } finally {
      queue.add = add;
      await redis.start();
    }
    t.deepEqual(
      await service.deps.db.selectFrom('backfills').select('id').where('user_id', '=', user.id).execute(),
      [],
      'no backfill left to block the retry with 409',
    );
    t.deepEqual(listDir(join(service.config.DATA_DIR, 'backfills')), archivesBefore, 'no archive left behind');
    await poll('Redis back in /readyz', async () => (await readiness(service)).status === 200, 20_000);
    await poll(
      'the housekeeping schedule restored by the worker process',
      async () => (await service.deps.queues.housekeeping.getJobSchedulers().catch(() => [])).length === 1,
      20_000,
    );
    const backfillId = await startBackfill(user.id, token, 5);
    await assertSettled(t, user.id, backfillId, new Set(), { allProcessed: true, files: 5 });
    assertWorkerUp(t, 'after the outage');
  },
);

test.serial('Redis restarted empty while a backfill waits to be scanned: housekeeping queues its scan again and it loads', async (t) => {
  const { user, token } = await athlete();
  await kill(worker!, 'SIGKILL'); // no worker: the backfill's scan job waits in Redis
  const backfillId = await startBackfill(user.id, token, 5);
  t.truthy(await service.deps.queues.backfill.getJob(backfillId), 'its scan is queued');
  await redis.kill();
  await redis.start(); // empty: the scan job is gone
  await poll('Redis back in /readyz', async () => (await readiness(service)).status === 200, 20_000);
  t.is(await service.deps.queues.backfill.getJob(backfillId), undefined, 'the scan job is lost');
  t.like(await service.deps.db.selectFrom('backfills').select('status').where('id', '=', backfillId).executeTakeFirstOrThrow(), {
    status: 'scanning',
  });
  worker = await startWorker();
  await assertSettled(t, user.id, backfillId, new Set(), { allProcessed: true, files: 5 });
  assertWorkerUp(t, 'after the outage');
});
