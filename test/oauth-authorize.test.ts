import test from 'ava';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestApplication, createTestUser } from './helpers/users.ts';
import { authorizeAndDecide, authorizePath, pkcePair, signedIn, ticketOf } from './helpers/oauth.ts';
import { WebClient } from './helpers/http.ts';
import { createClientSecret } from '../db/applications.ts';

let service: TestService;
test.before(async () => {
  service = await startTestService();
});
test.after.always(() => service?.close());

const REDIRECT = 'https://app.example/callback';
const PUBLIC_FIELDS = {
  description: 'Plans your training',
  url: 'https://app.example',
  image: 'https://app.example/logo.png',
  privacy_statement: 'https://app.example/privacy',
};

async function setup(fields: Parameters<typeof createTestApplication>[2] = {}) {
  const owner = await createTestUser(service);
  const app = await createTestApplication(service, owner, { redirect_uris: [REDIRECT], ...fields });
  const web = await signedIn(service, owner);
  return { owner, app, web };
}

function params(clientId: string, extra: Record<string, string | undefined> = {}) {
  return {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    scope: 'data:read',
    state: 's1',
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
    ...extra,
  };
}

test('an unknown client or an unregistered redirect URI is shown on our own error page, never redirected', async (t) => {
  const { app, web } = await setup();
  for (const bad of [
    params('no-such-client'),
    { ...params(app.id), client_id: undefined },
    params(app.id, { redirect_uri: 'https://evil.example/callback' }),
    params(app.id, { redirect_uri: 'https://app.example/callbackx' }),
    params(app.id, { redirect_uri: 'https://app.example/callback#x' }),
    params(app.id, { redirect_uri: 'http://app.example/callback' }),
  ]) {
    const res = await web.get(authorizePath(bad));
    t.is(res.status, 400, JSON.stringify(bad));
    t.is(res.headers.get('location'), null);
    t.regex(res.headers.get('content-type')!, /text\/html/);
  }
  const repeated = await web.get(`${authorizePath(params(app.id))}&redirect_uri=${encodeURIComponent('https://evil.example/')}`);
  t.is(repeated.status, 400);
  t.is(repeated.headers.get('location'), null);
});

test('a requested redirect_uri that escapes its sub-path, has user-info or its own code/state/iss is refused on our page', async (t) => {
  const { app, web } = await setup({ redirect_uris: [REDIRECT, 'http://127.0.0.1/cb'] });
  for (const uri of [
    'https://app.example/callback/..;/evil',
    'https://app.example/callback/%2e%2e/evil',
    'https://app.example/callback/..%2fevil',
    'https://app.example/callback/..\\evil',
    'https://app.example/callback;x=1',
    'https://@app.example/callback',
    'https://app.example/callback?code=forged',
    'https://app.example/callback?state=1',
    'https://app.example/callback?iss=x',
    'http://127.0.0.1:4000/cb/./x',
  ]) {
    const res = await web.get(authorizePath(params(app.id, { redirect_uri: uri })));
    t.is(res.status, 400, uri);
    t.is(res.headers.get('location'), null, uri);
    t.regex(await res.text(), /redirect_uri must not/, uri);
  }
  // A URI registered before these rules, with its own state parameter, is refused too, even when implied.
  const legacy = await setup({ redirect_uris: ['https://app.example/callback?state=fixed'] });
  for (const extra of [{ redirect_uri: 'https://app.example/callback?state=fixed' }, { redirect_uri: undefined }]) {
    const res = await legacy.web.get(authorizePath(params(legacy.app.id, extra)));
    t.is(res.status, 400, JSON.stringify(extra));
    t.is(res.headers.get('location'), null);
  }
});

test('redirect URIs match by sub-path (https, loopback on any port) and exactly (private-use schemes)', async (t) => {
  const { app, web } = await setup({ redirect_uris: [REDIRECT, 'http://127.0.0.1/cb', 'com.example.app:/oauth'] });
  const ok = async (uri: string) => (await web.get(authorizePath(params(app.id, { redirect_uri: uri })))).status;
  t.is(await ok('https://app.example/callback'), 200);
  t.is(await ok('https://app.example/callback/deeper?x=1'), 200);
  t.is(await ok('http://127.0.0.1:53682/cb'), 200);
  t.is(await ok('http://127.0.0.1/cb/sub'), 200);
  t.is(await ok('com.example.app:/oauth'), 200);
  t.is(await ok('com.example.app:/oauth/more'), 400);
  t.is(await ok('http://localhost:53682/cb'), 400, 'localhost was not registered, only 127.0.0.1');
  t.is(await ok('https://app.example:8443/callback'), 400);
  t.is(await ok('https://app.example/callback/../admin'), 400);
});

test('errors after the redirect URI is validated go back to it with error, error_description, state and iss', async (t) => {
  const { app, web } = await setup();
  const cases: [Record<string, string | undefined>, string][] = [
    [{ response_type: 'token' }, 'unsupported_response_type'],
    [{ scope: 'data:read nonsense' }, 'invalid_scope'],
    [{ scope: 'admin' }, 'invalid_scope'],
    [{ scope: undefined }, 'invalid_scope'],
    [{ code_challenge_method: 'plain' }, 'invalid_request'],
    [{ code_challenge: undefined, code_challenge_method: undefined }, 'invalid_request'],
    [{ code_challenge: 'short', code_challenge_method: 'S256' }, 'invalid_request'],
    [{ prompt: 'none login' }, 'invalid_request'],
    [{ prompt: 'select_account' }, 'invalid_request'],
  ];
  for (const [extra, error] of cases) {
    const res = await web.get(authorizePath(params(app.id, extra)));
    t.is(res.status, 302, JSON.stringify(extra));
    const to = new URL(res.headers.get('location')!);
    t.is(to.origin + to.pathname, REDIRECT);
    t.is(to.searchParams.get('error'), error, JSON.stringify(extra));
    t.truthy(to.searchParams.get('error_description'));
    t.is(to.searchParams.get('state'), 's1');
    t.is(to.searchParams.get('iss'), service.url);
  }
});

test('a client with a secret may skip PKCE; response_type defaults to code; scopes may be comma-separated', async (t) => {
  const { app, web } = await setup();
  await createClientSecret(service.deps.db, app.id, 'server');
  const back = await authorizeAndDecide(web, { client_id: app.id, redirect_uri: REDIRECT, scope: 'data:read,profile' });
  t.truthy(back.searchParams.get('code'));
  const code = await service.deps.db
    .selectFrom('authorization_codes')
    .selectAll()
    .where('application_id', '=', app.id)
    .executeTakeFirstOrThrow();
  t.deepEqual(code.scopes, ['data:read', 'profile']);
  t.is(code.code_challenge, null);
});

test('signed out: the user signs in and comes back to the consent screen', async (t) => {
  const { owner, app } = await setup();
  const web = new WebClient(service.url);
  const path = authorizePath(params(app.id));
  const res = await web.get(path);
  t.is(res.status, 303);
  const signin = new URL(res.headers.get('location')!, service.url);
  t.is(signin.pathname, '/signin');
  t.is(signin.searchParams.get('next'), path);
  const login = await web.postForm('/signin', {
    email: owner.email,
    password: 'correct horse battery staple',
    next: signin.searchParams.get('next')!,
  });
  t.is(login.headers.get('location'), path);
  const consent = await web.get(path);
  t.is(consent.status, 200);
  t.regex(await consent.text(), /Test app<\/span> wants to access your account/);
});

test('the consent screen names the application, its image and the scopes, and allows the redirect in its CSP', async (t) => {
  const { app, web } = await setup({ ...PUBLIC_FIELDS, name: 'Coach <Bot>' });
  const res = await web.get(authorizePath(params(app.id, { scope: 'data:read profile offline_access' })));
  t.is(res.status, 200);
  t.is(res.headers.get('cache-control'), 'no-store');
  t.regex(res.headers.get('content-security-policy')!, /form-action 'self' https:\/\/app\.example;/);
  const html = await res.text();
  t.true(html.includes('Coach &lt;Bot&gt;'), 'escaped');
  t.true(html.includes('src="https://app.example/logo.png"'));
  t.true(html.includes('data-scope="data:read"') && html.includes('data-scope="profile"') && html.includes('data-scope="offline_access"'));
  t.false(html.includes('id="private-notice"'), 'a public application has no private notice');
});

test('deny sends access_denied with the state', async (t) => {
  const { app, web } = await setup();
  const back = await authorizeAndDecide(web, params(app.id), 'deny');
  t.is(back.searchParams.get('error'), 'access_denied');
  t.is(back.searchParams.get('state'), 's1');
  t.is(back.searchParams.get('code'), null);
  t.is(await service.deps.db.selectFrom('consents').selectAll().where('application_id', '=', app.id).executeTakeFirst(), undefined);
});

test('the consent form is protected: single-use ticket bound to the session, same-origin only', async (t) => {
  const { owner, app, web } = await setup();
  const ticket = ticketOf(await (await web.get(authorizePath(params(app.id)))).text());
  // Another session of the same user cannot use it.
  const other = await signedIn(service, owner);
  t.is((await other.postForm('/oauth/authorize/decision', { ticket, decision: 'allow' })).status, 400);
  // A cross-site post is refused before anything else.
  t.is((await web.postForm('/oauth/authorize/decision', { ticket, decision: 'allow' }, { origin: 'https://evil.example' })).status, 403);
  // Signed out: refused.
  t.is((await new WebClient(service.url).postForm('/oauth/authorize/decision', { ticket, decision: 'allow' })).status, 401);
  // The other session's attempt consumed it.
  t.is((await web.postForm('/oauth/authorize/decision', { ticket, decision: 'allow' })).status, 400);
  // A fresh one works once.
  const fresh = ticketOf(await (await web.get(authorizePath(params(app.id)))).text());
  t.is((await web.postForm('/oauth/authorize/decision', { ticket: fresh, decision: 'allow' })).status, 303);
  t.is((await web.postForm('/oauth/authorize/decision', { ticket: fresh, decision: 'allow' })).status, 400);
});

test('a private application completes only for its owner', async (t) => {
  const { app, web } = await setup();
  // The owner sees the private notice and can connect.
  const own = await web.get(authorizePath(params(app.id)));
  t.regex(await own.text(), /id="private-notice"/);
  t.truthy((await authorizeAndDecide(web, params(app.id))).searchParams.get('code'));

  const stranger = await signedIn(service, await createTestUser(service));
  const res = await stranger.get(authorizePath(params(app.id)));
  t.is(res.status, 403);
  const html = await res.text();
  t.regex(html, /private application/);
  const back = new URL(/href="([^"]+)" id="back-to-app"/.exec(html)![1]!.replaceAll('&amp;', '&'));
  t.is(back.searchParams.get('error'), 'access_denied');
  t.is(back.searchParams.get('state'), 's1');
  const none = await stranger.get(authorizePath(params(app.id, { prompt: 'none' })));
  t.is(new URL(none.headers.get('location')!).searchParams.get('error'), 'access_denied');

  // Once public (all four fields set), anyone can connect.
  await service.deps.db.updateTable('applications').set(PUBLIC_FIELDS).where('id', '=', app.id).execute();
  t.truthy((await authorizeAndDecide(stranger, params(app.id))).searchParams.get('code'));
});

test('prompt=none: login_required signed out, consent_required without prior consent, a code with it', async (t) => {
  const { app, web } = await setup();
  const none = (extra: Record<string, string> = {}) => params(app.id, { prompt: 'none', ...extra });
  const signedOut = await new WebClient(service.url).get(authorizePath(none()));
  t.is(new URL(signedOut.headers.get('location')!).searchParams.get('error'), 'login_required');

  const before = await web.get(authorizePath(none()));
  t.is(before.status, 302);
  t.is(new URL(before.headers.get('location')!).searchParams.get('error'), 'consent_required');

  await authorizeAndDecide(web, params(app.id, { scope: 'data:read' }));
  const after = await web.get(authorizePath(none()));
  t.is(after.status, 302);
  const to = new URL(after.headers.get('location')!);
  t.truthy(to.searchParams.get('code'));
  t.is(to.searchParams.get('state'), 's1');

  // Consent covers what was approved, not more.
  const wider = await web.get(authorizePath(none({ scope: 'data:read data:write' })));
  t.is(new URL(wider.headers.get('location')!).searchParams.get('error'), 'consent_required');
  // Without prompt, the consent screen is shown again even with prior consent (default prompt=consent).
  t.is((await web.get(authorizePath(params(app.id)))).status, 200);
});

test('prompt=login asks a signed-in user to sign in again, once', async (t) => {
  const { owner, app, web } = await setup();
  const res = await web.get(authorizePath(params(app.id, { prompt: 'login' })));
  t.is(res.status, 303);
  const signin = new URL(res.headers.get('location')!, service.url);
  t.is(signin.searchParams.get('reauth'), '1');
  const next = signin.searchParams.get('next')!;
  t.false(next.includes('prompt=login'));
  // The sign-in form is shown although a session exists.
  const form = await web.get(`${signin.pathname}${signin.search}`);
  t.is(form.status, 200);
  const old = web.cookies.get('token');
  const login = await web.postForm('/signin', { email: owner.email, password: 'correct horse battery staple', next });
  t.is(login.headers.get('location'), next);
  t.not(web.cookies.get('token'), old);
  t.is((await web.get(next)).status, 200, 'the consent screen, without another sign-in');
});
