/**
 * An outage of PostgreSQL or Redis up to 2 minutes strands nothing (workers/outage.ts, the requeue
 * on Redis's return in workers/runner.ts): under uploads and a backfill, a dependency of this file's
 * own is stopped for 10 s and for 90 s; every upload the API acknowledged (202) and the backfill end
 * `processed` / `completed` within 60 s of the dependency's return, each file once, with no
 * housekeeping run (STALE_SOURCE_SECONDS stays at its 15 minutes, longer than the test).
 */
import test, { type ExecutionContext } from 'ava';
import { startTestService, type TestService } from './helpers/service.ts';
import { poll } from './helpers/curves.ts';
import { createTestUser, tokenFor } from './helpers/users.ts';
import { buildActivityFit } from './helpers/fit-builder.ts';
import { assertSampleFiles, backgroundUploads, readiness } from './helpers/faults.ts';
import { startOwnInfrastructure, type OwnPostgres, type OwnRedis } from './helpers/own-servers.ts';
import { yazlZip } from './helpers/zip.ts';

let service: TestService;
let redis: OwnRedis;
let postgres: OwnPostgres;
test.before(async () => {
  ({ redis, postgres } = await startOwnInfrastructure());
  service = await startTestService({ workers: true, env: { JOB_LOCK_MS: '2000', API_RATE_LIMIT: '1000000' } });
});
test.after.always(async () => {
  await service?.close().catch(() => {});
  await redis?.kill();
  postgres?.remove();
});

const CATCH_UP_MS = 60_000;
let day = 0;
const ride = () =>
  buildActivityFit({ sessions: [{ sport: 'cycling', start: new Date(Date.UTC(2026, 0, 1, 6) + ++day * 3_600_000), seconds: 300 }] });

async function startBackfill(token: string, files: number): Promise<string> {
  const archive = await yazlZip(Array.from({ length: files }, (_, i) => ({ name: `history/ride${i}.fit`, data: ride() })));
  const form = new FormData();
  form.append('archive', new Blob([archive as Uint8Array<ArrayBuffer>], { type: 'application/zip' }), 'export.zip');
  const res = await fetch(`${service.url}/api/v1/activities/backfill`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  if (res.status !== 202) throw new Error(`backfill: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
}

async function outageUnderLoad(t: ExecutionContext, stop: () => Promise<void>, start: () => Promise<void> | void, seconds: number) {
  const user = await createTestUser(service);
  const token = await tokenFor(service, user, ['data:read', 'data:write']);
  const uploads = backgroundUploads(t, service, token, () => ride(), { pauseMs: 100 });
  await poll('a few uploads accepted', async () => uploads.accepted.size >= 4);
  const backfill = await startBackfill(token, 40);
  await stop();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  await start();
  await poll('both dependencies back in /readyz', async () => (await readiness(service)).status === 200, 30_000);
  const back = Date.now();
  await poll('uploads accepted again', async () => uploads.statuses.at(-1) === 202, 30_000);
  await uploads.stop();

  const db = service.deps.db;
  const unfinished = async () => {
    const rows = await db.selectFrom('sources').select(['id', 'status']).where('user_id', '=', user.id).execute();
    const b = await db.selectFrom('backfills').select('status').where('id', '=', backfill).executeTakeFirst();
    return { processing: rows.filter((r) => r.status === 'processing').length, backfill: b?.status, rows };
  };
  await poll(
    `every acknowledged upload and the backfill finished within ${CATCH_UP_MS / 1000} s of the return`,
    async () => {
      const u = await unfinished();
      return u.processing === 0 && u.backfill === 'completed';
    },
    CATCH_UP_MS,
  ).catch(async (err) => {
    throw new Error(
      `${(err as Error).message}: ${JSON.stringify(await unfinished().then((u) => ({ processing: u.processing, backfill: u.backfill })))}`,
    );
  });
  t.true(Date.now() - back <= CATCH_UP_MS + 5_000, `caught up ${Math.round((Date.now() - back) / 1000)} s after the return`);
  const { rows } = await unfinished();
  for (const id of uploads.accepted) t.is(rows.find((r) => r.id === id)?.status, 'processed', `acknowledged upload ${id}`);
  t.true(
    rows.every((r) => r.status === 'processed'),
    JSON.stringify(rows.filter((r) => r.status !== 'processed')),
  );
  const activities = await db.selectFrom('activities').select('source_id').where('user_id', '=', user.id).execute();
  t.is(activities.length, rows.length, 'one activity per file');
  t.is(new Set(activities.map((a) => a.source_id)).size, activities.length, 'none stored twice');
  await assertSampleFiles(t, service, user.id);
}

for (const seconds of [10, 90]) {
  test.serial(
    `PostgreSQL stopped for ${seconds} s under uploads and a backfill: everything acknowledged ends processed within 60 s of its return, once, without housekeeping`,
    async (t) => {
      await outageUnderLoad(
        t,
        async () => postgres.kill(),
        () => postgres.start(),
        seconds,
      );
    },
  );
}

for (const seconds of [10, 90]) {
  test.serial(
    `Redis stopped (restarted empty) for ${seconds} s under uploads and a backfill: everything acknowledged ends processed within 60 s of its return, once, without housekeeping`,
    async (t) => {
      await outageUnderLoad(
        t,
        () => redis.kill(),
        () => redis.start(),
        seconds,
      );
    },
  );
}
