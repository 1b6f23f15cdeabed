import test from 'ava';
import type { Page } from 'playwright-core';
import { browserSuite, openPage, signIn } from './helpers/browser.ts';
import { createTestApplication, createTestUser } from './helpers/users.ts';
import { authorizePath, pkcePair } from './helpers/oauth.ts';
import { collectErrors, phoneAndDesktop } from './helpers/page-checks.ts';

// Callbacks run in Chromium; this project's TypeScript has no DOM library, so what they use is declared here.
type El = { hidden: boolean; dataset: Record<string, string | undefined>; textContent: string | null; querySelector(s: string): El | null };
declare function getComputedStyle(el: El): { backgroundColor: string; display: string; color: string };
declare const document: { documentElement: { scrollWidth: number } };

const suite = browserSuite(test);

/** Errors of a page (page-checks.ts), except failed loads of `expectedUrls` (a broken image, a 404 page the test asks for). */
function watch(page: Page, csp: string[], expectedUrls: string[] = []) {
  const errors = collectErrors(
    page,
    expectedUrls.map((url) => ({ url, status: 404 })),
  );
  return (t: { deepEqual: (a: unknown, b: unknown, m?: string) => void }) => {
    t.deepEqual(errors, [], 'no console or page errors');
    t.deepEqual(csp, [], 'no CSP violations');
  };
}

test("the consent screen's Deny looks different from Allow, and a broken application image shows the app's initial", async (t) => {
  const user = await createTestUser(suite.service);
  const broken = `${suite.service.url}/static/no-such-icon.png`;
  const app = await createTestApplication(suite.service, user, { name: 'ride log', image: broken });
  const { page, csp } = await openPage(suite.browser);
  const check = watch(page, csp, [broken]);
  const path = authorizePath({
    response_type: 'code',
    client_id: app.id,
    redirect_uri: 'https://app.example/callback',
    scope: 'data:read',
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
  });
  await signIn(page, suite.service.url, user.email, path);
  await page.waitForSelector('#deny');
  const background = (sel: string) => page.$eval(sel, (el) => getComputedStyle(el as unknown as El).backgroundColor);
  const color = (sel: string) => page.$eval(sel, (el) => getComputedStyle(el as unknown as El).color);
  t.not(await background('#deny'), await background('#allow'));
  t.not(await color('#deny'), await color('#allow'));

  await page.waitForSelector('.consent .app-icon-frame[data-broken="true"]');
  t.true(await page.$eval('.consent .app-icon-frame img', (el) => (el as unknown as El).hidden));
  t.is(await page.$eval('.consent .app-icon-fallback', (el) => getComputedStyle(el as unknown as El).display), 'flex');
  t.is(await page.textContent('.consent .app-icon-fallback'), 'R');
  await phoneAndDesktop(t, page, 'consent');
  check(t);
  await page.context().close();
});

test('the directory shows a working application image, and the initial for a broken one', async (t) => {
  const owner = await createTestUser(suite.service);
  const broken = `${suite.service.url}/static/missing-logo.png`;
  const published = {
    description: 'Plans rides',
    url: 'https://app.example',
    privacy_statement: 'https://app.example/privacy',
    published: true,
  };
  const good = await createTestApplication(suite.service, owner, {
    name: 'Good icon',
    image: `${suite.service.url}/static/favicon.svg`,
    ...published,
  } as never);
  const bad = await createTestApplication(suite.service, owner, { name: 'Bad icon', image: broken, ...published } as never);
  const { page, csp } = await openPage(suite.browser);
  const check = watch(page, csp, [broken]);
  await page.goto(`${suite.service.url}/apps`);
  await page.waitForSelector(`li[data-application-id="${bad.id}"] .app-icon-frame[data-broken="true"]`);
  t.is(await page.textContent(`li[data-application-id="${bad.id}"] .app-icon-fallback`), 'B');
  t.true(await page.$eval(`li[data-application-id="${bad.id}"] img`, (el) => (el as unknown as El).hidden));
  // The working image covers its fallback and stays.
  await page.waitForFunction(
    (id) =>
      (document as unknown as { querySelector(s: string): { complete: boolean; naturalWidth: number } }).querySelector(
        `li[data-application-id="${id}"] img`,
      ).naturalWidth > 0,
    good.id,
  );
  t.false(await page.$eval(`li[data-application-id="${good.id}"] img`, (el) => (el as unknown as El).hidden));
  t.is(
    await page.$eval(`li[data-application-id="${good.id}"] .app-icon-frame`, (el) => (el as unknown as El).dataset.broken ?? null),
    null,
  );
  await phoneAndDesktop(t, page, 'directory');
  check(t);
  await page.context().close();
});

test("a signed-in user's error pages show their name and Sign out, not Sign in", async (t) => {
  const user = await createTestUser(suite.service, { first_name: 'Ada', last_name: 'Lovelace' });
  const { page, csp } = await openPage(suite.browser);
  // Chromium logs the 404 answers of the pages this test opens on purpose; nothing else may be logged.
  const check = watch(page, csp, [
    `${suite.service.url}/no-such-page`,
    `${suite.service.url}/activities/00000000-0000-4000-8000-000000000000`,
  ]);
  await signIn(page, suite.service.url, user.email, '/activities');
  await page.waitForURL((u) => u.pathname === '/activities');
  for (const where of ['/no-such-page', '/activities/00000000-0000-4000-8000-000000000000']) {
    const res = await page.goto(`${suite.service.url}${where}`);
    t.is(res!.status(), 404, where);
    t.is(await page.textContent('h1'), 'Error 404');
    const header = (await page.textContent('header.site nav'))!;
    t.regex(header, /Ada Lovelace/, where);
    t.regex(header, /Sign out/, where);
    t.notRegex(header, /Sign in|Sign up/, where);
  }
  await phoneAndDesktop(t, page, 'error-404');
  // Signed out, the same page offers Sign in.
  await page.context().clearCookies();
  await page.goto(`${suite.service.url}/no-such-page`);
  t.regex((await page.textContent('header.site nav'))!, /Sign in/);
  check(t);
  await page.context().close();
});

test('pages link an SVG favicon; /favicon.ico answers with it', async (t) => {
  const { page, csp } = await openPage(suite.browser);
  const check = watch(page, csp);
  await page.goto(`${suite.service.url}/signin`);
  t.is(await page.getAttribute('link[rel="icon"]', 'href'), '/static/favicon.svg');
  const svg = await fetch(`${suite.service.url}/static/favicon.svg`);
  t.is(svg.status, 200);
  t.is(svg.headers.get('content-type'), 'image/svg+xml');
  const body = await svg.text();
  t.regex(body, /^<svg /);
  const ico = await fetch(`${suite.service.url}/favicon.ico`);
  t.is(ico.status, 200);
  t.is(ico.headers.get('content-type'), 'image/svg+xml');
  t.is(await ico.text(), body);
  check(t);
  await page.context().close();
});
