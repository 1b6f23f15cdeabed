/**
 * The API reference's own client (`api-docs`, api/rest/docs-client.ts) with a loopback BASE_URL, as the
 * default self-hosted set-up has it: the native-app rule "loopback http, any port" must not reach
 * it, nor a silent prompt=none, nor a refresh token. The attack it closes: a user who once
 * authorized /docs visits any page that navigates to /oauth/authorize with another local port's
 * redirect URI and prompt=none, and whatever listens there receives a code for the user's data.
 */
import test from 'ava';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestApplication, createTestUser } from './helpers/users.ts';
import { authorizeAndDecide, authorizePath, pkcePair, postToken, signedIn } from './helpers/oauth.ts';
import { createGrant } from '../db/grants.ts';
import { DOCS_CLIENT_ID, docsRedirectUri } from '../api/rest/docs-client.ts';

let service: TestService;
test.before(async () => {
  service = await startTestService();
});
test.after.always(() => service?.close());

const docsParams = (extra: Record<string, string | undefined> = {}, challenge = pkcePair().challenge) => ({
  response_type: 'code',
  client_id: DOCS_CLIENT_ID,
  redirect_uri: docsRedirectUri(service.config),
  scope: 'data:read',
  state: 's1',
  code_challenge: challenge,
  code_challenge_method: 'S256',
  ...extra,
});

/** A user who has authorized the docs once (consent recorded), and their signed-in browser. */
async function consentedOnce() {
  const user = await createTestUser(service);
  const web = await signedIn(service, user);
  const pkce = pkcePair();
  const back = await authorizeAndDecide(web, docsParams({ scope: 'data:read data:write' }, pkce.challenge));
  if (!back.searchParams.get('code')) throw new Error(`no code: ${back}`);
  return { user, web };
}

test("another loopback port, a sub-path or another host for the docs' redirect page: our own error page, never a redirect, even with prompt=none after consent", async (t) => {
  t.true(new URL(service.url).hostname === '127.0.0.1', 'the test service has a loopback BASE_URL');
  const { web } = await consentedOnce();
  const registered = new URL(docsRedirectUri(service.config));
  const otherPort = String(Number(registered.port) + 1);
  const elsewhere = [
    `http://127.0.0.1:${otherPort}${registered.pathname}`,
    `http://localhost:${registered.port}${registered.pathname}`,
    `http://127.0.0.1${registered.pathname}`,
    `${registered.origin}${registered.pathname}/x`,
    `${registered.origin}/docs/`,
    `${registered.origin}${registered.pathname}?next=1`,
  ];
  for (const redirect_uri of elsewhere) {
    for (const prompt of ['none', undefined]) {
      const res = await web.get(authorizePath(docsParams({ redirect_uri, prompt })));
      t.is(res.status, 400, `${redirect_uri} prompt=${prompt}`);
      t.is(res.headers.get('location'), null, `${redirect_uri}: not redirected`);
      t.regex(await res.text(), /not registered for this application/);
    }
  }
  // The registered URI itself, with prompt=none after that consent: consent_required, no code.
  const silent = await web.get(authorizePath(docsParams({ prompt: 'none' })));
  t.is(silent.status, 302);
  const to = new URL(silent.headers.get('location')!);
  t.is(`${to.origin}${to.pathname}`, docsRedirectUri(service.config));
  t.is(to.searchParams.get('error'), 'consent_required');
  t.is(to.searchParams.get('code'), null);
});

test('the docs client always shows the consent screen, also for scopes the user approved before', async (t) => {
  const { web } = await consentedOnce();
  const again = await web.get(authorizePath(docsParams({ scope: 'data:read' })));
  t.is(again.status, 200);
  t.regex(await again.text(), /name="ticket"/);
});

test('the docs client never gets offline_access: dropped from what it asks, no refresh token, and an older refresh token of it is refused', async (t) => {
  const user = await createTestUser(service);
  const web = await signedIn(service, user);
  const pkce = pkcePair();
  const page = await web.get(authorizePath(docsParams({ scope: 'data:read offline_access' }, pkce.challenge)));
  t.is(page.status, 200);
  const html = await page.text();
  t.regex(html, /data-scope="data:read"/);
  t.notRegex(html, /data-scope="offline_access"/, 'the consent screen does not offer offline access');
  const back = await authorizeAndDecide(web, docsParams({ scope: 'data:read offline_access' }, pkce.challenge));
  const code = back.searchParams.get('code')!;
  const token = await postToken(service.url, {
    grant_type: 'authorization_code',
    code,
    client_id: DOCS_CLIENT_ID,
    code_verifier: pkce.verifier,
    redirect_uri: docsRedirectUri(service.config),
  });
  t.is(token.status, 200);
  t.is(token.body.scope, 'data:read');
  t.false('refresh_token' in token.body);

  const only = await web.get(authorizePath(docsParams({ scope: 'offline_access' })));
  t.is(only.status, 302);
  t.is(new URL(only.headers.get('location')!).searchParams.get('error'), 'invalid_scope');

  // A refresh token issued to the docs client before this rule: refused.
  const { refreshToken } = await createGrant(service.deps.db, {
    user_id: user.id,
    application_id: DOCS_CLIENT_ID,
    scopes: ['data:read', 'offline_access'],
    withRefreshToken: true,
  });
  const refreshed = await postToken(service.url, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: DOCS_CLIENT_ID });
  t.is(refreshed.status, 400);
  t.is(refreshed.body.error, 'invalid_grant');
});

test("a user's own application keeps the native-app rules: loopback on any port, prompt=none after consent, offline_access", async (t) => {
  const owner = await createTestUser(service);
  const app = await createTestApplication(service, owner, { redirect_uris: ['http://127.0.0.1/callback'] });
  const web = await signedIn(service, owner);
  const params = (extra: Record<string, string> = {}) => ({
    response_type: 'code',
    client_id: app.id,
    redirect_uri: 'http://127.0.0.1:5173/callback',
    scope: 'data:read offline_access',
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
    ...extra,
  });
  t.truthy((await authorizeAndDecide(web, params())).searchParams.get('code'));
  const silent = await web.get(authorizePath(params({ prompt: 'none', redirect_uri: 'http://127.0.0.1:6006/callback' })));
  t.is(silent.status, 302);
  t.truthy(new URL(silent.headers.get('location')!).searchParams.get('code'));
});
