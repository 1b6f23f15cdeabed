import test from 'ava';
import { readFileSync } from 'node:fs';
import { browserSuite, openPage } from './helpers/browser.ts';
import { createTestUser, tokenFor, TEST_PASSWORD } from './helpers/users.ts';
import { api, uploadAndWait } from './helpers/activities.ts';
import { fixturesDir } from './helpers/fixtures.ts';
import { signedIn } from './helpers/oauth.ts';
import { startSpaServer, type SpaServer } from './helpers/spa-server.ts';
import { clientSidePrivacyUrl } from '../api/services/applications/model.ts';

const suite = browserSuite(test, { workers: true });

interface SpaState {
  done: boolean;
  error: string | null;
  [step: string]: any;
}

test('a single-page app on another origin signs the user in with PKCE as a public client, reads activities and a Parquet curve, refreshes and revokes with fetch', async (t) => {
  const { service } = suite;
  const spa: SpaServer = await startSpaServer(service.url);
  t.teardown(() => spa.close());
  t.not(new URL(spa.origin).origin, new URL(service.url).origin, 'the SPA is on another origin');

  // The developer registers the app as a public client (no secret) with the SPA's redirect URI, then
  // completes it in Settings with the standard client-side privacy policy, which makes it a client-side app.
  const developer = await createTestUser(service, { first_name: 'Dev' });
  const devToken = await tokenFor(service, developer, []);
  const created = await api(service, devToken, 'POST', '/api/v1/applications', { name: 'Ride viewer', redirect_uris: [spa.redirectUri] });
  t.is(created.status, 201);
  t.is(created.body.client_secret, null, 'a public client: no secret');
  spa.clientId = created.body.id;
  const devWeb = await signedIn(service, developer);
  const saved = await devWeb.postForm(`/settings/applications/${spa.clientId}`, {
    name: 'Ride viewer',
    description: 'Charts your rides in the browser',
    url: spa.origin,
    image: 'https://ride-viewer.example/logo.png',
    privacy_statement: clientSidePrivacyUrl(service.config),
    redirect_uris: spa.redirectUri,
  });
  t.is(saved.status, 303);
  const settingsPage = await (await devWeb.get(`/settings/applications/${spa.clientId}`)).text();
  t.regex(settingsPage, /id="client-side-note"/, 'Settings calls it a client-side application');

  // The athlete has a ride with power.
  const athlete = await createTestUser(service, { first_name: 'Ada' });
  const uploadToken = await tokenFor(service, athlete, ['data:write', 'data:read']);
  const [source] = await uploadAndWait(service, uploadToken, [
    { name: 'ride.fit', bytes: new Uint8Array(readFileSync(`${fixturesDir()}/fit/4078723797.fit`)) },
  ]);
  t.is(source.status, 'processed');
  const activityId = source.activity_ids[0] as string;

  const { page, csp } = await openPage(suite.browser);
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${spa.origin}/`);
  await page.click('#connect');

  // The service's own pages: sign in, then consent.
  await page.waitForURL((u) => u.origin === new URL(service.url).origin && u.pathname === '/signin');
  await page.fill('#email', athlete.email);
  await page.fill('#password', TEST_PASSWORD);
  await page.click('button[type=submit]');
  await page.waitForSelector('#allow');
  t.is(await page.textContent('#app-name'), 'Ride viewer');
  t.is(await page.$('#private-notice'), null, 'a public application');
  await page.click('#allow');

  // Back on the SPA, which does the rest with fetch.
  await page.waitForURL((u) => u.origin === spa.origin && u.pathname === '/callback');
  await page.waitForFunction(() => (globalThis as unknown as { spa?: SpaState }).spa?.done === true, undefined, { timeout: 30_000 });
  const state = (await page.evaluate(() => (globalThis as unknown as { spa: SpaState }).spa)) as SpaState;
  t.is(state.error, null);
  t.deepEqual(errors, []);

  t.like(state.callback, { stateMatches: true, hasCode: true, error: null, iss: service.url });
  t.deepEqual(state.discovery, {
    token_endpoint: `${service.url}/api/v1/oauth/token`,
    revocation_endpoint: `${service.url}/api/v1/oauth/revoke`,
    userinfo_endpoint: `${service.url}/api/v1/oauth/userinfo`,
  });
  t.like(state.token, { status: 200, token_type: 'Bearer', expires_in: 900, hasRefresh: true, cacheControl: 'no-store' });
  t.deepEqual(state.token.scope.split(' ').sort(), ['data:read', 'offline_access', 'profile']);

  t.like(state.list, { status: 200, ids: [activityId], sports: ['cycling'] });
  t.regex(state.list.rateLimitRemaining, /^\d+$/, 'an exposed header is readable');
  t.truthy(state.list.requestId);

  t.like(state.curve, { status: 200, contentType: 'application/vnd.apache.parquet', head: 'PAR1', tail: 'PAR1' });
  t.true(state.curve.length > 100);
  t.regex(state.curve.contentDisposition, /attachment; filename="[^"]+\.parquet"/);

  t.deepEqual(state.refresh, { status: 200, newAccessToken: true, sameRefreshToken: true });
  t.like(state.userinfo, { status: 200, sub: athlete.id, email: athlete.email, given_name: 'Ada' });

  t.regex(state.cookie.simple, /^blocked/, 'the session cookie gets no readable answer');
  t.regex(state.cookie.preflighted, /^blocked/, 'not after a preflight either');

  t.deepEqual(state.revoke, { status: 200 });
  t.is(state.afterRevoke.status, 401, "the revoked grant's access token is refused");
  t.regex(state.afterRevoke.wwwAuthenticate, /^Bearer error="invalid_token"/);
  t.truthy(state.afterRevoke.body.detail);
  t.like(state.refreshAfterRevoke, { status: 400, error: 'invalid_grant' });

  // The page showed it, and nothing broke a Content-Security-Policy on either origin.
  t.regex((await page.textContent('#state')) ?? '', /"done": true/);
  t.deepEqual(csp, []);
  await page.context().close();

  // Seen from outside the browser too: the grant is gone.
  const grants = await service.deps.db
    .selectFrom('grants')
    .select('id')
    .where('user_id', '=', athlete.id)
    .where('application_id', '=', spa.clientId)
    .execute();
  t.deepEqual(grants, []);
});
