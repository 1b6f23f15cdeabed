import test from 'ava';
import { existsSync, readFileSync } from 'node:fs';
import { browserSuite, openPage, signIn } from './helpers/browser.ts';
import { createTestUser, tokenFor } from './helpers/users.ts';
import { api, uploadAndWait } from './helpers/activities.ts';
import { fixturesDir } from './helpers/fixtures.ts';
import { sampleKey } from '../lib/object-store.ts';
import { objectFile } from '../lib/object-store-local.ts';

const suite = browserSuite(test, { workers: true });

const fit = (name: string) => ({ name, bytes: new Uint8Array(readFileSync(`${fixturesDir()}/fit/${name}`)) });

test('an athlete opens an activity from the list and deletes it with the button', async (t) => {
  const user = await createTestUser(suite.service);
  const token = await tokenFor(suite.service, user, ['data:read', 'data:write']);
  const sources = await uploadAndWait(suite.service, token, [fit('2016-05-23_18-14-30_4_25.fit'), fit('2020-06-01-16-52-40.fit')]);
  const [gone, kept] = sources.map((s: { activity_ids: string[] }) => s.activity_ids[0]) as [string, string];
  t.truthy(gone);
  t.truthy(kept);

  const { page, csp } = await openPage(suite.browser);
  await signIn(page, suite.service.url, user.email, '/');
  await page.click('header.site a:has-text("Activities")');
  await page.waitForURL((u) => u.pathname === '/activities');
  t.truthy(await page.$(`tr[data-activity-id="${gone}"]`));
  t.truthy(await page.$(`tr[data-activity-id="${kept}"]`));

  await page.click(`tr[data-activity-id="${gone}"] a`);
  await page.waitForURL((u) => u.pathname === `/activities/${gone}`);
  t.is(await page.textContent('#activity-id'), gone);
  t.is(await page.getAttribute('#download', 'href'), `/api/v1/activities/${gone}/download`);

  // Without ticking the box the browser itself refuses to submit (no script needed).
  await page.click('#delete-activity');
  t.is(new URL(page.url()).pathname, `/activities/${gone}`);
  t.false(await page.$eval('#confirm', (el) => (el as unknown as { validity: { valid: boolean } }).validity.valid));

  await page.check('#confirm');
  await page.click('#delete-activity');
  await page.waitForURL((u) => u.pathname === '/activities' && u.searchParams.has('deleted'));
  t.is((await page.textContent('p.notice'))?.trim(), 'Activity deleted.');
  t.is(await page.$(`tr[data-activity-id="${gone}"]`), null);
  t.truthy(await page.$(`tr[data-activity-id="${kept}"]`));
  await page.context().close();

  t.is((await api(suite.service, token, 'GET', `/api/v1/activities/${gone}`)).status, 404);
  t.false(existsSync(objectFile(suite.service.config.DATA_DIR, sampleKey(user.id, gone))));
  t.deepEqual(csp, [], 'no CSP violations');
});
