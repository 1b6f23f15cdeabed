/**
 * The OAuth flow as a third-party application sees it: openid-client (a certified client library
 * we did not write) does discovery, builds the authorization URL, exchanges the code with PKCE,
 * calls userinfo and refreshes; a person signs in and consents in headless Chromium.
 */
import test from 'ava';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as oidc from 'openid-client';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import type { Browser, Page } from 'playwright-core';
import { startTestService, type TestService } from './helpers/service.ts';
import { launchBrowser } from './helpers/browser.ts';
import { createTestApplication, createTestUser, TEST_PASSWORD } from './helpers/users.ts';
import { createClientSecret } from '../db/applications.ts';
import type { User } from '../db/database.ts';

let service: TestService;
let browser: Browser;
let callback: http.Server;
let callbackBase: string;

test.before(async () => {
  service = await startTestService();
  browser = await launchBrowser();
  // The application's loopback redirect target, as a native app or CLI tool would run it.
  callback = http.createServer((_req, res) => res.end('You can close this window.'));
  await new Promise<void>((resolve) => callback.listen(0, '127.0.0.1', resolve));
  callbackBase = `http://127.0.0.1:${(callback.address() as AddressInfo).port}`;
});
test.after.always(async () => {
  await browser?.close();
  callback?.close();
  await service?.close();
});

const insecure = { execute: [oidc.allowInsecureRequests] };

/** Sign in (when asked) and press Allow; returns the URL the browser was sent back to. */
async function consentInBrowser(page: Page, authorizationUrl: URL, user: User): Promise<URL> {
  await page.goto(authorizationUrl.href);
  if (new URL(page.url()).pathname === '/signin') {
    await page.fill('#email', user.email);
    await page.fill('#password', TEST_PASSWORD);
    await page.click('button[type=submit]');
  }
  await page.waitForSelector('#allow');
  await page.click('#allow');
  await page.waitForURL((url) => url.href.startsWith(`${callbackBase}/callback`));
  return new URL(page.url());
}

test('public client: discovery → authorize with PKCE → code exchange → userinfo → refresh → revoke in Settings → refresh fails', async (t) => {
  const user = await createTestUser(service, { first_name: 'Marie', last_name: 'Curie' });
  const app = await createTestApplication(service, user, { name: 'Notebook', redirect_uris: ['http://127.0.0.1/callback'] });

  const config = await oidc.discovery(new URL(service.url), app.id, undefined, oidc.None(), insecure);
  t.is(config.serverMetadata().token_endpoint, `${service.url}/api/v1/oauth/token`);

  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const authorizationUrl = oidc.buildAuthorizationUrl(config, {
    redirect_uri: `${callbackBase}/callback`,
    scope: 'profile data:read offline_access',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
  });

  const context = await browser.newContext();
  const page = await context.newPage();
  const back = await consentInBrowser(page, authorizationUrl, user);

  const tokens = await oidc.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier, expectedState: state });
  t.is(tokens.token_type, 'bearer');
  t.is(tokens.expires_in, 900);
  t.is(tokens.scope, 'profile data:read offline_access');
  t.truthy(tokens.refresh_token);

  const info = await oidc.fetchUserInfo(config, tokens.access_token, user.id);
  t.like(info, { sub: user.id, name: 'Marie Curie', given_name: 'Marie', family_name: 'Curie', email: user.email });

  const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
  t.not(refreshed.access_token, tokens.access_token);
  t.is((await oidc.fetchUserInfo(config, refreshed.access_token, user.id)).sub, user.id);

  // The person withdraws the application's access in Settings → Connected applications.
  await page.goto(`${service.url}/settings/connections`);
  t.truthy(await page.$(`[data-application-id="${app.id}"]`));
  await page.click(`#revoke-${app.id}`);
  await page.waitForLoadState();
  t.is(await page.$(`[data-application-id="${app.id}"]`), null);

  const error = await t.throwsAsync(oidc.refreshTokenGrant(config, tokens.refresh_token!));
  t.true(error instanceof oidc.ResponseBodyError);
  t.is((error as oidc.ResponseBodyError).error, 'invalid_grant');
  // The access tokens stop at once too.
  await t.throwsAsync(oidc.fetchUserInfo(config, refreshed.access_token, user.id));
  await context.close();
});

test('confidential client with client_secret_basic, a second user on a public application', async (t) => {
  const owner = await createTestUser(service);
  const app = await createTestApplication(service, owner, {
    name: 'Coach',
    redirect_uris: ['http://127.0.0.1/callback'],
    description: 'Plans sessions',
    url: 'https://coach.example',
    image: 'https://coach.example/logo.png',
    privacy_statement: 'https://coach.example/privacy',
  });
  const { secret } = await createClientSecret(service.deps.db, app.id, 'server');
  const athlete = await createTestUser(service, { first_name: 'Eliud', last_name: 'Kipchoge' });

  const config = await oidc.discovery(new URL(service.url), app.id, undefined, oidc.ClientSecretBasic(secret), insecure);
  const state = oidc.randomState();
  const authorizationUrl = oidc.buildAuthorizationUrl(config, { redirect_uri: `${callbackBase}/callback`, scope: 'profile', state });

  const context = await browser.newContext();
  const page = await context.newPage();
  const back = await consentInBrowser(page, authorizationUrl, athlete);
  const tokens = await oidc.authorizationCodeGrant(config, back, { expectedState: state });
  t.is(tokens.refresh_token, undefined, 'no offline_access, no refresh token');
  const info = await oidc.fetchUserInfo(config, tokens.access_token, athlete.id);
  t.is(info.name, 'Eliud Kipchoge');

  // Revocation through the library (RFC 7009) ends the access token.
  await oidc.tokenRevocation(config, tokens.access_token);
  await t.throwsAsync(oidc.fetchUserInfo(config, tokens.access_token, athlete.id));
  await context.close();
});

test('OpenID Connect: with openid and a nonce the code exchange returns an ID token the library validates', async (t) => {
  const user = await createTestUser(service, { first_name: 'Ada', last_name: 'Lovelace' });
  const app = await createTestApplication(service, user, { redirect_uris: ['http://127.0.0.1/callback'] });
  const config = await oidc.discovery(new URL(service.url), app.id, undefined, oidc.None(), insecure);
  const verifier = oidc.randomPKCECodeVerifier();
  const nonce = oidc.randomNonce();
  const authorizationUrl = oidc.buildAuthorizationUrl(config, {
    redirect_uri: `${callbackBase}/callback`,
    scope: 'openid profile',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    nonce,
  });
  const context = await browser.newContext();
  const back = await consentInBrowser(await context.newPage(), authorizationUrl, user);
  const tokens = await oidc.authorizationCodeGrant(config, back, {
    pkceCodeVerifier: verifier,
    expectedNonce: nonce,
    idTokenExpected: true,
  });
  const claims = tokens.claims()!;
  t.like(claims, { iss: service.url, sub: user.id, aud: app.id, nonce, name: 'Ada Lovelace', given_name: 'Ada', family_name: 'Lovelace' });
  // Signed by a published key; but it is not an access token.
  const { payload } = await jwtVerify(tokens.id_token!, createRemoteJWKSet(new URL(`${service.url}/.well-known/jwks.json`)), {
    issuer: service.url,
    audience: app.id,
  });
  t.is(payload.sub, user.id);
  const misuse = await fetch(`${service.url}/api/v1/oauth/userinfo`, { headers: { authorization: `Bearer ${tokens.id_token}` } });
  t.is(misuse.status, 401);
  await context.close();
});
