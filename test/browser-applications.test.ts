import test from 'ava';
import { browserSuite, openPage, signIn } from './helpers/browser.ts';
import { createTestUser, TEST_PASSWORD } from './helpers/users.ts';
import { sha256 } from '../lib/secrets.ts';

const suite = browserSuite(test);

test('a developer creates, secures and publishes an application; another person connects it from its page', async (t) => {
  const developer = await createTestUser(suite.service);
  const { page, csp } = await openPage(suite.browser);
  await signIn(page, suite.service.url, developer.email, '/settings');
  await page.click('text=API applications');
  await page.fill('#name', 'Interval Lab');
  await page.click('button:has-text("Create application")');
  const clientId = (await page.textContent('#client-id'))!;
  t.is(await page.getAttribute('#app-status', 'data-private'), 'true');

  // Publishing while private is refused with a field error.
  await page.check('#published');
  await page.click('button:has-text("Save")');
  t.regex((await page.textContent('#published-error'))!, /Fill in description, URL, image and privacy statement/);

  const slug = `interval-lab-${Date.now().toString(36)}`;
  await page.fill('#description', 'Finds your best intervals');
  await page.fill('#url', 'https://intervals.example');
  await page.fill('#image', 'https://intervals.example/logo.png');
  await page.fill('#privacy_statement', 'https://intervals.example/privacy');
  await page.fill('#page_slug', slug);
  await page.check('#published');
  await page.click('button:has-text("Save")');
  await page.waitForSelector('#app-status[data-private="false"]');

  // A client secret, shown once.
  await page.fill('#label', 'production');
  await page.click('button:has-text("Create secret")');
  const secret = (await page.textContent('#new-secret'))!;
  t.regex(secret, /^tds_cs_/);
  const stored = await suite.service.deps.db
    .selectFrom('client_secrets')
    .select('secret_hash')
    .where('application_id', '=', clientId)
    .executeTakeFirstOrThrow();
  t.is(stored.secret_hash, sha256(secret));
  await page.reload();
  t.false((await page.content()).includes(secret));
  await page.context().close();

  // Another person finds it in the directory and connects from its page.
  const athlete = await createTestUser(suite.service);
  const visitor = await suite.browser.newContext();
  const vpage = await visitor.newPage();
  vpage.on('console', (m) => /Content Security Policy/.test(m.text()) && csp.push(m.text()));
  await vpage.goto(`${suite.service.url}/apps`);
  await vpage.click(`[data-application-id="${clientId}"] a[href="/pages/${slug}/"]`);
  await vpage.click('#connect');
  await vpage.fill('#email', athlete.email);
  await vpage.fill('#password', TEST_PASSWORD);
  await vpage.click('button[type=submit]');
  t.is(await vpage.textContent('#app-name'), 'Interval Lab');
  t.is(await vpage.$('#private-notice'), null);
  await vpage.click('#allow');
  await vpage.waitForURL((u) => u.pathname === `/pages/${slug}/` && u.searchParams.has('code'));
  t.is(await vpage.textContent('#connect-result'), 'Connected to Interval Lab');

  await vpage.goto(`${suite.service.url}/settings/connections`);
  t.truthy(await vpage.$(`li[data-application-id="${clientId}"]`));
  await visitor.close();
  t.deepEqual(csp, [], 'no CSP violations');
});
