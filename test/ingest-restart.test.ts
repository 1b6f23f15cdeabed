import test from 'ava';
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
  const bytes = buildActivityFit({ sessions: [{ sport: 'cycling', start: new Date('2026-04-01T06:00:00Z'), seconds: 6 * 3600, laps: 12 }] });
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
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE ${lockPid}::int = ANY(pg_blocking_pids(pid))`.execute(service.deps.db);
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
