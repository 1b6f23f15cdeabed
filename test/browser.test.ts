import test from 'ava';
import { findUserByEmail } from '../db/users.ts';
import { browserSuite } from './helpers/browser.ts';

const suite = browserSuite(test);

test('a person signs up, lands on home, sees their settings, signs out and signs back in', async (t) => {
  const context = await suite.browser.newContext();
  const page = await context.newPage();
  const email = `chromium-${Date.now()}@example.com`;

  await page.goto(`${suite.service.url}/signup`);
  t.is(
    await page.textContent('#password-hint'),
    'At least 10 and at most 200 characters, with at least 5 different characters; not a common password, and not containing your email address or name.',
    'the form states every rule it checks',
  );
  t.is(await page.getAttribute('#password', 'aria-describedby'), 'password-hint');
  await page.fill('#first_name', 'Hedy');
  await page.fill('#last_name', 'Lamarr');
  await page.fill('#email', email);
  await page.fill('#password', 'short');
  await page.click('button[type=submit]');
  t.is(await page.textContent('#password-error'), 'Password must be at least 10 characters long.');
  t.is(await page.inputValue('#first_name'), 'Hedy', 'the other fields are kept');

  await page.fill('#password', 'frequency hopping 1942');
  await page.click('button[type=submit]');
  await page.waitForURL(`${suite.service.url}/`);
  await page.waitForSelector('#home-start:not([hidden])');
  t.is(await page.textContent('#home-start-heading'), 'Get started', 'a new account lands on the get-started home');
  await page.goto(`${suite.service.url}/settings`);
  t.is(await page.textContent('#account-email'), email);
  t.is(await page.textContent('#account-name'), 'Hedy Lamarr');
  t.truthy(await findUserByEmail(suite.service.deps.db, email));

  const cookie = (await context.cookies()).find((c) => c.name === 'token')!;
  t.true(cookie.httpOnly);
  t.is(cookie.sameSite, 'Lax');
  t.is(await page.evaluate('document.cookie'), '', 'the session cookie is not readable by scripts');

  await page.click('text=Sign out');
  await page.waitForURL(`${suite.service.url}/signin`);
  await page.goto(`${suite.service.url}/settings`);
  t.is(new URL(page.url()).pathname, '/signin');

  await page.fill('#email', email);
  await page.fill('#password', 'wrong password here');
  await page.click('button[type=submit]');
  t.is(await page.textContent('[role=alert]'), 'Incorrect email or password.');

  await page.fill('#password', 'frequency hopping 1942');
  await page.click('button[type=submit]');
  await page.waitForURL(`${suite.service.url}/settings`); // (the page asked before signing in: `next` wins)
  t.is(await page.textContent('#account-name'), 'Hedy Lamarr');
  await context.close();
});

test('signing up with an email already taken shows a form error', async (t) => {
  const page = await suite.browser.newPage();
  const email = `taken-${Date.now()}@example.com`;
  for (let i = 0; i < 2; i++) {
    await page.context().clearCookies();
    await page.goto(`${suite.service.url}/signup`);
    await page.fill('#first_name', 'Alan');
    await page.fill('#last_name', 'Turing');
    await page.fill('#email', email);
    await page.fill('#password', 'enigma machine 1939');
    await page.click('button[type=submit]');
  }
  t.is(await page.textContent('#email-error'), 'An account with this email already exists. Sign in instead.');
  await page.close();
});

test('/docs renders the API reference from local assets only', async (t) => {
  const page = await suite.browser.newPage();
  const foreign: string[] = [];
  page.on('request', (r) => {
    if (!r.url().startsWith(suite.service.url) && !r.url().startsWith('data:')) foreign.push(r.url());
  });
  await page.goto(`${suite.service.url}/docs`);
  await page.waitForSelector('.opblock-summary-path[data-path="/api/v1/oauth/userinfo"]');
  t.regex((await page.textContent('.info .title'))!, /Training data service/);
  t.is(await page.getAttribute('#docs-home', 'href'), '/', 'a way back to the app');
  await page.click('#docs-home');
  await page.waitForURL(`${suite.service.url}/`);
  t.deepEqual(foreign, []);
  await page.close();
});
