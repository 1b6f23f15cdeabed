import test from 'ava';
import http from 'node:http';
import { createApp, apiRoutes } from '../api/app.ts';
import { defineRoute } from '../api/http/route.ts';
import type { Ctx } from '../api/http/context.ts';
import { mintAccessToken } from '../api/services/auth/tokens.ts';
import { deleteApplication } from '../db/applications.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestApplication, createTestUser, tokenFor } from './helpers/users.ts';
import { signedIn } from './helpers/oauth.ts';

let service: TestService;
let probe: { url: string; server: http.Server };

const whoAmI = (ctx: Ctx) => {
  const p = ctx.state.principal!;
  ctx.body = { userId: p.userId, clientId: p.clientId ?? null, via: p.via };
};
const probes = [
  defineRoute(
    {
      method: 'get',
      path: '/api/v1/probe/read',
      operationId: 'probe_read',
      summary: 'read',
      tags: ['operations'],
      auth: { scopes: ['data:read'] },
      responses: {},
    },
    whoAmI,
  ),
  defineRoute(
    {
      method: 'post',
      path: '/api/v1/probe/write',
      operationId: 'probe_write',
      summary: 'write',
      tags: ['operations'],
      auth: { scopes: ['data:write'] },
      responses: {},
    },
    whoAmI,
  ),
  defineRoute(
    {
      method: 'put',
      path: '/api/v1/probe/app-only',
      operationId: 'probe_app',
      summary: 'app',
      tags: ['operations'],
      auth: { scopes: ['data:write'], appOnly: true },
      responses: {},
    },
    whoAmI,
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v1/probe/first-party',
      operationId: 'probe_first',
      summary: 'first',
      tags: ['operations'],
      auth: { scopes: [], firstParty: true },
      responses: {},
    },
    whoAmI,
  ),
];

test.before(async () => {
  service = await startTestService();
  const server = http.createServer(createApp(service.deps, [...apiRoutes, ...probes]).callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  probe = { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}` };
});
test.after.always(async () => {
  probe?.server.close();
  await service?.close();
});

async function call(method: string, path: string, headers: Record<string, string> = {}) {
  const res = await fetch(probe.url + path, { method, headers });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

test('the user and the client are on the request context', async (t) => {
  const user = await createTestUser(service);
  const app = await createTestApplication(service, user);
  const appToken = await tokenFor(service, user, ['data:write'], app.id);
  t.deepEqual((await call('PUT', '/api/v1/probe/app-only', bearer(appToken))).body, { userId: user.id, clientId: app.id, via: 'bearer' });
  const personal = await tokenFor(service, user, ['data:read']);
  t.deepEqual((await call('GET', '/api/v1/probe/read', bearer(personal))).body, { userId: user.id, clientId: null, via: 'bearer' });
});

test('app-only endpoints refuse first-party credentials; first-party endpoints refuse app tokens', async (t) => {
  const user = await createTestUser(service);
  const app = await createTestApplication(service, user);
  const appToken = await tokenFor(service, user, ['data:read', 'data:write'], app.id);
  const personal = await tokenFor(service, user, ['data:read', 'data:write']);
  const web = await signedIn(service, user);
  const cookie = { cookie: web.cookieHeader, origin: service.url };

  t.is((await call('PUT', '/api/v1/probe/app-only', bearer(appToken))).status, 200);
  const refusedPersonal = await call('PUT', '/api/v1/probe/app-only', bearer(personal));
  t.is(refusedPersonal.status, 403);
  t.regex(refusedPersonal.body.detail, /application token/);
  t.is((await call('PUT', '/api/v1/probe/app-only', cookie)).status, 403);

  t.is((await call('GET', '/api/v1/probe/first-party', bearer(personal))).status, 200);
  t.is((await call('GET', '/api/v1/probe/first-party', { cookie: web.cookieHeader })).body.via, 'cookie');
  t.is((await call('GET', '/api/v1/probe/first-party', bearer(appToken))).status, 403);
});

test('scopes: data:write alone writes but does not read; 403 names the missing scope', async (t) => {
  const user = await createTestUser(service);
  const writer = await tokenFor(service, user, ['data:write']);
  t.is((await call('POST', '/api/v1/probe/write', bearer(writer))).status, 200);
  const read = await call('GET', '/api/v1/probe/read', bearer(writer));
  t.is(read.status, 403);
  t.is(read.headers.get('www-authenticate'), 'Bearer error="insufficient_scope", scope="data:read"');
  const reader = await tokenFor(service, user, ['data:read']);
  t.is((await call('POST', '/api/v1/probe/write', bearer(reader))).status, 403);
});

test('401 with WWW-Authenticate for a missing, expired, revoked or unbound token', async (t) => {
  const user = await createTestUser(service);
  const app = await createTestApplication(service, user);
  const missing = await call('GET', '/api/v1/probe/read');
  t.is(missing.status, 401);
  t.regex(missing.headers.get('www-authenticate')!, /^Bearer error="invalid_token"/);

  // A correctly signed token bound to neither a session nor a grant is refused.
  const { token: unbound } = await mintAccessToken(service.deps.tokens, { sub: user.id, scopes: ['data:read'] });
  t.is((await call('GET', '/api/v1/probe/read', bearer(unbound))).status, 401);

  // A grant's tokens stop when the application is deleted.
  const appToken = await tokenFor(service, user, ['data:read'], app.id);
  t.is((await call('GET', '/api/v1/probe/read', bearer(appToken))).status, 200);
  await deleteApplication(service.deps.db, app.id);
  const revoked = await call('GET', '/api/v1/probe/read', bearer(appToken));
  t.is(revoked.status, 401);
  t.regex(revoked.headers.get('www-authenticate')!, /invalid_token/);
});

test.serial('an expired application token is 401', async (t) => {
  const user = await createTestUser(service);
  const app = await createTestApplication(service, user);
  const appToken = await tokenFor(service, user, ['data:read'], app.id);
  service.clock.advance(15 * 60_000 + 1000);
  try {
    const res = await call('GET', '/api/v1/probe/read', bearer(appToken));
    t.is(res.status, 401);
    t.regex(res.body.detail, /expired/);
  } finally {
    service.clock.advance(-(15 * 60_000 + 1000));
  }
});
