import test, { type ExecutionContext } from 'ava';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { findUserByEmail } from '../db/users.ts';
import { updateApplication } from '../db/applications.ts';
import { createTestEvent } from '../db/events.ts';
import type { User } from '../db/database.ts';
import { startTestService, freePort, type TestService } from './helpers/service.ts';
import { WebClient, signUp } from './helpers/http.ts';
import { createTestApplication } from './helpers/users.ts';
import { poll } from './helpers/curves.ts';
import { deliveryJobId, finishedJob } from './helpers/jobs.ts';

/** Retries wait 100 then 200 ms (the next, 400 ms, would exceed the 200 ms cap): 3 attempts. */
const ENV = { WEBHOOK_ALLOW_HTTP_LOOPBACK: 'true', WEBHOOK_RETRY_BASE_MS: '100', WEBHOOK_RETRY_MAX_DELAY_MS: '200' };

let service: TestService;
test.before(async () => {
  service = await startTestService({ workers: true, env: ENV });
});
test.after.always(() => service?.close());

let n = 0;
const PASSWORD = 'a long enough passphrase';

/** A new account, signed in on a fresh client. */
async function signedIn(): Promise<{ web: WebClient; user: User }> {
  const web = new WebClient(service.url);
  const email = `hooks${++n}-${Date.now()}@example.com`;
  const res = await signUp(web, { email, password: PASSWORD });
  if (res.status !== 303) throw new Error(`sign-up failed: ${res.status}`);
  return { web, user: (await findUserByEmail(service.deps.db, email))! };
}

interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A real HTTP receiver on loopback that records every request; `respond` answers the nth (from 0). */
async function receiver(
  t: ExecutionContext,
  respond: (n: number, res: ServerResponse) => void = (_n, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'),
) {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      respond(received.length - 1, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received };
}

/** Check `X-Signature: t=…,v1=…` with node:crypto alone: HMAC-SHA256(secret, `${t}.${rawBody}`). */
function signatureValid(secret: string, header: string | string[] | undefined, rawBody: string): boolean {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(header));
  if (!m) return false;
  const expected = createHmac('sha256', secret).update(`${m[1]}.${rawBody}`).digest();
  return timingSafeEqual(expected, Buffer.from(m[2]!, 'hex'));
}

/** An application of `owner` with these endpoints and secret (straight in the database). */
async function hookedApp(owner: User, webhook_endpoints: string[], webhook_secret: string | null = 'tds_whs_test-secret-0123456789') {
  const app = await createTestApplication(service, owner, { name: 'Hooked app' });
  return updateApplication(service.deps.db, app.id, { webhook_endpoints, webhook_secret });
}

interface LogRow {
  id: string;
  status: string;
  attempts: number;
  code: string;
  cells: string;
}

/** The delivery log's rows on the edit page, newest first. */
function logRows(page: string): LogRow[] {
  const rows: LogRow[] = [];
  const re = /<tr data-delivery-id="([^"]+)" data-status="(\w+)" data-attempts="(\d+)" data-status-code="(\d*)">([\s\S]*?)<\/tr>/g;
  for (const m of page.matchAll(re)) rows.push({ id: m[1]!, status: m[2]!, attempts: Number(m[3]), code: m[4]!, cells: m[5]! });
  return rows;
}

const editPage = async (web: WebClient, id: string) => {
  const res = await web.get(`/settings/applications/${id}`);
  if (res.status !== 200) throw new Error(`edit page: ${res.status}`);
  return res.text();
};

/** Reload the edit page until its newest delivery has this status (and, optionally, attempt count). */
function pollLog(web: WebClient, id: string, status: string, attempts?: number) {
  return poll(`a ${status} delivery`, async () => {
    const page = await editPage(web, id);
    const row = logRows(page)[0];
    return row && row.status === status && (attempts === undefined || row.attempts === attempts) ? { page, row } : undefined;
  });
}

const countEvents = async (appId: string) => {
  const events = await service.deps.db.selectFrom('events').select('id').where('resource_id', '=', appId).execute();
  const deliveries = await service.deps.db.selectFrom('webhook_deliveries').select('id').where('application_id', '=', appId).execute();
  return { events: events.length, deliveries: deliveries.length };
};

/** The delivery's job once it has finished for good: after this no attempt of it can come. */
const deliveryFinished = (deliveryId: string) => finishedJob(service.deps.queues.webhooks, deliveryJobId(deliveryId));

/**
 * Check that a receiver is reachable and that only what is sent from now on reaches it: send a
 * test event of `app` and wait until its delivery is over; the receiver then has exactly that
 * one request, for the event this created.
 */
async function sendsExactlyOneFromNow(t: ExecutionContext, web: WebClient, appId: string, hook: { received: Received[] }) {
  t.is((await web.postForm(`/settings/applications/${appId}/webhooks/test`, {})).status, 303);
  const { row } = await pollLog(web, appId, 'delivered');
  t.is((await deliveryFinished(row.id)).state, 'completed');
  const event = await service.deps.db
    .selectFrom('webhook_deliveries')
    .select('event_id')
    .where('id', '=', row.id)
    .executeTakeFirstOrThrow();
  t.deepEqual(
    hook.received.map((r) => r.headers['x-event-id']),
    [event.event_id],
    'the one request is the delivery just made',
  );
  t.deepEqual(await countEvents(appId), { events: 1, deliveries: 1 });
}

test('a new application shows an empty delivery log, how deliveries work, and the test button', async (t) => {
  const { web, user } = await signedIn();
  const app = await hookedApp(user, []);
  const page = await editPage(web, app.id);
  t.regex(page, /<h2 id="webhook-deliveries">Webhook deliveries<\/h2>/);
  t.regex(
    page,
    /<p id="no-deliveries">No deliveries yet\. Events are sent to your endpoints when a user who authorized this application changes their data\.<\/p>/,
  );
  t.regex(page, /signed with the current webhook secret \(<code>X-Signature: t=…,v1=…<\/code>/);
  t.regex(page, /exponential backoff until the wait would exceed 200 ms/, 'the configured cap');
  t.regex(page, /first 512 bytes of a response/);
  t.regex(page, new RegExp(`<form method="post" action="/settings/applications/${app.id}/webhooks/test#webhook-deliveries"`));
  t.regex(page, /<button type="submit" id="send-test-event">Send test event<\/button>/);
  t.regex(page, /Generate a new webhook secret/, 'rotation stays in the settings form');
  t.false(page.includes('id="deliveries"'));
});

test('"Send test event" delivers a signed test event, and the log shows it delivered', async (t) => {
  const hook = await receiver(t, (_n, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('thanks <b>&</b> "bye"'));
  const { web, user } = await signedIn();
  const secret = 'tds_whs_delivered-secret-abcdefghijkl';
  const app = await hookedApp(user, [hook.url], secret);

  const res = await web.postForm(`/settings/applications/${app.id}/webhooks/test`, {});
  t.is(res.status, 303);
  t.is(res.headers.get('location'), `/settings/applications/${app.id}?test_sent=1#webhook-deliveries`);
  const after = await (await web.get(`/settings/applications/${app.id}?test_sent=1`)).text();
  t.regex(after, /<p class="notice" role="status" id="webhook-test-notice">Test event queued to 1 endpoint\.<\/p>/);

  const { page, row } = await pollLog(web, app.id, 'delivered');
  t.is(row.attempts, 1);
  t.is(row.code, '200');
  t.regex(row.cells, /<code class="status-code">200<\/code>/);
  t.regex(row.cells, /<td><code>test<\/code><\/td>/);
  t.regex(row.cells, new RegExp(`<td><code>${app.id}</code></td>`));
  t.regex(row.cells, new RegExp(`<td><code>${hook.url}</code></td>`));
  t.regex(row.cells, /<time datetime="[^"]+">\d{4}-\d\d-\d\d \d\d:\d\d UTC<\/time>/);
  t.regex(
    row.cells,
    /<details class="excerpt"><summary>thanks &lt;b&gt;&amp;&lt;\/b&gt; &quot;bye&quot;<\/summary><code>thanks &lt;b&gt;&amp;&lt;\/b&gt; &quot;bye&quot;<\/code><\/details>/,
    'the excerpt, escaped',
  );
  t.false(page.includes('<b>&</b>'));
  t.false(page.includes('id="no-deliveries"'));

  t.is(hook.received.length, 1);
  const [req] = hook.received;
  t.is(req!.method, 'POST');
  t.is(req!.path, '/hook');
  t.is(req!.headers['content-type'], 'application/json');
  t.is(req!.headers['x-event-type'], 'test');
  const body = JSON.parse(req!.body) as Record<string, unknown>;
  t.deepEqual(Object.keys(body).sort(), ['actor_id', 'event_type', 'resource_id', 'timestamp', 'user_id']);
  t.is(body.user_id, user.id);
  t.is(body.event_type, 'test');
  t.is(body.resource_id, app.id);
  t.true(typeof body.timestamp === 'string' && !Number.isNaN(Date.parse(body.timestamp)));
  t.true(signatureValid(secret, req!.headers['x-signature'], req!.body));
  t.false(signatureValid('tds_whs_some-other-secret', req!.headers['x-signature'], req!.body));
  t.false(signatureValid(secret, req!.headers['x-signature'], req!.body.replace('"test"', '"tset"')));

  const finished = await deliveryFinished(row.id);
  t.is(finished.state, 'completed', 'its job is over: no retry is scheduled');
  t.is(finished.job.attemptsMade, 1);
  t.is(hook.received.length, 1, 'delivered once, not retried');
});

test('a test event goes to every endpoint of the application', async (t) => {
  const a = await receiver(t);
  const b = await receiver(t);
  const { web, user } = await signedIn();
  const app = await hookedApp(user, [a.url, b.url]);
  const res = await web.postForm(`/settings/applications/${app.id}/webhooks/test`, {});
  t.is(res.headers.get('location'), `/settings/applications/${app.id}?test_sent=2#webhook-deliveries`);
  t.regex(await (await web.get(`/settings/applications/${app.id}?test_sent=2`)).text(), /Test event queued to 2 endpoints\./);
  const rows = await poll('two delivered', async () => {
    const r = logRows(await editPage(web, app.id));
    return r.length === 2 && r.every((x) => x.status === 'delivered') ? r : undefined;
  });
  t.is(rows.length, 2);
  t.is(a.received.length, 1);
  t.is(b.received.length, 1);
});

test('an endpoint answering 500 is retried with backoff, then logged as failed with its code and excerpt', async (t) => {
  const hook = await receiver(t, (_n, res) => res.writeHead(500, { 'content-type': 'text/plain' }).end('internal <error> here'));
  const { web, user } = await signedIn();
  const app = await hookedApp(user, [hook.url]);
  t.is((await web.postForm(`/settings/applications/${app.id}/webhooks/test`, {})).status, 303);

  const { row } = await pollLog(web, app.id, 'failed');
  t.is(row.attempts, 3, 'waits of 100 and 200 ms: three attempts');
  t.is(row.code, '500');
  t.regex(row.cells, /<code class="status-code">500<\/code>/);
  t.notRegex(row.cells, /HTTP 500/, 'no error text repeating the code');
  t.regex(row.cells, /<details class="excerpt"><summary>internal &lt;error&gt; here<\/summary>/);
  t.regex(row.cells, /<td class="delivery-status">failed<\/td>/);
  const finished = await deliveryFinished(row.id);
  t.is(finished.state, 'failed', 'failed for good: no retry is scheduled');
  t.is(finished.job.attemptsMade, 3);
  t.is(hook.received.length, 3, 'no attempt after the last');
});

test('an endpoint that cannot be reached is logged with the error instead of a status code', async (t) => {
  const port = await freePort();
  const { web, user } = await signedIn();
  const app = await hookedApp(user, [`http://127.0.0.1:${port}/nobody`]);
  t.is((await web.postForm(`/settings/applications/${app.id}/webhooks/test`, {})).status, 303);
  const { row } = await pollLog(web, app.id, 'failed');
  t.is(row.attempts, 3);
  t.is(row.code, '');
  t.regex(row.cells, /<span class="error delivery-error">[^<]*ECONNREFUSED[^<]*<\/span>/);
});

test('no endpoints or no webhook secret: an error notice, and nothing is created', async (t) => {
  const { web, user } = await signedIn();
  const bare = await hookedApp(user, [], 'tds_whs_secret-but-no-endpoints-xx');
  const noEndpoints = await web.postForm(`/settings/applications/${bare.id}/webhooks/test`, {});
  t.is(noEndpoints.status, 409);
  t.regex(await noEndpoints.text(), /<p class="error" role="alert" id="webhook-test-error">Add a webhook endpoint first/);
  t.deepEqual(await countEvents(bare.id), { events: 0, deliveries: 0 });

  const hook = await receiver(t);
  const unsigned = await hookedApp(user, [hook.url], null);
  const noSecret = await web.postForm(`/settings/applications/${unsigned.id}/webhooks/test`, {});
  t.is(noSecret.status, 409);
  const body = await noSecret.text();
  t.regex(body, /<p class="error" role="alert" id="webhook-test-error">Generate a webhook secret first/);
  t.regex(body, /No deliveries yet\./);
  // Nothing to deliver exists (a delivery is a row, made with its event), and nothing was sent.
  t.deepEqual(await countEvents(unsigned.id), { events: 0, deliveries: 0 });
  t.is(hook.received.length, 0);

  // The receiver was reachable all along: with a secret, the same button sends one request, that one.
  await updateApplication(service.deps.db, unsigned.id, { webhook_secret: 'tds_whs_now-with-a-secret-0123456' });
  await sendsExactlyOneFromNow(t, web, unsigned.id, hook);
});

test('a cross-origin post is refused with 403; another user’s application is a 404; signed out goes to sign-in; nothing is sent', async (t) => {
  const hook = await receiver(t);
  const owner = await signedIn();
  const app = await hookedApp(owner.user, [hook.url]);
  const path = `/settings/applications/${app.id}/webhooks/test`;

  t.is((await owner.web.postForm(path, {}, { origin: 'https://evil.example' })).status, 403);
  t.is((await owner.web.postForm(path, {}, { origin: null })).status, 403, 'no Origin and no Referer');

  const intruder = await signedIn();
  t.is((await intruder.web.postForm(path, {})).status, 404);
  t.is((await intruder.web.get(`/settings/applications/${app.id}`)).status, 404);
  t.is((await intruder.web.postForm('/settings/applications/no-such-app/webhooks/test', {})).status, 404);

  const anon = await new WebClient(service.url).postForm(path, {});
  t.is(anon.status, 303);
  t.is(anon.headers.get('location'), `/signin?next=${encodeURIComponent(`/settings/applications/${app.id}`)}`);

  // Nothing to deliver exists (a delivery is a row, made with its event), and nothing was sent.
  t.deepEqual(await countEvents(app.id), { events: 0, deliveries: 0 });
  t.is(hook.received.length, 0);

  // The receiver was reachable all along: the owner's own post sends one request, that one.
  await sendsExactlyOneFromNow(t, owner.web, app.id, hook);
});

test('after rotating the secret in the edit form, test events are signed with the new secret only', async (t) => {
  const hook = await receiver(t);
  const { web } = await signedIn();
  const created = await web.postForm('/settings/applications', { name: 'Rotating app' });
  t.is(created.status, 303);
  const id = /^\/settings\/applications\/([A-Za-z0-9_-]+)\?created=1$/.exec(created.headers.get('location')!)![1]!;
  const base = {
    name: 'Rotating app',
    description: '',
    url: '',
    image: '',
    privacy_statement: '',
    redirect_uris: '',
    page_slug: '',
    webhook_endpoints: hook.url,
  };

  const secretOf = async (res: Response) => {
    t.is(res.status, 200);
    const m = /<code id="new-webhook-secret" class="token">([^<]+)<\/code>/.exec(await res.text());
    return m![1]!;
  };
  const first = await secretOf(await web.postForm(`/settings/applications/${id}`, { ...base, new_webhook_secret: 'on' }));
  t.is((await web.postForm(`/settings/applications/${id}/webhooks/test`, {})).status, 303);
  await poll('the first delivery', async () => hook.received.length === 1);
  t.true(signatureValid(first, hook.received[0]!.headers['x-signature'], hook.received[0]!.body));

  const second = await secretOf(await web.postForm(`/settings/applications/${id}`, { ...base, new_webhook_secret: 'on' }));
  t.not(second, first);
  t.is((await web.postForm(`/settings/applications/${id}/webhooks/test`, {})).status, 303);
  await poll('the second delivery', async () => hook.received.length === 2);
  const latest = hook.received[1]!;
  t.true(signatureValid(second, latest.headers['x-signature'], latest.body), 'signed with the new secret');
  t.false(signatureValid(first, latest.headers['x-signature'], latest.body), 'not with the old one');

  const rows = await poll('both delivered', async () => {
    const r = logRows(await editPage(web, id));
    return r.length === 2 && r.every((x) => x.status === 'delivered') ? r : undefined;
  });
  t.deepEqual(
    rows.map((r) => r.code),
    ['200', '200'],
  );
});

test('the log lists the latest 50 deliveries, newest first', async (t) => {
  const { web, user } = await signedIn();
  const app = await hookedApp(user, ['https://hooks.example/never-queued']);
  const start = Date.now() - 3_600_000;
  const ids: string[] = [];
  // Created without queueing: they stay pending.
  for (let i = 0; i < 53; i++) ids.push(...(await createTestEvent(service.deps.db, app, new Date(start + i * 1000))));
  const rows = logRows(await editPage(web, app.id));
  t.is(rows.length, 50);
  t.deepEqual(
    rows.map((r) => r.id),
    ids.slice(-50).reverse(),
  );
  t.true(rows.every((r) => r.status === 'pending' && r.attempts === 0 && r.code === ''));
});
