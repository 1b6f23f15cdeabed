import test, { type ExecutionContext } from 'ava';
import http from 'node:http';
import { createApp, apiRoutes } from '../api/app.ts';
import { defineRoute } from '../api/http/route.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestUser, tokenFor } from './helpers/users.ts';
import { signedIn } from './helpers/oauth.ts';

/** A page of another origin, as a browser names it in `Origin`. */
const SPA = 'http://127.0.0.1:5173';

let service: TestService;
let probe: { url: string; server: http.Server };

// A route that fails with an unexpected error, and a rate limit of 1 request per minute: served by a
// second app on the same dependencies (the rate limiter is per Deps object, so it starts afresh).
const boom = defineRoute(
  { method: 'get', path: '/api/v1/test-boom', operationId: 'boom', summary: 'boom', tags: ['operations'], auth: 'none', responses: {} },
  () => {
    throw new Error('internal detail');
  },
);

test.before(async () => {
  service = await startTestService();
  const deps = { ...service.deps, config: { ...service.deps.config, API_RATE_LIMIT: 1 } };
  const server = http.createServer(createApp(deps, [...apiRoutes, boom]).callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  probe = { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}` };
});
test.after.always(async () => {
  probe?.server.close();
  await service?.close();
});

function preflight(url: string, method: string, headers = 'authorization') {
  return fetch(url, {
    method: 'OPTIONS',
    headers: { origin: SPA, 'access-control-request-method': method, 'access-control-request-headers': headers },
  });
}

function listOf(header: string | null): string[] {
  return (header ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
}

/** What a browser needs to let a page of another origin read the answer, and never credentials. */
function assertCors(t: ExecutionContext, res: Response, what: string) {
  t.is(res.headers.get('access-control-allow-origin'), '*', `${what}: Access-Control-Allow-Origin`);
  t.is(res.headers.get('access-control-allow-credentials'), null, `${what}: no Access-Control-Allow-Credentials`);
  t.true(listOf(res.headers.get('vary')).includes('origin'), `${what}: Vary: Origin`);
}

function assertNoCors(t: ExecutionContext, res: Response, what: string) {
  for (const name of [
    'access-control-allow-origin',
    'access-control-allow-credentials',
    'access-control-allow-methods',
    'access-control-expose-headers',
  ]) {
    t.is(res.headers.get(name), null, `${what}: no ${name}`);
  }
}

test('a preflight on a token-protected API path answers 204 without a token: any origin, the methods, the request headers, a max-age', async (t) => {
  for (const path of [
    '/api/v1/activities/',
    '/api/v1/activities/upload',
    '/api/v1/traces/x',
    '/api/v1/applications',
    '/api/v1/not-a-route',
  ]) {
    const res = await preflight(service.url + path, path.endsWith('upload') ? 'POST' : 'GET', 'authorization, content-type, if-none-match');
    t.is(res.status, 204, path);
    assertCors(t, res, path);
    t.deepEqual(listOf(res.headers.get('access-control-allow-methods')), ['get', 'head', 'post', 'put', 'delete'], path);
    const allowed = listOf(res.headers.get('access-control-allow-headers'));
    for (const h of ['authorization', 'content-type', 'if-none-match', 'accept', 'x-request-id'])
      t.true(allowed.includes(h), `${path} allows ${h}`);
    t.is(res.headers.get('access-control-max-age'), '7200', path);
    t.truthy(res.headers.get('x-request-id'));
    t.is(await res.text(), '');
  }
});

test('the token, revocation and userinfo endpoints, their /oauth aliases, discovery, JWKS and the OpenAPI document answer preflights', async (t) => {
  const cases: [string, string][] = [
    ['/api/v1/oauth/token', 'POST'],
    ['/oauth/token', 'POST'],
    ['/api/v1/oauth/revoke', 'POST'],
    ['/oauth/revoke', 'POST'],
    ['/api/v1/oauth/userinfo', 'GET'],
    ['/.well-known/openid-configuration', 'GET'],
    ['/.well-known/oauth-authorization-server', 'GET'],
    ['/.well-known/jwks.json', 'GET'],
    ['/api/v1/.well-known/openid-configuration', 'GET'],
    ['/openapi.json', 'GET'],
  ];
  for (const [path, method] of cases) {
    const res = await preflight(service.url + path, method, 'content-type');
    t.is(res.status, 204, path);
    assertCors(t, res, path);
    t.true(listOf(res.headers.get('access-control-allow-methods')).includes(method.toLowerCase()), path);
  }
});

test('discovery and JWKS answer a GET from another origin, with the headers a client reads exposed', async (t) => {
  for (const path of ['/.well-known/openid-configuration', '/.well-known/jwks.json', '/openapi.json']) {
    const res = await fetch(service.url + path, { headers: { origin: SPA } });
    t.is(res.status, 200, path);
    assertCors(t, res, path);
    await res.body?.cancel();
  }
  const discovery = (await (await fetch(`${service.url}/.well-known/openid-configuration`, { headers: { origin: SPA } })).json()) as {
    token_endpoint: string;
  };
  t.is(discovery.token_endpoint, `${service.url}/api/v1/oauth/token`);
});

test('an API read from another origin carries Access-Control-Allow-Origin and exposes refreshed-token, ETag, Link, RateLimit-*, Retry-After, …', async (t) => {
  const user = await createTestUser(service);
  const token = await tokenFor(service, user, ['data:read']);
  const res = await fetch(`${service.url}/api/v1/activities/`, { headers: { origin: SPA, authorization: `Bearer ${token}` } });
  t.is(res.status, 200);
  t.deepEqual(await res.json(), []);
  assertCors(t, res, 'list');
  const exposed = listOf(res.headers.get('access-control-expose-headers'));
  for (const h of [
    'refreshed-token',
    'etag',
    'link',
    'location',
    'retry-after',
    'ratelimit-policy',
    'ratelimit-limit',
    'ratelimit-remaining',
    'ratelimit-reset',
    'content-disposition',
    'www-authenticate',
    'deprecation',
    'x-request-id',
  ]) {
    t.true(exposed.includes(h), `exposes ${h}`);
  }
  t.truthy(res.headers.get('ratelimit-remaining'), 'the exposed RateLimit headers are there to read');
});

test('error answers of the API keep the CORS headers, so the browser app can read them: 401, 403, 404, 422, 429, 500, and OAuth errors', async (t) => {
  const user = await createTestUser(service);
  const profileOnly = await tokenFor(service, user, ['profile']);
  const get = (url: string, token?: string) =>
    fetch(url, { headers: { origin: SPA, ...(token ? { authorization: `Bearer ${token}` } : {}) } });

  const noToken = await get(`${service.url}/api/v1/activities/`);
  t.is(noToken.status, 401);
  t.regex(noToken.headers.get('www-authenticate')!, /^Bearer/);
  t.like(await noToken.json(), { detail: 'Not authenticated' });
  assertCors(t, noToken, '401');

  const badToken = await get(`${service.url}/api/v1/activities/`, 'not.a.jwt');
  t.is(badToken.status, 401);
  assertCors(t, badToken, '401 bad token');

  const scope = await get(`${service.url}/api/v1/activities/`, profileOnly);
  t.is(scope.status, 403);
  t.regex(scope.headers.get('www-authenticate')!, /insufficient_scope/);
  assertCors(t, scope, '403');

  const missing = await get(`${service.url}/api/v1/nothing-here`);
  t.is(missing.status, 404);
  assertCors(t, missing, '404');

  const invalid = await get(`${service.url}/api/v1/activities/?limit=5000`, await tokenFor(service, user, ['data:read']));
  t.is(invalid.status, 422);
  assertCors(t, invalid, '422');

  const grant = await fetch(`${service.url}/api/v1/oauth/token`, {
    method: 'POST',
    headers: { origin: SPA, 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=authorization_code&code=nope&client_id=nope&code_verifier=x',
  });
  t.true(grant.status === 400 || grant.status === 401, `OAuth error ${grant.status}`);
  t.truthy(((await grant.json()) as { error?: string }).error);
  assertCors(t, grant, 'OAuth error');

  const failing = await get(`${probe.url}/api/v1/test-boom`);
  t.is(failing.status, 500);
  t.deepEqual(await failing.json(), { detail: 'Internal Server Error' });
  assertCors(t, failing, '500');

  const limited = await tokenFor(service, user, ['data:read']);
  t.is((await get(`${probe.url}/api/v1/activities/`, limited)).status, 200);
  const tooMany = await get(`${probe.url}/api/v1/activities/`, limited);
  t.is(tooMany.status, 429);
  t.truthy(tooMany.headers.get('retry-after'));
  assertCors(t, tooMany, '429');
  t.true(listOf(tooMany.headers.get('access-control-expose-headers')).includes('retry-after'));
  // A preflight is not counted: it carries no credential and is answered before the limiter.
  t.is((await preflight(`${probe.url}/api/v1/activities/`, 'GET')).status, 204);
});

test('web pages and forms stay same-origin: no CORS headers, not even on a preflight', async (t) => {
  const user = await createTestUser(service);
  const web = await signedIn(service, user);
  for (const path of [
    '/',
    '/signin',
    '/signup',
    '/settings',
    '/settings/applications',
    '/activities',
    '/data',
    '/docs',
    '/apps',
    '/oauth/authorize?client_id=x',
  ]) {
    const res = await fetch(service.url + path, { headers: { origin: SPA, cookie: web.cookieHeader }, redirect: 'manual' });
    t.true(res.status < 500, `${path} ${res.status}`);
    assertNoCors(t, res, path);
    await res.body?.cancel();
  }
  for (const [path, method] of [
    ['/signin', 'POST'],
    ['/settings/profile', 'POST'],
    ['/oauth/authorize/decision', 'POST'],
    ['/oauth/authorize', 'GET'],
  ] as const) {
    const res = await preflight(service.url + path, method, 'content-type');
    t.not(res.status, 204, path);
    assertNoCors(t, res, `preflight ${path}`);
  }
  // A cross-origin form post with the cookie is still refused by the Origin check, with no CORS headers.
  const post = await web.postForm('/settings/profile', { first_name: 'Eve', last_name: 'X' }, { origin: SPA });
  t.is(post.status, 403);
  assertNoCors(t, post, 'POST /settings/profile');
});

test('the session cookie gives another origin nothing it can read: no Allow-Credentials, and writes are refused', async (t) => {
  const user = await createTestUser(service);
  const web = await signedIn(service, user);
  // A browser sends the cookie with credentials: 'include' (SameSite=Lax lets it through between two
  // ports of one host): the answer says `*` and no Allow-Credentials, so the browser withholds it.
  const read = await fetch(`${service.url}/api/v1/oauth/userinfo`, { headers: { origin: SPA, cookie: web.cookieHeader } });
  t.is(read.headers.get('access-control-allow-origin'), '*');
  t.is(read.headers.get('access-control-allow-credentials'), null);
  await read.body?.cancel();
  const write = await fetch(`${service.url}/api/v1/applications`, {
    method: 'POST',
    headers: { origin: SPA, cookie: web.cookieHeader, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Cross-origin' }),
  });
  t.is(write.status, 403);
  t.is(write.headers.get('access-control-allow-credentials'), null);
  t.deepEqual(await (await fetch(`${service.url}/api/v1/applications`, { headers: { cookie: web.cookieHeader } })).json(), []);
});

test('a request without Origin (curl, scripts) gets no CORS headers, only Vary: Origin', async (t) => {
  const res = await fetch(`${service.url}/.well-known/jwks.json`);
  t.is(res.status, 200);
  t.is(res.headers.get('access-control-allow-origin'), null);
  t.true(listOf(res.headers.get('vary')).includes('origin'));
  await res.body?.cancel();
});

test('the OpenAPI document describes CORS', async (t) => {
  const doc = (await (await fetch(`${service.url}/openapi.json`)).json()) as { info: { description: string } };
  t.regex(doc.info.description, /CORS/);
  t.regex(doc.info.description, /Access-Control-Allow-Credentials/);
});
