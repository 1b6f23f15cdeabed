import test from 'ava';
import http from 'node:http';
import { z } from 'zod';
import { createApp, apiRoutes } from '../api/app.ts';
import { defineRoute } from '../api/http/route.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestUser, tokenFor } from './helpers/users.ts';

let service: TestService;
let probe: { url: string; server: http.Server };

// Routes defined like product routes, to drive the shared validation and error mapping.
const echo = defineRoute(
  {
    method: 'post',
    path: '/api/v1/test-echo/{item_id}',
    operationId: 'echo',
    summary: 'echo',
    tags: ['operations'],
    auth: { scopes: ['data:write'] },
    params: z.object({ item_id: z.string().regex(/^\d+$/) }),
    query: z.object({ limit: z.coerce.number().int().max(1000).default(50) }),
    body: z.object({ name: z.string().min(1).max(5), tags: z.array(z.string()).optional() }),
    responses: { 200: { description: 'the input' } },
  },
  (ctx, input) => {
    ctx.body = input;
  },
);
const boom = defineRoute(
  { method: 'get', path: '/api/v1/test-boom', operationId: 'boom', summary: 'boom', tags: ['operations'], auth: 'none', responses: {} },
  () => {
    throw new Error('secret internal detail at /srv/db');
  },
);

test.before(async () => {
  service = await startTestService();
  const app = createApp(service.deps, [...apiRoutes, echo, boom]);
  const server = http.createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  probe = { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}` };
});
test.after.always(async () => {
  probe?.server.close();
  await service?.close();
});

async function writeToken() {
  return tokenFor(service, await createTestUser(service), ['data:write']);
}

test('unknown routes are 404 with a JSON detail and a request id', async (t) => {
  const res = await fetch(`${service.url}/api/v1/nothing-here`);
  t.is(res.status, 404);
  t.regex(res.headers.get('content-type')!, /application\/json/);
  t.deepEqual(await res.json(), { detail: 'Not Found' });
  t.regex(res.headers.get('x-request-id')!, /^[0-9a-f-]{36}$/);
});

test('a safe x-request-id is echoed; an unsafe one is replaced', async (t) => {
  const mine = await fetch(`${service.url}/healthz`, { headers: { 'x-request-id': 'trace-abc.123' } });
  t.is(mine.headers.get('x-request-id'), 'trace-abc.123');
  const bad = await fetch(`${service.url}/healthz`, { headers: { 'x-request-id': 'x'.repeat(300) } });
  t.regex(bad.headers.get('x-request-id')!, /^[0-9a-f-]{36}$/);
});

test('zod failures become 422 with loc, msg and type for each field', async (t) => {
  const token = await writeToken();
  const res = await fetch(`${probe.url}/api/v1/test-echo/abc?limit=5000`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'toolongname', tags: [1] }),
  });
  t.is(res.status, 422);
  const body = (await res.json()) as { detail: { loc: unknown[]; msg: string; type: string }[] };
  const byLoc = Object.fromEntries(body.detail.map((d) => [d.loc.join('.'), d]));
  t.is(byLoc['path.item_id']?.type, 'regex_format');
  t.is(byLoc['query.limit']?.type, 'less_than_equal');
  t.is(byLoc['body.name']?.type, 'string_too_long');
  t.is(byLoc['body.tags.0']?.type, 'string_type');
  for (const d of body.detail) t.is(typeof d.msg, 'string');
});

test('a missing body field is type "missing"', async (t) => {
  const res = await fetch(`${probe.url}/api/v1/test-echo/1`, {
    method: 'POST',
    headers: { authorization: `Bearer ${await writeToken()}`, 'content-type': 'application/json' },
    body: '{}',
  });
  t.is(res.status, 422);
  t.deepEqual(((await res.json()) as { detail: unknown[] }).detail, [
    { loc: ['body', 'name'], msg: 'Invalid input: expected string, received undefined', type: 'missing' },
  ]);
});

test('valid input reaches the handler, parsed and defaulted', async (t) => {
  const res = await fetch(`${probe.url}/api/v1/test-echo/42`, {
    method: 'POST',
    headers: { authorization: `Bearer ${await writeToken()}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'ok' }),
  });
  t.is(res.status, 200);
  t.deepEqual(await res.json(), { params: { item_id: '42' }, query: { limit: 50 }, body: { name: 'ok' } });
});

test('malformed JSON is 422 json_invalid', async (t) => {
  const res = await fetch(`${probe.url}/api/v1/test-echo/1`, {
    method: 'POST',
    headers: { authorization: `Bearer ${await writeToken()}`, 'content-type': 'application/json' },
    body: '{"name": ',
  });
  t.is(res.status, 422);
  t.deepEqual(await res.json(), { detail: [{ loc: ['body'], msg: 'The body is not valid JSON', type: 'json_invalid' }] });
});

test('a body over the limit is 413', async (t) => {
  const res = await fetch(`${probe.url}/api/v1/test-echo/1`, {
    method: 'POST',
    headers: { authorization: `Bearer ${await writeToken()}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) }),
  });
  t.is(res.status, 413);
  t.deepEqual(await res.json(), { detail: 'Request body too large' });
});

test('authentication is checked before validation', async (t) => {
  const res = await fetch(`${probe.url}/api/v1/test-echo/abc`, { method: 'POST', body: 'garbage' });
  t.is(res.status, 401);
});

test('an unexpected error is a bare 500: no message or stack leaks', async (t) => {
  const res = await fetch(`${probe.url}/api/v1/test-boom`);
  t.is(res.status, 500);
  const text = await res.text();
  t.deepEqual(JSON.parse(text), { detail: 'Internal Server Error' });
  t.notRegex(text, /secret|\/srv|at /);
  t.truthy(res.headers.get('x-request-id'));
});

test('a wrong method on a known path is 405 with Allow', async (t) => {
  const res = await fetch(`${service.url}/healthz`, { method: 'DELETE' });
  t.is(res.status, 405);
  t.regex(res.headers.get('allow')!, /GET/);
  t.deepEqual(await res.json(), { detail: 'Method Not Allowed' });
});

test('an unknown web page is an HTML 404 for browsers', async (t) => {
  const res = await fetch(`${service.url}/no-such-page`, { headers: { accept: 'text/html' } });
  t.is(res.status, 404);
  t.regex(res.headers.get('content-type')!, /text\/html/);
  t.regex(await res.text(), /Error 404/);
});
