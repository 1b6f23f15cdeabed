import test, { type ExecutionContext } from 'ava';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { startTestService, type TestService } from './helpers/service.ts';
import { poll } from './helpers/curves.ts';
import { createTestUser, tokenFor } from './helpers/users.ts';
import { buildActivityFit } from './helpers/fit-builder.ts';
import { upload, waitForSource } from './helpers/activities.ts';
import { kill, startWorkerProcess } from './helpers/worker-process.ts';

// The API runs here; workers run as separate processes that the test kills with SIGKILL.
let service: TestService;
test.before(async () => {
  service = await startTestService({ workers: false, env: { JOB_LOCK_MS: '2000' } });
});
test.after.always(() => service?.close());

test.serial('a worker killed (SIGKILL) mid-ingest leaves no trace: a restarted worker yields exactly one activity', async (t) => {
  const user = await createTestUser(service);
  const token = await tokenFor(service, user, ['data:read', 'data:write']);
  // 6 h at 1 Hz.
  const bytes = buildActivityFit({
    sessions: [{ sport: 'cycling', start: new Date('2026-04-01T06:00:00Z'), seconds: 6 * 3600, laps: 12 }],
  });
  const res = await upload(service, token, [{ name: 'long.fit', bytes }]);
  t.is(res.status, 202);
  const sourceId: string = res.body.sources[0].id;

  // The test holds the source's row lock: the worker parses the file and writes its sample file,
  // then waits for that lock to store the activity. It is killed there, mid-job however fast it is.
  const lock = new pg.Client({ connectionString: service.config.DATABASE_URL });
  await lock.connect();
  t.teardown(() => lock.end().catch(() => {}));
  await lock.query('BEGIN');
  await lock.query('SELECT id FROM sources WHERE id = $1 FOR UPDATE', [sourceId]);
  const lockPid: number = (await lock.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;

  const first = await startWorkerProcess(service.config);
  await poll('the worker waiting to store the activity', async () => {
    const { rows } = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE ${lockPid}::int = ANY(pg_blocking_pids(pid))`.execute(service.deps.db);
    return rows[0]!.n > 0;
  });
  const job = (await service.deps.queues.ingest.getJob(sourceId))!;
  t.is(await job.getState(), 'active', 'the job was running when the worker was killed');
  await kill(first, 'SIGKILL');
  await lock.query('ROLLBACK');
  t.like(await waitForSourceState(sourceId), { status: 'processing' }, 'the killed job did not finish');

  const second = await startWorkerProcess(service.config);
  try {
    const source = await waitForSource(service, token, sourceId, 60_000);
    t.is(source.status, 'processed', JSON.stringify(source.error));
    t.is(source.activity_ids.length, 1);
    const rows = await service.deps.db.selectFrom('activities').select(['id', 'source_id']).where('user_id', '=', user.id).execute();
    t.is(rows.length, 1, 'exactly one activity');
    const files = readdirSync(join(service.config.DATA_DIR, 'users', user.id, 'activities'));
    t.deepEqual(files, [`${rows[0]!.id}.parquet`], 'one sample file, no temporary leftovers');
  } finally {
    await kill(second, 'SIGTERM');
  }
});

async function waitForSourceState(id: string) {
  return service.deps.db.selectFrom('sources').select('status').where('id', '=', id).executeTakeFirstOrThrow();
}

/**
 * Hold the source's row lock so that a worker parses the file, writes its sample file and then waits
 * to store the activity; resolves with the lock once a worker of `worker`'s waits there (mid-job,
 * however fast the job is). `release()` lets the worker go on.
 */
async function holdMidJob(sourceId: string) {
  const lock = new pg.Client({ connectionString: service.config.DATABASE_URL });
  await lock.connect();
  await lock.query('BEGIN');
  await lock.query('SELECT id FROM sources WHERE id = $1 FOR UPDATE', [sourceId]);
  const lockPid: number = (await lock.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
  return {
    waiting: () =>
      poll('a worker waiting to store the activity', async () => {
        const { rows } = await sql<{
          n: number;
        }>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE ${lockPid}::int = ANY(pg_blocking_pids(pid))`.execute(service.deps.db);
        return rows[0]!.n > 0;
      }),
    release: async () => {
      await lock.query('ROLLBACK').catch(() => {});
      await lock.end().catch(() => {});
    },
  };
}

async function uploadLongRide(t: ExecutionContext, start: string) {
  const user = await createTestUser(service);
  const token = await tokenFor(service, user, ['data:read', 'data:write']);
  const bytes = buildActivityFit({ sessions: [{ sport: 'cycling', start: new Date(start), seconds: 2 * 3600, laps: 4 }] });
  const res = await upload(service, token, [{ name: 'ride.fit', bytes }]);
  t.is(res.status, 202);
  return { user, token, sourceId: res.body.sources[0].id as string };
}

async function assertOneActivity(t: ExecutionContext, userId: string, source: { status: string; activity_ids: string[]; error: unknown }) {
  t.is(source.status, 'processed', JSON.stringify(source.error));
  t.is(source.activity_ids.length, 1);
  const rows = await service.deps.db.selectFrom('activities').select('id').where('user_id', '=', userId).execute();
  t.is(rows.length, 1, 'exactly one activity');
  t.deepEqual(
    readdirSync(join(service.config.DATA_DIR, 'users', userId, 'activities')),
    [`${rows[0]!.id}.parquet`],
    'one sample file, no temporary leftovers',
  );
}

test.serial(
  'a job whose worker is killed twice (BullMQ fails it as stalled too often) is queued again at once and ends processed, once',
  async (t) => {
    const { user, token, sourceId } = await uploadLongRide(t, '2026-04-02T06:00:00Z');
    for (const round of [1, 2]) {
      const held = await holdMidJob(sourceId);
      const worker = await startWorkerProcess(service.config);
      try {
        await held.waiting();
        t.is(
          await (await service.deps.queues.ingest.getJob(sourceId))!.getState(),
          'active',
          `round ${round}: the job was running when its worker was killed`,
        );
        await kill(worker, 'SIGKILL');
      } finally {
        await kill(worker, 'SIGKILL');
        await held.release();
      }
    }
    t.like(await waitForSourceState(sourceId), { status: 'processing' });

    // The next worker finds the job stalled a second time: BullMQ fails it, and the service queues it again.
    const third = await startWorkerProcess(service.config);
    try {
      const source = await waitForSource(service, token, sourceId, 60_000);
      await assertOneActivity(t, user.id, source);
      const job = (await service.deps.queues.ingest.getJob(sourceId))!;
      t.is(job.data.requeues, 1, 'queued again once, by the failure itself (housekeeping did not run)');
    } finally {
      await kill(third, 'SIGTERM');
    }
  },
);

test.serial(
  'SIGTERM while a job outlasts SHUTDOWN_TIMEOUT_MS: the worker exits once the timeout is over, hands the job back, and the next worker finishes it once',
  async (t) => {
    const { user, token, sourceId } = await uploadLongRide(t, '2026-04-03T06:00:00Z');
    const held = await holdMidJob(sourceId);
    const timeoutMs = 1_500;
    const worker = await startWorkerProcess(service.config, { SHUTDOWN_TIMEOUT_MS: String(timeoutMs) });
    let next: Awaited<ReturnType<typeof startWorkerProcess>> | undefined;
    try {
      await held.waiting();
      const exited = new Promise<number | null>((resolve) => worker.once('exit', (code) => resolve(code)));
      const signalled = Date.now();
      worker.kill('SIGTERM');
      const code = await exited;
      const tookMs = Date.now() - signalled;
      t.is(code, 0, 'a clean exit');
      t.true(tookMs >= timeoutMs - 100, `it waited for the job (${tookMs} ms)`);
      t.true(tookMs < timeoutMs + 8_000, `and not much longer than the timeout (${tookMs} ms)`);
      t.is(await (await service.deps.queues.ingest.getJob(sourceId))!.getState(), 'waiting', 'the job was handed back, not left locked');
      await held.release();
      next = await startWorkerProcess(service.config);
      await assertOneActivity(t, user.id, await waitForSource(service, token, sourceId, 60_000));
    } finally {
      await held.release();
      if (next) await kill(next, 'SIGTERM');
      await kill(worker, 'SIGKILL');
    }
  },
);

test.serial(
  'a worker process over WORKER_MAX_RSS_MB takes no job (it waits in the queue); a worker under its cap then runs it',
  async (t) => {
    const { user, token, sourceId } = await uploadLongRide(t, '2026-04-04T06:00:00Z');
    // Any process is over 1 MB: this one takes nothing.
    const capped = await startWorkerProcess(service.config, { WORKER_MAX_RSS_MB: '1' });
    try {
      await new Promise((r) => setTimeout(r, 4_000));
      t.is(await (await service.deps.queues.ingest.getJob(sourceId))!.getState(), 'waiting', 'the job was not taken');
      t.like(await waitForSourceState(sourceId), { status: 'processing' });
    } finally {
      await kill(capped, 'SIGTERM');
    }
    const next = await startWorkerProcess(service.config);
    try {
      await assertOneActivity(t, user.id, await waitForSource(service, token, sourceId, 60_000));
    } finally {
      await kill(next, 'SIGTERM');
    }
  },
);

test.serial('SIGTERM while a job runs that ends within SHUTDOWN_TIMEOUT_MS: the worker finishes it, then exits', async (t) => {
  const { user, token, sourceId } = await uploadLongRide(t, '2026-04-05T06:00:00Z');
  const held = await holdMidJob(sourceId);
  const worker = await startWorkerProcess(service.config, { SHUTDOWN_TIMEOUT_MS: '15000' });
  try {
    await held.waiting();
    const exited = new Promise<number | null>((resolve) => worker.once('exit', (code) => resolve(code)));
    const signalled = Date.now();
    worker.kill('SIGTERM');
    // The job goes on a second after the signal, as a job does that was nearly done.
    await new Promise((r) => setTimeout(r, 1_000));
    t.is(worker.exitCode, null, 'still finishing its job');
    await held.release();
    t.is(await exited, 0);
    t.true(Date.now() - signalled < 15_000, 'before the timeout');
    // No other worker ran: the one that was told to stop finished the job.
    await assertOneActivity(t, user.id, await waitForSource(service, token, sourceId, 10_000));
    t.is(await (await service.deps.queues.ingest.getJob(sourceId))!.getState(), 'completed');
  } finally {
    await held.release();
    await kill(worker, 'SIGKILL');
  }
});
