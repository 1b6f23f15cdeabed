import test from 'ava';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Job } from 'bullmq';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestApplication, createTestUser, tokenFor } from './helpers/users.ts';
import { api, uploadAndWait } from './helpers/activities.ts';
import { fixturesDir } from './helpers/fixtures.ts';
import { poll } from './helpers/curves.ts';
import { addAndAwait, deliveryJobId, fanOutJobId, finishedJob } from './helpers/jobs.ts';
import { deleteConsent, recordConsent } from '../db/grants.ts';
import { fanOutEvent } from '../db/events.ts';
import { curvesJobId, enqueueCurves, enqueueDeliveries, enqueueFanOut, deliveryAttempts } from '../workers/queues.ts';
import { ingestProcessor } from '../workers/ingest.ts';
import { webhooksProcessor } from '../workers/webhooks.ts';
import { markSourceFailed } from '../db/sources.ts';
import { createEnginePool } from '../engine/pool.ts';
import { createSampleStore } from '../engine/samples/sample-file.ts';
import { createLogger } from '../lib/log.ts';
import type { User } from '../db/database.ts';
import { yazlZip } from './helpers/zip.ts';
import { buildActivityFit } from './helpers/fit-builder.ts';

/** Retries wait 100, 200, 400 ms (then the next, 800 ms, would exceed the 400 ms cap): 4 attempts. */
const RETRY = { WEBHOOK_RETRY_BASE_MS: '100', WEBHOOK_RETRY_MAX_DELAY_MS: '400', WEBHOOK_TIMEOUT_MS: '500' };

let service: TestService;
const servers: Server[] = [];
test.before(async () => {
  service = await startTestService({ workers: true, env: { WEBHOOK_ALLOW_HTTP_LOOPBACK: 'true', ...RETRY } });
});
test.after.always(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    server.close();
  }
  await service?.close();
});

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A real HTTP receiver on loopback; `respond` decides each answer (by request number, from 0). */
async function receiver(respond: (n: number, res: import('node:http').ServerResponse) => void = (_n, res) => res.writeHead(204).end()) {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      respond(received.length - 1, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  servers.push(server);
  return { url, received, server };
}

/** Verify `X-Signature: t=…,v1=…` with node:crypto, independently of the service's code. */
function verifySignature(secret: string, header: string | string[] | undefined, body: string): boolean {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(header));
  if (!m) return false;
  const expected = createHmac('sha256', secret).update(`${m[1]}.${body}`).digest();
  return timingSafeEqual(expected, Buffer.from(m[2]!, 'hex'));
}

/** A user who authorized an application with the given endpoints and secret. */
async function authorizedApp(endpoints: string[], opts: { user?: User; consent?: boolean; secret?: string | null } = {}) {
  const user = opts.user ?? (await createTestUser(service));
  const owner = await createTestUser(service);
  const secret = opts.secret === undefined ? `whs_${Math.random().toString(36).slice(2)}` : opts.secret;
  const app = await createTestApplication(service, owner, { webhook_endpoints: endpoints, webhook_secret: secret });
  if (opts.consent !== false) await recordConsent(service.deps.db, user.id, app.id, ['data:read', 'data:write']);
  const token = await tokenFor(service, user, ['data:read', 'data:write']);
  return { user, app, secret, token };
}

const activityIdsOf = async (sourceId: string) =>
  (await service.deps.db.selectFrom('activities').select('id').where('source_id', '=', sourceId).execute()).map((a) => a.id);
const deliveries = (applicationId: string) =>
  service.deps.db.selectFrom('webhook_deliveries').selectAll().where('application_id', '=', applicationId).orderBy('created_at').execute();
const eventsOf = (userId: string) =>
  service.deps.db.selectFrom('events').selectAll().where('user_id', '=', userId).orderBy('occurred_at').orderBy('type').execute();

/**
 * Wait until all that a user's events set off is over: every event fanned out (by its fan-out job,
 * done, so its deliveries exist and are queued; or by the relay at once, when the user had
 * authorized no application with endpoints: no job then) and every one of those deliveries
 * finished for good (delivered, failed after its last attempt, or abandoned). After this nothing
 * more is sent for these events, so a test can assert what was, and was not, received.
 */
async function settled(userId: string) {
  const { db, queues } = service.deps;
  const events = await eventsOf(userId);
  for (const e of events) {
    await poll(
      `${e.type} ${e.id} fanned out`,
      async () => (await db.selectFrom('events').select('fanned_out_at').where('id', '=', e.id).executeTakeFirst())?.fanned_out_at,
    );
    if (!(await queues.webhooks.getJob(fanOutJobId(e.id)))) continue;
    const fanOut = await finishedJob(queues.webhooks, fanOutJobId(e.id));
    if (fanOut.state !== 'completed') throw new Error(`the fan-out of ${e.type} ${e.id} failed: ${fanOut.job.failedReason}`);
  }
  if (!events.length) return;
  const rows = await db
    .selectFrom('webhook_deliveries')
    .select('id')
    .where(
      'event_id',
      'in',
      events.map((e) => e.id),
    )
    .execute();
  for (const d of rows) await finishedJob(queues.webhooks, deliveryJobId(d.id), 20_000);
}

test('a trace change is delivered to every authorized application with endpoints, signed; nobody else receives it', async (t) => {
  const hook = await receiver();
  const other = await receiver();
  const { user, app, secret, token } = await authorizedApp([hook.url, `${hook.url}?second=1`]);
  // Not authorized by this user (another user authorized it), and authorized with no endpoints.
  const stranger = await authorizedApp([other.url]);
  const silent = await authorizedApp([], { user });

  const created = await api(service, token, 'POST', '/api/v1/traces/', { timestamp: '2026-05-18T10:00:00Z', lactate: 1.2 });
  t.is(created.status, 201);
  await settled(user.id);
  t.is(hook.received.length, 2, 'one request per endpoint');
  t.deepEqual(hook.received.map((r) => r.path).sort(), ['/hook', '/hook?second=1']);
  for (const r of hook.received) {
    const body = JSON.parse(r.body);
    t.deepEqual(Object.keys(body).sort(), ['actor_id', 'event_type', 'resource_id', 'timestamp', 'user_id']);
    t.like(body, { user_id: user.id, event_type: 'trace_created', resource_id: created.body.id, actor_id: null });
    t.regex(body.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    t.true(verifySignature(secret!, r.headers['x-signature'], r.body), 'X-Signature verifies with the webhook secret');
    t.false(verifySignature('another secret', r.headers['x-signature'], r.body));
    t.is(r.headers['content-type'], 'application/json');
    t.is(r.headers['x-event-type'], 'trace_created');
  }
  t.is(hook.received[0]!.headers['x-event-id'], hook.received[1]!.headers['x-event-id']);
  t.is(other.received.length, 0, 'an application this user never authorized receives nothing');
  t.is((await deliveries(stranger.app.id)).length, 0);
  t.is((await deliveries(silent.app.id)).length, 0);

  const rows = await poll('delivered', async () => {
    const r = await deliveries(app.id);
    return r.length === 2 && r.every((d) => d.status === 'delivered') && r;
  });
  t.true(rows.every((d) => d.attempts === 1 && d.last_status_code === 204 && d.delivered_at !== null));
});

test('every kind of change publishes exactly one event: activities, sources, traces, tests, curves', async (t) => {
  const hook = await receiver();
  const { user, app, token } = await authorizedApp([hook.url]);
  const fit = readFileSync(join(fixturesDir(), 'fit', '4078723797.fit'));
  const [source] = await uploadAndWait(service, token, [{ name: 'ride.fit', bytes: fit }]);
  const activityId = source.activity_ids[0] as string;
  const [broken] = await uploadAndWait(service, token, [{ name: 'broken.fit', bytes: fit.subarray(0, 200) }]);
  t.is(broken.status, 'failed');
  const trace = (await api(service, token, 'POST', '/api/v1/traces/', { timestamp: '2026-05-18T10:00:00Z' })).body;
  t.is((await api(service, token, 'PUT', `/api/v1/traces/${trace.id}`, { timestamp: '2026-05-18T11:00:00Z' })).status, 200);
  t.is((await api(service, token, 'DELETE', `/api/v1/traces/${trace.id}`)).status, 204);
  const labTest = (await api(service, token, 'POST', '/api/v1/tests/', { sport: 'cycling', start: '2026-05-19T10:00:00Z' })).body;
  const linked = (await api(service, token, 'POST', '/api/v1/traces/', { timestamp: '2026-05-20T10:00:00Z', test_id: labTest.id })).body;
  t.is((await api(service, token, 'PUT', `/api/v1/tests/${labTest.id}`, { sport: 'running', start: '2026-05-19T10:00:00Z' })).status, 200);
  t.is((await api(service, token, 'DELETE', `/api/v1/tests/${labTest.id}`)).status, 204);
  t.is((await api(service, token, 'DELETE', `/api/v1/tests/${labTest.id}`)).status, 404);
  // Refused and missing changes publish nothing.
  t.is((await api(service, token, 'PUT', `/api/v1/traces/${trace.id}`, { timestamp: '2026-05-18T11:00:00Z' })).status, 404);
  t.is((await api(service, token, 'POST', '/api/v1/traces/', { timestamp: 'naive' })).status, 422);

  // Recomputed curves that differ are an update; identical ones are not.
  await service.deps.db.deleteFrom('activity_curves').where('activity_id', '=', activityId).execute();
  const curvesEvents = async () => (await eventsOf(user.id)).filter((e) => e.type === 'activity_updated').length;
  const recompute = (job: { userId: string; all?: boolean }) =>
    addAndAwait<{ recomputed: number }>(service.deps.queues.curves, service.config.REDIS_URL, curvesJobId(job), () =>
      enqueueCurves(service.deps.queues, job),
    );
  t.like(await recompute({ userId: user.id }), { recomputed: 1 });
  t.is(await curvesEvents(), 1, 'missing curves computed: a change');
  t.like(await recompute({ userId: user.id, all: true }), { recomputed: 1 }, 'the curves were computed again and stored');
  t.is(await curvesEvents(), 1, 'a recompute giving the same curves is not a change');

  t.is((await api(service, token, 'DELETE', `/api/v1/activities/${activityId}`)).status, 204);
  t.is((await api(service, token, 'DELETE', `/api/v1/activities/${activityId}`)).status, 404);

  const expected = [
    ['activity_created', activityId],
    ['source_processed', source.id],
    ['source_failed', broken.id],
    ['trace_created', trace.id],
    ['trace_updated', trace.id],
    ['trace_deleted', trace.id],
    ['test_created', labTest.id],
    ['trace_created', linked.id],
    ['test_updated', labTest.id],
    ['test_deleted', labTest.id],
    ['trace_updated', linked.id],
    ['activity_updated', activityId],
    ['activity_deleted', activityId],
  ];
  const events = await eventsOf(user.id);
  t.deepEqual(events.map((e) => [e.type, e.resource_id]).sort(), expected.sort());
  await settled(user.id);
  t.deepEqual(hook.received.map((r) => JSON.parse(r.body).event_type).sort(), expected.map(([type]) => type).sort());
  t.is((await deliveries(app.id)).length, expected.length);
});

test('one event per change when a job or a fan-out runs again', async (t) => {
  const hook = await receiver();
  const { user, app, token } = await authorizedApp([hook.url]);
  const fit = readFileSync(join(fixturesDir(), 'fit', '4078723797.fit'));
  const [source] = await uploadAndWait(service, token, [{ name: 'ride.fit', bytes: fit }]);
  await settled(user.id);
  t.is(hook.received.length, 2);

  // The ingest job of the same source run again (a retried or restarted job): nothing new.
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
    now: service.clock.now,
  });
  const again = await ingest({ data: { sourceId: source.id }, attemptsMade: 1, stalledCounter: 0 } as unknown as Job<{ sourceId: string }>);
  t.like(again, { skipped: 'source already processed' });
  t.false(await markSourceFailed(service.deps.db, source.id, 'internal_error', 'x', new Date()), 'a processed source is not failed later');

  // The fan-out of an event run again, and its deliveries queued again: no second request.
  const events = await eventsOf(user.id);
  t.deepEqual(events.map((e) => e.type).sort(), ['activity_created', 'source_processed']);
  for (const e of events) {
    const fanned = await fanOutEvent(service.deps.db, e.id, new Date());
    t.deepEqual(fanned?.pending, [], 'delivered deliveries are not pending');
  }
  const rows = await deliveries(app.id);
  const { queues } = service.deps;
  const jobIds = [...events.map((e) => fanOutJobId(e.id)), ...rows.map((r) => deliveryJobId(r.id))];
  const snapshot = async () =>
    Promise.all(
      jobIds.map(async (id) => {
        const job = (await queues.webhooks.getJob(id))!;
        return { id, state: await job.getState(), added: job.timestamp, finished: job.finishedOn, attempts: job.attemptsMade };
      }),
    );
  const finished = await snapshot();
  t.true(
    finished.every((j) => j.state === 'completed'),
    JSON.stringify(finished),
  );
  await enqueueFanOut(
    queues,
    events.map((e) => e.id),
  );
  await enqueueDeliveries(
    queues,
    rows.map((r) => r.id),
    { baseMs: 100, maxDelayMs: 400 },
  );
  t.deepEqual(
    await snapshot(),
    finished,
    'queued again under the same job ids: the finished jobs stay as they were, nothing is added or run',
  );

  // And were a delivery job run again anyway, it would send nothing: the delivery is no longer pending.
  const deliver = webhooksProcessor({
    db: service.deps.db,
    queues,
    log: createLogger('silent'),
    now: service.clock.now,
    box: service.deps.box,
    allowHttpLoopback: true,
    timeoutMs: 500,
    retry: { baseMs: 100, maxDelayMs: 400 },
  });
  for (const r of rows) {
    t.deepEqual(
      await deliver({ data: { deliveryId: r.id }, attemptsMade: 0, opts: { attempts: 4 } } as unknown as Job<{ deliveryId: string }>),
      { skipped: 'already delivered' },
    );
  }
  t.is(hook.received.length, 2);
  t.is((await deliveries(app.id)).length, 2);
  t.is((await eventsOf(user.id)).length, 2);
});

test('retries: after 500s and after a timeout the delivery succeeds with the same body and event id; it fails for good after the last attempt', async (t) => {
  t.is(deliveryAttempts(100, 400), 4);
  t.is(deliveryAttempts(10_000, 86_400_000), 15, 'by default: waits 10 s, 20 s, … 22.8 h; the next (45.5 h) would exceed 24 h');

  const flaky = await receiver((n, res) => (n < 2 ? res.writeHead(500).end('database down') : res.writeHead(200).end('ok')));
  let hungUp = false;
  const slow = await receiver((n, res) =>
    n === 0 ? res.once('close', () => (hungUp = true)) /* never answers */ : res.writeHead(200).end(),
  );
  const broken = await receiver((_n, res) => res.writeHead(503).end('x'.repeat(10_000)));
  const a = await authorizedApp([flaky.url]);
  const b = await authorizedApp([slow.url], { user: a.user });
  const c = await authorizedApp([broken.url], { user: a.user });

  t.is((await api(service, a.token, 'POST', '/api/v1/traces/', { timestamp: '2026-05-18T10:00:00Z' })).status, 201);
  const delivered = (id: string) => poll('delivered', async () => (await deliveries(id)).find((d) => d.status === 'delivered'), 20_000);
  const viaFlaky = await delivered(a.app.id);
  t.is(viaFlaky.attempts, 3);
  t.is(flaky.received.length, 3);
  t.is(new Set(flaky.received.map((r) => r.body)).size, 1, 'every attempt sends the same body');
  t.is(new Set(flaky.received.map((r) => r.headers['x-event-id'])).size, 1);
  t.true(flaky.received.every((r) => verifySignature(a.secret!, r.headers['x-signature'], r.body)));

  const viaSlow = await delivered(b.app.id);
  t.is(viaSlow.attempts, 2);
  t.is(slow.received.length, 2);
  const slowJob = await finishedJob(service.deps.queues.webhooks, deliveryJobId(viaSlow.id));
  t.is(slowJob.state, 'completed');
  const traces = slowJob.job.stacktrace ?? [];
  t.is(traces.length, 1, 'one failed attempt');
  t.regex(traces[0] ?? '', /^Error: timed out after 500 ms\n/, 'the first attempt ended at the time limit');
  await poll('the unanswered request hung up', async () => hungUp);

  const [toBroken] = await deliveries(c.app.id);
  const end = await finishedJob(service.deps.queues.webhooks, deliveryJobId(toBroken!.id), 20_000);
  t.is(end.state, 'failed', 'failed for good: no retry is scheduled');
  t.is(end.job.attemptsMade, 4);
  t.is(broken.received.length, 4, 'four attempts, then no more');
  const [failed] = await deliveries(c.app.id);
  t.like(failed, { status: 'failed', attempts: 4, last_status_code: 503 });
  t.true(Buffer.byteLength(failed!.response_excerpt ?? '') <= 512, 'only an excerpt of the response is kept');
  t.regex(failed!.response_excerpt ?? '', /^x+$/);
});

test('no delivery without consent, nor after the user revokes it (pending retries stop too)', async (t) => {
  const hook = await receiver((_n, res) => res.writeHead(500).end());
  const { user, app, token } = await authorizedApp([hook.url]);
  t.is((await api(service, token, 'POST', '/api/v1/traces/', { timestamp: '2026-05-18T10:00:00Z' })).status, 201);
  await poll('first attempt', async () => hook.received.length >= 1);
  await deleteConsent(service.deps.db, user.id, app.id);
  const closed = await poll('abandoned', async () => (await deliveries(app.id)).find((d) => d.status === 'failed'), 10_000);
  t.regex(closed.last_error ?? '', /no longer authorizes/);
  const attemptsSoFar = hook.received.length;
  t.is((await api(service, token, 'POST', '/api/v1/traces/', { timestamp: '2026-05-18T11:00:00Z' })).status, 201);
  await settled(user.id); // the abandoned delivery's job is over, and the new event is fanned out
  t.is(hook.received.length, attemptsSoFar, 'nothing after revocation');
  t.is((await deliveries(app.id)).length, 1, 'no delivery is created for the new event');

  const never = await receiver();
  const unconsented = await authorizedApp([never.url], { consent: false });
  t.is((await api(service, unconsented.token, 'POST', '/api/v1/traces/', { timestamp: '2026-05-18T10:00:00Z' })).status, 201);
  await settled(unconsented.user.id);
  t.is((await eventsOf(unconsented.user.id)).length, 1, 'the change was published');
  t.is((await deliveries(unconsented.app.id)).length, 0, 'but no delivery was made of it');
  t.is(never.received.length, 0);
});

test('safety: private targets refused after DNS, redirects not followed, no secret no delivery; the current secret signs', async (t) => {
  const target = await receiver();
  const redirecting = await receiver((_n, res) => res.writeHead(302, { location: target.url }).end());
  // Stored directly: the Settings form refuses these on save, but DNS can change after a save.
  // This machine's own name resolves (through the system resolver) to one of its addresses: never public.
  const ownName = `https://${hostname()}/hook`;
  const { user, app, token } = await authorizedApp(['https://10.1.2.3/hook', ownName, redirecting.url]);
  const unsigned = await authorizedApp([target.url], { user, secret: null });

  t.is((await api(service, token, 'POST', '/api/v1/traces/', { timestamp: '2026-05-18T10:00:00Z' })).status, 201);
  const rows = await poll(
    'all failed',
    async () => {
      const r = await deliveries(app.id);
      return r.length === 3 && r.every((d) => d.status === 'failed') && r;
    },
    20_000,
  );
  await settled(user.id); // the unsigned application's delivery (to `target`) is over too
  const byEndpoint = new Map(rows.map((r) => [r.endpoint, r]));
  t.regex(byEndpoint.get('https://10.1.2.3/hook')!.last_error ?? '', /^refused: .*private network/);
  t.regex(byEndpoint.get(ownName)!.last_error ?? '', /^refused: .*resolves to .*not a public address/);
  t.is(byEndpoint.get(ownName)!.attempts, 4);
  t.like(byEndpoint.get(redirecting.url), { last_status_code: 302, attempts: 4 });
  t.is(target.received.length, 0, 'the redirect was not followed, and the unsigned delivery was not sent');
  const [abandoned] = await deliveries(unsigned.app.id);
  t.like(abandoned, { status: 'failed', attempts: 0 });
  t.regex(abandoned!.last_error ?? '', /no webhook secret/);

  // Rotating the secret: the next delivery is signed with the new one.
  const hook = await receiver();
  const rotating = await authorizedApp([hook.url], { user });
  await service.deps.db.updateTable('applications').set({ webhook_secret: 'whs_rotated' }).where('id', '=', rotating.app.id).execute();
  t.is((await api(service, token, 'POST', '/api/v1/traces/', { timestamp: '2026-05-18T12:00:00Z' })).status, 201);
  await poll('delivered', async () => hook.received.length >= 1);
  t.true(verifySignature('whs_rotated', hook.received[0]!.headers['x-signature'], hook.received[0]!.body));
  t.false(verifySignature(rotating.secret!, hook.received[0]!.headers['x-signature'], hook.received[0]!.body));
});

test('the relay fans out every committed event, a page at a time, also events written without a wake-up', async (t) => {
  const user = await createTestUser(service);
  const at = Date.now();
  // Written straight into the outbox, with no NOTIFY: the relay's poll must find them.
  await service.deps.db
    .insertInto('events')
    .values(
      Array.from({ length: 1_100 }, (_, i) => ({
        user_id: user.id,
        type: 'trace_created',
        resource_id: `bulk-${i}`,
        occurred_at: new Date(at - (i % 3)),
      })),
    )
    .execute();
  const pending = async () =>
    Number(
      (
        await service.deps.db
          .selectFrom('events')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('user_id', '=', user.id)
          .where('fanned_out_at', 'is', null)
          .executeTakeFirstOrThrow()
      ).n,
    );
  await poll('all fanned out', async () => (await pending()) === 0, 30_000);
  t.is(await pending(), 0);
  t.is(
    (
      await service.deps.db
        .selectFrom('webhook_deliveries as d')
        .innerJoin('events as e', 'e.id', 'd.event_id')
        .select('d.id')
        .where('e.user_id', '=', user.id)
        .execute()
    ).length,
    0,
    'a user who authorized nothing gets no deliveries',
  );
  const ids = await service.deps.db.selectFrom('events').select('id').where('user_id', '=', user.id).limit(20).execute();
  const jobs = await Promise.all(ids.map((e) => service.deps.queues.webhooks.getJob(fanOutJobId(e.id))));
  t.true(
    jobs.every((j) => j === undefined),
    'nor a fan-out job each: nobody can receive them',
  );
});

test('an event is fanned out by a job when the user has authorized an application with endpoints, at once when not', async (t) => {
  const hook = await receiver();
  const { user, token } = await authorizedApp([hook.url]);
  const nobody = await authorizedApp([]);
  const { db, queues } = service.deps;
  for (const tk of [token, nobody.token])
    t.is((await api(service, tk, 'POST', '/api/v1/traces/', { timestamp: '2026-05-18T10:00:00Z' })).status, 201);
  const [withApp] = await eventsOf(user.id);
  const [without] = await eventsOf(nobody.user.id);
  t.is((await finishedJob(queues.webhooks, fanOutJobId(withApp!.id))).state, 'completed');
  t.is((await db.selectFrom('webhook_deliveries').select('id').where('event_id', '=', withApp!.id).execute()).length, 1);
  await settled(user.id);
  t.is(hook.received.length, 1);
  await poll('fanned out', async () => (await eventsOf(nobody.user.id))[0]?.fanned_out_at);
  t.is(await queues.webhooks.getJob(fanOutJobId(without!.id)), undefined);
  t.is((await db.selectFrom('webhook_deliveries').select('id').where('event_id', '=', without!.id).execute()).length, 0);
});

test('a change made through a delegated token names its actor; a managed user’s events go to the manager’s applications acting as them, deletion included', async (t) => {
  const hook = await receiver();
  const coach = await createTestUser(service, { first_name: 'Carla' });
  const appOwner = await createTestUser(service);
  const secret = 'whs_coaching';
  const app = await createTestApplication(service, appOwner, { webhook_endpoints: [hook.url], webhook_secret: secret });
  await recordConsent(service.deps.db, coach.id, app.id, ['data:read', 'data:write']);
  const coachToken = await tokenFor(service, coach, ['data:read', 'data:write'], app.id);
  const kid = (await api(service, coachToken, 'POST', '/api/v1/users/', { first_name: 'Kim', last_name: null })).body.id as string;
  const kidToken = (await api(service, coachToken, 'POST', '/api/v1/oauth/delegated-token', { sub: kid })).body.access_token as string;
  const trace = (await api(service, kidToken, 'POST', '/api/v1/traces/', { timestamp: '2026-05-18T10:00:00Z', lactate: 1.4 })).body;
  const fit = readFileSync(join(fixturesDir(), 'fit', '4078723797.fit'));
  const [source] = await uploadAndWait(service, kidToken, [{ name: 'ride.fit', bytes: fit }]);
  t.is(source.status, 'processed');
  await settled(kid);
  const bodies = () => hook.received.map((r) => JSON.parse(r.body) as Record<string, unknown>);
  t.deepEqual(
    bodies()
      .map((b) => [b.event_type, b.user_id, b.actor_id])
      .sort(),
    [
      ['activity_created', kid, coach.id],
      ['source_processed', kid, coach.id],
      ['trace_created', kid, coach.id],
    ],
    'the ingest in the worker names the actor who uploaded',
  );
  t.true(hook.received.every((r) => verifySignature(secret, r.headers['x-signature'], r.body)));
  // A history imported through the delegated token: the import's sources and their ingests name the actor too.
  const form = new FormData();
  const archive = await yazlZip([
    {
      name: 'history/ride.fit',
      data: buildActivityFit({ sessions: [{ sport: 'cycling', start: new Date('2025-02-01T07:00:00Z'), seconds: 600 }] }),
    },
  ]);
  form.append('archive', new Blob([archive as Uint8Array<ArrayBuffer>], { type: 'application/zip' }), 'history.zip');
  const imported = await fetch(`${service.url}/api/v1/activities/backfill`, {
    method: 'POST',
    headers: { authorization: `Bearer ${kidToken}` },
    body: form,
  });
  t.is(imported.status, 202);
  const backfillSource = await poll('the imported file processed', async () => {
    const row = await service.deps.db
      .selectFrom('sources')
      .select(['id', 'status', 'actor_id'])
      .where('user_id', '=', kid)
      .where('backfill_id', 'is not', null)
      .executeTakeFirst();
    return row?.status === 'processed' && row;
  });
  t.is(backfillSource.actor_id, coach.id);
  await settled(kid);
  t.true(
    bodies().some((b) => b.event_type === 'source_processed' && b.resource_id === backfillSource.id && b.actor_id === coach.id),
    'the imported file’s ingest names the actor',
  );
  const importedActivities = await activityIdsOf(backfillSource.id);
  t.is(importedActivities.length, 1);
  // Deleting the managed user sends each deletion, with the actor.
  t.is((await api(service, coachToken, 'DELETE', `/api/v1/users/${kid}`)).status, 204);
  await settled(kid);
  t.deepEqual(
    bodies()
      .filter((b) => String(b.event_type).endsWith('_deleted'))
      .map((b) => [b.event_type, b.resource_id, b.actor_id])
      .sort(),
    [
      ...[source.activity_ids[0], ...importedActivities].map((id) => ['activity_deleted', id, coach.id]),
      ['trace_deleted', trace.id, coach.id],
    ].sort(),
  );
});
