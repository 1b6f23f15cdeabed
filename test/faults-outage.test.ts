import test from 'ava';
import { startTestService, type TestService } from './helpers/service.ts';
import { poll } from './helpers/curves.ts';
import { createTestUser, tokenFor } from './helpers/users.ts';
import { buildActivityFit } from './helpers/fit-builder.ts';
import { api, upload, waitForSource } from './helpers/activities.ts';
import { assertSampleFiles, backgroundUploads, readiness } from './helpers/faults.ts';
import { startOwnInfrastructure, type OwnPostgres, type OwnRedis } from './helpers/own-servers.ts';

// The service (API and workers, as `npm start` runs them) against a PostgreSQL cluster and a Redis
// server of this file's own, which the tests kill and restart. An uncaught exception or an
// unhandled 'error' event in the service would end this process, failing the file.
let service: TestService;
let redis: OwnRedis;
let postgres: OwnPostgres;
test.before(async () => {
  ({ redis, postgres } = await startOwnInfrastructure());
  service = await startTestService({ workers: true, env: { JOB_LOCK_MS: '2000' } });
});
test.after.always(async () => {
  await service?.close().catch(() => {});
  await redis?.kill();
  postgres?.remove();
});

const fit = (minute: number) =>
  buildActivityFit({ sessions: [{ sport: 'cycling', start: new Date(Date.UTC(2026, 0, 1, 6, minute)), seconds: 600 }] });

test.serial(
  'Redis down: uploads answer 503 with Retry-After and store nothing, /readyz says so; once back, the schedule is restored and uploads work',
  async (t) => {
    const user = await createTestUser(service);
    const token = await tokenFor(service, user, ['data:read', 'data:write']);
    const before = await upload(service, token, [{ name: 'a.fit', bytes: fit(0) }]);
    t.is(before.status, 202);
    t.is((await waitForSource(service, token, before.body.sources[0].id)).status, 'processed');
    t.is((await service.deps.queues.housekeeping.getJobSchedulers()).length, 1);

    await redis.kill();
    const down = await upload(service, token, [{ name: 'b.fit', bytes: fit(10) }]);
    t.is(down.status, 503, JSON.stringify(down.body));
    t.truthy(down.headers.get('retry-after'));
    t.regex(down.body.detail, /temporarily unavailable/);
    const sources = await service.deps.db.selectFrom('sources').select('id').where('user_id', '=', user.id).execute();
    t.is(sources.length, 1, 'the refused upload stored no source');
    t.like(await readiness(service), { status: 503, body: { status: 'unavailable', checks: { postgres: 'ok', redis: 'error' } } });
    // Reads that need only PostgreSQL still answer.
    t.is((await api(service, token, 'GET', '/api/v1/activities/')).status, 200);

    await redis.start(); // empty: the jobs and the housekeeping schedule are gone
    await poll('Redis back in /readyz', async () => (await readiness(service)).status === 200);
    await poll(
      'the housekeeping schedule restored',
      async () => (await service.deps.queues.housekeeping.getJobSchedulers()).length === 1,
      10_000,
    );
    const after = await upload(service, token, [{ name: 'b.fit', bytes: fit(10) }]);
    t.is(after.status, 202, JSON.stringify(after.body));
    t.is((await waitForSource(service, token, after.body.sources[0].id)).status, 'processed');
    await assertSampleFiles(t, service, user.id);
  },
);

test.serial('an upload stored while Redis went away is queued by the same upload sent again', async (t) => {
  const user = await createTestUser(service);
  const token = await tokenFor(service, user, ['data:read', 'data:write']);
  // Redis vanishes after the request passed its check, as it queues the file: the source is stored, its job is not.
  const ingest = service.deps.queues.ingest;
  const addBulk = ingest.addBulk.bind(ingest);
  ingest.addBulk = async (jobs) => {
    ingest.addBulk = addBulk;
    await redis.kill();
    await poll('the API to see Redis gone', async () => service.deps.redis.status !== 'ready');
    return addBulk(jobs);
  };
  const res = await upload(service, token, [{ name: 'c.fit', bytes: fit(20) }]);
  t.is(res.status, 503, JSON.stringify(res.body));
  t.truthy(res.headers.get('retry-after'));
  const [stored] = await service.deps.db.selectFrom('sources').select(['id', 'status']).where('user_id', '=', user.id).execute();
  t.is(stored?.status, 'processing', 'stored with no job');

  await redis.start();
  await poll('Redis back in /readyz', async () => (await readiness(service)).status === 200);
  const retry = await upload(service, token, [{ name: 'c.fit', bytes: fit(20) }]);
  t.is(retry.status, 202);
  t.is(retry.body.sources[0].id, stored!.id, 'the same source');
  t.is((await waitForSource(service, token, stored!.id)).status, 'processed');
  await assertSampleFiles(t, service, user.id);
});

test.serial(
  'PostgreSQL killed under uploads: requests answer 503 meanwhile, /readyz says so, the service reconnects and every acknowledged upload ends once',
  async (t) => {
    const user = await createTestUser(service);
    const token = await tokenFor(service, user, ['data:read', 'data:write']);
    const uploads = backgroundUploads(t, service, token, (n) => fit(100 + n));
    const { accepted, statuses } = uploads;
    await poll('a few uploads accepted', async () => accepted.size >= 5).catch((err) => {
      throw new Error(`${err.message}: ${statuses.join(' ')}`);
    });
    postgres.kill();
    await poll('an upload refused with 503', async () => statuses.includes(503), 20_000);
    const ready = await readiness(service);
    t.like(ready, { status: 503, body: { checks: { postgres: 'error', redis: 'ok' } } });
    await new Promise((r) => setTimeout(r, 3_000)); // longer than an ingest job's first retries
    postgres.start();
    await poll('PostgreSQL back in /readyz', async () => (await readiness(service)).status === 200, 20_000);
    await poll('uploads accepted again', async () => statuses.at(-1) === 202, 20_000);
    await uploads.stop();

    // Jobs that met the outage waited without spending their attempts (workers/outage.ts): no housekeeping run is needed.
    const later = await tokenFor(service, user, ['data:read']);
    for (const id of accepted) t.is((await waitForSource(service, later, id, 60_000)).status, 'processed');
    const rows = await service.deps.db.selectFrom('sources').select(['id', 'status']).where('user_id', '=', user.id).execute();
    t.deepEqual(
      rows.filter((r) => r.status === 'processing'),
      [],
      'no source left processing',
    );
    const activities = await service.deps.db.selectFrom('activities').select('source_id').where('user_id', '=', user.id).execute();
    t.is(new Set(activities.map((a) => a.source_id)).size, activities.length, 'one activity per file');
    for (const id of accepted)
      t.true(
        rows.some((r) => r.id === id),
        'every acknowledged upload is stored',
      );
    await assertSampleFiles(t, service, user.id);
  },
);
