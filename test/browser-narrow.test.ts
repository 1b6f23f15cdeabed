import test from 'ava';
import type { Page } from 'playwright-core';
import { browserSuite, openPage, signIn } from './helpers/browser.ts';
import { api, uploadAndWait } from './helpers/activities.ts';
import { readFileSync } from 'node:fs';
import { fixturesDir } from './helpers/fixtures.ts';
import { chartsResized, collectErrors, DESKTOP, overflow, PHONE, screenshot } from './helpers/page-checks.ts';
import { createTestApplication, createTestUser, tokenFor } from './helpers/users.ts';

/**
 * Every page at 390 px (a phone) and 1280 px with the longest data a user can have: names of 100
 * characters without a space, a 194-character email, a 100-character token label, a 64-character tag,
 * an application named at length. No page may be wider than the viewport; on a phone the header is a
 * menu that opens and closes.
 */
const suite = browserSuite(test, { workers: true });

const fixture = (name: string) => readFileSync(`${fixturesDir()}/fit/${name}`);
const LONG_NAME = 'Bartholomew'.repeat(10).slice(0, 100);
const LONG_EMAIL = `${'x'.repeat(64)}@${'y'.repeat(60)}.${'z'.repeat(60)}.example`;

let pages: string[] = [];
let email = '';
test.serial.before(async () => {
  const user = await createTestUser(suite.service, { email: LONG_EMAIL, first_name: LONG_NAME, last_name: LONG_NAME });
  email = user.email;
  const token = await tokenFor(suite.service, user, ['data:read', 'data:write']);
  const [source] = await uploadAndWait(suite.service, token, [{ name: `${'ride-'.repeat(20)}.fit`, bytes: fixture('4078723797.fit') }], {
    tags: ['t'.repeat(64)],
  });
  const activity = source.activity_ids[0]!;
  await suite.service.deps.db
    .updateTable('grants')
    .set({ label: 'L'.repeat(100) })
    .where('user_id', '=', user.id)
    .execute();
  const app = await createTestApplication(suite.service, user, { name: `${'Application'.repeat(9)}X` });
  await tokenFor(suite.service, user, ['data:read'], app.id); // a connection to show
  await api(suite.service, token, 'POST', '/api/v1/dailies/body_mass', { date: '2026-05-18', value: 72.4 });
  const labTest = await api(suite.service, token, 'POST', '/api/v1/tests/', {
    sport: 'cycling.road',
    start: '2026-05-18T09:00:00+02:00',
    title: 'T'.repeat(200),
    tags: ['t'.repeat(64)],
  });
  pages = [
    '/',
    '/activities',
    `/activities/${activity}`,
    '/curves',
    '/data',
    '/tests',
    `/tests/${labTest.body.id}`,
    '/upload',
    '/settings',
    '/settings/tokens',
    '/settings/applications',
    `/settings/applications/${app.id}`,
    '/settings/connections',
    '/apps',
  ];
});

async function settle(page: Page): Promise<void> {
  await page.waitForLoadState('networkidle');
  await chartsResized(page);
}

test('no page is wider than a phone or a desktop with the longest names, emails, labels and tables', async (t) => {
  const { page } = await openPage(suite.browser);
  const errors = collectErrors(page);
  await signIn(page, suite.service.url, email);
  await page.waitForURL(`${suite.service.url}/`);
  for (const viewport of [PHONE, DESKTOP]) {
    await page.setViewportSize(viewport);
    for (const path of pages) {
      await page.goto(`${suite.service.url}${path}`);
      await settle(page);
      t.true((await overflow(page)) <= 0, `${path} at ${viewport.width} px is ${await overflow(page)} px too wide`);
      t.true((await screenshot(page, `narrow${path.replaceAll('/', '-') || '-home'}-${viewport.width}`)) > 0);
    }
  }
  await page.context().close();
  t.deepEqual(errors, []);
});

test('signed out, the account pages fit a phone', async (t) => {
  const { page } = await openPage(suite.browser);
  await page.setViewportSize(PHONE);
  for (const path of ['/', '/signin', '/signup', '/apps']) {
    await page.goto(`${suite.service.url}${path}`);
    t.true((await overflow(page)) <= 0, path);
  }
  await page.context().close();
});

test('on a phone the header is a menu: closed at first, opened by its button, its links work; on a desktop it is a row of links', async (t) => {
  const { page } = await openPage(suite.browser);
  await signIn(page, suite.service.url, email);
  await page.waitForURL(`${suite.service.url}/`);
  await page.setViewportSize(PHONE);
  await page.goto(`${suite.service.url}/settings`);
  t.true(await page.isVisible('label.menu-button'));
  t.false(await page.isVisible('#site-nav'), 'the menu starts closed');
  const closed = await page.$eval('header.site', (h) => h.getBoundingClientRect().height);
  t.true(closed < 60, `the closed header is one line (${closed} px)`);
  await page.click('label.menu-button');
  t.true(await page.isVisible('#site-nav'));
  t.true((await screenshot(page, 'narrow-menu-open-390')) > 0);
  t.true((await overflow(page)) <= 0);
  await page.click('#site-nav a[href="/curves"]');
  await page.waitForURL(`${suite.service.url}/curves`);
  t.false(await page.isVisible('#site-nav'), 'a new page opens with the menu closed');

  await page.setViewportSize(DESKTOP);
  t.false(await page.isVisible('label.menu-button'));
  t.true(await page.isVisible('#site-nav a[href="/activities"]'));
  const header = await page.$eval('header.site', (h) => h.getBoundingClientRect().height);
  t.true(header < 60, `one row at 1280 px, the long name cut (${header} px)`);
  await page.context().close();
});

test('on a phone, sign-up states its password rules and lands on home; a new token is shown once, and a reload makes no second one', async (t) => {
  const { page } = await openPage(suite.browser);
  const errors = collectErrors(page);
  await page.setViewportSize(PHONE);
  await page.goto(`${suite.service.url}/signup`);
  t.true(await page.isVisible('#password-hint'));
  t.true((await overflow(page)) <= 0);
  await page.fill('#first_name', 'Katherine');
  await page.fill('#last_name', 'Johnson');
  const address = `phone-${Date.now()}@example.com`;
  await page.fill('#email', address);
  await page.fill('#password', 'trajectories of 1962');
  await page.click('button[type=submit]');
  await page.waitForURL(`${suite.service.url}/`);
  await page.waitForSelector('#home-start:not([hidden])');
  t.true((await screenshot(page, 'narrow-signed-up-390')) > 0);

  await page.goto(`${suite.service.url}/settings/tokens`);
  await page.fill('#label', 'phone script');
  await page.check('input[name="scopes"][value="data:read"]');
  await page.click('form[action="/settings/tokens"] button[type=submit]');
  await page.waitForURL((u) => u.pathname === '/settings/tokens' && u.searchParams.has('created'));
  const access = (await page.textContent('#new-access-token'))!;
  t.regex(access, /^[\w-]+\.[\w-]+\.[\w-]+$/);
  t.true((await overflow(page)) <= 0, 'the shown token wraps inside a phone');
  t.true((await screenshot(page, 'narrow-token-shown-390')) > 0);
  await page.reload();
  t.false(await page.isVisible('#new-access-token'), 'a reload shows no secret');
  t.regex((await page.textContent('main'))!, /This token was shown once and cannot be shown again/);
  const user = await suite.service.deps.db.selectFrom('users').select('id').where('email', '=', address).executeTakeFirstOrThrow();
  const grants = await suite.service.deps.db
    .selectFrom('grants')
    .select('id')
    .where('user_id', '=', user.id)
    .where('application_id', 'is', null)
    .execute();
  t.is(grants.length, 1, 'one token, however often the page is loaded');
  await page.context().close();
  t.deepEqual(errors, []);
});
