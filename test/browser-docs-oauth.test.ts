/**
 * /docs in Chromium as a user tries the API: Authorize runs the authorization code flow with PKCE
 * as the built-in client `api-docs` through our sign-in and consent pages, and "Try it out" then
 * calls the API with the token it got. Nothing is loaded from elsewhere and the CSP is never broken.
 */
import test from 'ava';
import type { Request } from 'playwright-core';
import { browserSuite, openPage } from './helpers/browser.ts';
import { createTestUser, TEST_PASSWORD } from './helpers/users.ts';

const suite = browserSuite(test);

test('Authorize (authorization code + PKCE) through sign-in and consent, then Try it out answers 200 with the token', async (t) => {
  const user = await createTestUser(suite.service);
  const base = suite.service.url;
  const csp: string[] = [];
  const { page } = await openPage(suite.browser, csp);
  const foreign: string[] = [];
  const requests: Request[] = [];
  page.context().on('request', (r) => {
    requests.push(r);
    if (!r.url().startsWith(base) && !r.url().startsWith('data:')) foreign.push(r.url());
  });
  page.context().on('page', (p) => p.on('console', (m) => /Content Security Policy/.test(m.text()) && csp.push(m.text())));

  await page.goto(`${base}/docs`);
  await page.click('button.authorize');
  const oauth2 = page.locator('.auth-container', { hasText: 'authorizationCode' });
  t.is(await oauth2.locator('input#client_id_authorizationCode').inputValue(), 'api-docs');
  const popupOpened = page.waitForEvent('popup');
  await oauth2.locator('button.authorize').click();
  const popup = await popupOpened;

  // Our sign-in page, then our consent screen for the built-in client.
  await popup.waitForURL((u) => u.pathname === '/signin');
  await popup.fill('#email', user.email);
  await popup.fill('#password', TEST_PASSWORD);
  await popup.click('button[type=submit]');
  await popup.waitForSelector('#allow');
  t.is(await popup.textContent('#app-name'), 'API reference (Swagger UI)');
  t.deepEqual(await popup.locator('#scopes li').evaluateAll((els) => els.map((e) => e.getAttribute('data-scope'))), ['data:read']);
  t.is(await popup.locator('#private-notice').count(), 0);
  const closed = popup.waitForEvent('close');
  await popup.click('#allow');
  await closed; // Swagger's oauth2-redirect.html hands the code to /docs and closes the popup

  // Authorized: the dialog offers Logout for the oauth2 scheme.
  await oauth2.locator('button', { hasText: 'Logout' }).waitFor();
  const authorize = requests.find((r) => new URL(r.url()).pathname === '/oauth/authorize')!;
  const asked = new URL(authorize.url()).searchParams;
  t.is(asked.get('client_id'), 'api-docs');
  t.is(asked.get('code_challenge_method'), 'S256');
  t.regex(asked.get('code_challenge') ?? '', /^[A-Za-z0-9_-]{43}$/);
  t.is(asked.get('redirect_uri'), `${base}/docs/oauth2-redirect.html`);
  const exchange = requests.find((r) => new URL(r.url()).pathname === '/api/v1/oauth/token')!;
  const form = new URLSearchParams(exchange.postData() ?? '');
  t.is(form.get('grant_type'), 'authorization_code');
  t.regex(form.get('code_verifier') ?? '', /^[A-Za-z0-9._~-]{43,128}$/);
  t.is((await exchange.response())!.status(), 200);
  await page.click('.modal-ux .close-modal');

  // Try it out: GET /api/v1/activities/ with the token Authorize got.
  const operation = page.locator('.opblock-get', { has: page.locator('.opblock-summary-path[data-path="/api/v1/activities/"]') });
  await operation.locator('.opblock-summary').click();
  await operation.locator('button.try-out__btn').click();
  const called = page.waitForRequest((r) => new URL(r.url()).pathname === '/api/v1/activities/');
  await operation.locator('button.execute').click();
  const call = await called;
  t.regex((await call.allHeaders()).authorization ?? '', /^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
  const status = operation.locator('.live-responses-table tbody .response-col_status');
  await status.waitFor();
  t.is((await status.textContent())?.trim(), '200');
  t.is((await call.response())!.status(), 200);

  t.deepEqual(foreign, []);
  t.deepEqual(csp, []);
});

test('the docs client is public, complete and registered for the docs redirect page only', async (t) => {
  const app = await suite.service.deps.db.selectFrom('applications').selectAll().where('id', '=', 'api-docs').executeTakeFirstOrThrow();
  t.is(app.owner_id, null);
  t.deepEqual(app.redirect_uris, [`${suite.service.url}/docs/oauth2-redirect.html`]);
  t.false(app.published);
  const secrets = await suite.service.deps.db.selectFrom('client_secrets').select('id').where('application_id', '=', 'api-docs').execute();
  t.deepEqual(secrets, []);
  // Without PKCE a client without secrets gets an error, not a code.
  const res = await fetch(
    `${suite.service.url}/oauth/authorize?${new URLSearchParams({ client_id: 'api-docs', redirect_uri: `${suite.service.url}/docs/oauth2-redirect.html`, scope: 'data:read' })}`,
    { redirect: 'manual' },
  );
  t.is(res.status, 302);
  const to = new URL(res.headers.get('location')!, suite.service.url);
  t.is(to.pathname, '/docs/oauth2-redirect.html');
  t.is(to.searchParams.get('error'), 'invalid_request');
  t.is(to.searchParams.get('code'), null);
  const other = await fetch(
    `${suite.service.url}/oauth/authorize?${new URLSearchParams({ client_id: 'api-docs', redirect_uri: 'https://evil.example/cb', scope: 'data:read' })}`,
    { redirect: 'manual' },
  );
  t.is(other.status, 400);
});

test('/docs and its redirect page: CSP allows only what Swagger UI needs', async (t) => {
  const docs = await fetch(`${suite.service.url}/docs`);
  t.is(
    docs.headers.get('content-security-policy'),
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'",
  );
  const redirect = await fetch(`${suite.service.url}/docs/oauth2-redirect.html`);
  t.is(redirect.status, 200);
  t.regex(await redirect.text(), /<script src="oauth2-redirect.js"><\/script>/);
  t.regex(redirect.headers.get('content-security-policy')!, /script-src 'self'/);
  t.is((await fetch(`${suite.service.url}/docs/oauth2-redirect.js`)).status, 200);
  t.is((await fetch(`${suite.service.url}/docs/package.json`)).status, 404);
});
