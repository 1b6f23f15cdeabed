import test from 'ava';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestApplication, createTestUser, tokenFor } from './helpers/users.ts';
import { signedIn } from './helpers/oauth.ts';
import { sha256 } from '../lib/secrets.ts';
import type { User } from '../db/database.ts';

let service: TestService;
test.before(async () => {
  service = await startTestService();
});
test.after.always(() => service?.close());

async function call(method: string, path: string, token: string | undefined, body?: unknown) {
  const res = await fetch(service.url + path, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

async function owner(): Promise<{ user: User; token: string }> {
  const user = await createTestUser(service);
  return { user, token: await tokenFor(service, user, ['data:read']) };
}

test('POST creates a private, unpublished application: 201 with every field, the secret once and hashed', async (t) => {
  const { user, token } = await owner();
  const res = await call('POST', '/api/v1/applications', token, {
    name: 'My tool',
    description: 'Reads my rides',
    redirect_uris: ['https://tool.example/cb'],
    generate_secret: true,
  });
  t.is(res.status, 201);
  const app = res.body;
  t.deepEqual(Object.keys(app).sort(), [
    'client_secret',
    'description',
    'id',
    'image',
    'is_clientside_app',
    'is_private',
    'name',
    'page',
    'privacy_statement',
    'published',
    'redirect_uris',
    'url',
    'webhook_endpoints',
  ]);
  t.like(app, {
    name: 'My tool',
    description: 'Reads my rides',
    image: null,
    url: null,
    privacy_statement: null,
    published: false,
    is_private: true,
    is_clientside_app: false,
    page: null,
    webhook_endpoints: [],
  });
  t.deepEqual(app.redirect_uris, ['https://tool.example/cb']);
  t.regex(app.client_secret, /^tds_cs_[A-Za-z0-9_-]{43}$/);
  const stored = await service.deps.db.selectFrom('client_secrets').selectAll().where('application_id', '=', app.id).execute();
  t.is(stored.length, 1);
  t.is(stored[0]!.secret_hash, sha256(app.client_secret));
  const row = await service.deps.db.selectFrom('applications').selectAll().where('id', '=', app.id).executeTakeFirstOrThrow();
  t.is(row.owner_id, user.id);
  t.false(JSON.stringify(row).includes(app.client_secret));
  // Without generate_secret there is none.
  const plain = await call('POST', '/api/v1/applications', token, { name: 'Other' });
  t.is(plain.body.client_secret, null);
});

test('with no redirect URIs, loopback is registered; a page adds its URL', async (t) => {
  const { token } = await owner();
  const none = await call('POST', '/api/v1/applications', token, { name: 'Local' });
  t.deepEqual(none.body.redirect_uris, ['http://localhost', 'http://127.0.0.1']);
  const nullUris = await call('POST', '/api/v1/applications', token, { name: 'Local', redirect_uris: null });
  t.deepEqual(nullUris.body.redirect_uris, ['http://localhost', 'http://127.0.0.1']);
  const slug = `tool-${Date.now()}`;
  const paged = await call('POST', '/api/v1/applications', token, { name: 'Paged', page: slug, redirect_uris: ['com.example.tool:/cb'] });
  t.is(paged.status, 201);
  t.deepEqual(paged.body.redirect_uris, ['com.example.tool:/cb', `${service.url}/pages/${slug}/`]);
  t.deepEqual(paged.body.page, {
    slug,
    published: false,
    application: { id: paged.body.id, name: 'Paged', is_private: true },
    url: `${service.url}/pages/${slug}/`,
  });
  // The slug is taken now.
  t.is((await call('POST', '/api/v1/applications', token, { name: 'Again', page: slug })).status, 409);
});

test('POST validation: name and description lengths, each redirect URI rule, slug rules (422 naming the field)', async (t) => {
  const { token } = await owner();
  const bad: [unknown, (string | number)[]][] = [
    [{}, ['body', 'name']],
    [{ name: '' }, ['body', 'name']],
    [{ name: 'x'.repeat(101) }, ['body', 'name']],
    [{ name: 'ok', description: 'x'.repeat(501) }, ['body', 'description']],
    [{ name: 'ok', redirect_uris: ['http://public.example/cb'] }, ['body', 'redirect_uris', 0]],
    [{ name: 'ok', redirect_uris: ['https://ok.example/cb', 'https://x.example/cb#frag'] }, ['body', 'redirect_uris', 1]],
    [{ name: 'ok', redirect_uris: [''] }, ['body', 'redirect_uris', 0]],
    [{ name: 'ok', redirect_uris: ['not a uri'] }, ['body', 'redirect_uris', 0]],
    [{ name: 'ok', redirect_uris: ['javascript:alert(1)'] }, ['body', 'redirect_uris', 0]],
    [{ name: 'ok', redirect_uris: ['https://user:pw@x.example/cb'] }, ['body', 'redirect_uris', 0]],
    [{ name: 'ok', redirect_uris: ['https://ok.example/cb', 'https://x.example/cb?state=1'] }, ['body', 'redirect_uris', 1]],
    [{ name: 'ok', redirect_uris: ['https://x.example/cb?code=1'] }, ['body', 'redirect_uris', 0]],
    [{ name: 'ok', redirect_uris: ['https://x.example/cb/..;/x'] }, ['body', 'redirect_uris', 0]],
    [{ name: 'ok', page: 'AB' }, ['body', 'page']],
    [{ name: 'ok', page: 'api' }, ['body', 'page']],
    [{ name: 'ok', page: '-abc' }, ['body', 'page']],
    [{ name: 'ok', generate_secret: 'yes' }, ['body', 'generate_secret']],
  ];
  for (const [body, loc] of bad) {
    const res = await call('POST', '/api/v1/applications', token, body);
    t.is(res.status, 422, JSON.stringify(body));
    t.deepEqual(res.body.detail[0].loc, loc, JSON.stringify(body));
  }
  const own = await call('POST', '/api/v1/applications', token, { name: 'ok', redirect_uris: ['https://x.example/cb?iss=me'] });
  t.regex(own.body.detail[0].msg, /must not carry its own iss query parameter/);
  const good = await call('POST', '/api/v1/applications', token, {
    name: 'x'.repeat(100),
    description: 'd'.repeat(500),
    redirect_uris: [
      'https://ok.example/cb',
      'http://localhost:8080/cb',
      'http://127.0.0.1/cb',
      'http://[::1]/cb',
      'com.example.app:/oauth',
    ],
  });
  t.is(good.status, 201);
  t.regex(good.body.redirect_uris[0], /^https/);
});

test('GET lists only your applications, newest first, with minimal fields', async (t) => {
  const { user, token } = await owner();
  const a = await createTestApplication(service, user, { name: 'First' });
  const b = await createTestApplication(service, user, { name: 'Second', page_slug: `second-${Date.now()}` });
  const someoneElse = await createTestUser(service);
  await createTestApplication(service, someoneElse, { name: 'Not mine' });
  const res = await call('GET', '/api/v1/applications', token);
  t.is(res.status, 200);
  t.deepEqual(res.body, [
    { id: b.id, name: 'Second', page_slug: b.page_slug },
    { id: a.id, name: 'First', page_slug: null },
  ]);
});

test('PUT page: idempotent, 409 for a different slug or one of another application, 400 for validation, 404 for another user', async (t) => {
  const { user, token } = await owner();
  const app = await createTestApplication(service, user, { name: 'Paged', redirect_uris: ['https://a.example/cb'] });
  const slug = `paged-${Date.now()}`;
  const first = await call('PUT', `/api/v1/applications/${app.id}/page`, token, { slug });
  t.is(first.status, 200);
  t.deepEqual(first.body, {
    slug,
    published: false,
    application: { id: app.id, name: 'Paged', is_private: true },
    url: `${service.url}/pages/${slug}/`,
  });
  const again = await call('PUT', `/api/v1/applications/${app.id}/page`, token, { slug });
  t.is(again.status, 200);
  t.deepEqual(again.body, first.body);
  const row = await service.deps.db.selectFrom('applications').select('redirect_uris').where('id', '=', app.id).executeTakeFirstOrThrow();
  t.deepEqual(row.redirect_uris, ['https://a.example/cb', `${service.url}/pages/${slug}/`], 'page URL added once');

  t.is((await call('PUT', `/api/v1/applications/${app.id}/page`, token, { slug: `${slug}-other` })).status, 409);
  const second = await createTestApplication(service, user, { name: 'Second' });
  const taken = await call('PUT', `/api/v1/applications/${second.id}/page`, token, { slug });
  t.is(taken.status, 409);
  t.regex(taken.body.detail, /another application/);

  for (const body of [{ slug: 'Bad Slug' }, { slug: 'ab' }, { slug: 'settings' }, {}, { slug: 7 }]) {
    const res = await call('PUT', `/api/v1/applications/${second.id}/page`, token, body);
    t.is(res.status, 400, JSON.stringify(body));
    t.deepEqual(res.body.detail[0].loc.slice(0, 2), ['body', 'slug']);
  }
  const stranger = await owner();
  t.is((await call('PUT', `/api/v1/applications/${app.id}/page`, stranger.token, { slug })).status, 404);
  t.is((await call('PUT', `/api/v1/applications/nope/page`, token, { slug: 'whatever-slug' })).status, 404);
});

test('the page is published once the application is published; is_private and is_clientside_app are derived', async (t) => {
  const { user, token } = await owner();
  const slug = `live-${Date.now()}`;
  const app = await createTestApplication(service, user, {
    name: 'Live',
    page_slug: slug,
    description: 'd',
    url: 'https://live.example',
    image: 'https://live.example/i.png',
    privacy_statement: `${service.url}/privacy/client-side`,
  });
  await service.deps.db.updateTable('applications').set({ published: true }).where('id', '=', app.id).execute();
  const res = await call('PUT', `/api/v1/applications/${app.id}/page`, token, { slug });
  t.deepEqual(res.body.application, { id: app.id, name: 'Live', is_private: false });
  t.true(res.body.published);
});

test('application endpoints need a first-party credential: the web session or a personal token, not an app token', async (t) => {
  const { user } = await owner();
  t.is((await call('GET', '/api/v1/applications', undefined)).status, 401);
  const app = await createTestApplication(service, user);
  const appToken = await tokenFor(service, user, ['data:read', 'data:write', 'profile'], app.id);
  const refused = await call('POST', '/api/v1/applications', appToken, { name: 'x' });
  t.is(refused.status, 403);
  t.regex(refused.body.detail, /third-party/);
  t.is((await call('GET', '/api/v1/applications', appToken)).status, 403);
  // The web session (cookie) works, with the Origin check for writes.
  const web = await signedIn(service, user);
  const viaCookie = await fetch(`${service.url}/api/v1/applications`, {
    method: 'POST',
    headers: { cookie: web.cookieHeader, 'content-type': 'application/json', origin: service.url },
    body: JSON.stringify({ name: 'From the web' }),
  });
  t.is(viaCookie.status, 201);
  const crossSite = await fetch(`${service.url}/api/v1/applications`, {
    method: 'POST',
    headers: { cookie: web.cookieHeader, 'content-type': 'application/json', origin: 'https://evil.example' },
    body: JSON.stringify({ name: 'CSRF' }),
  });
  t.is(crossSite.status, 403);
});
