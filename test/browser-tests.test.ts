import test from 'ava';
import type { Page } from 'playwright-core';
import { browserSuite, openPage, signIn } from './helpers/browser.ts';
import { collectErrors, DESKTOP, overflow, phoneAndDesktop, PHONE } from './helpers/page-checks.ts';
import { createTestUser, tokenFor } from './helpers/users.ts';
import { api } from './helpers/activities.ts';

/**
 * The Tests pages in headless Chromium at 1280 and 390 px: the list, creating a step test by pasting
 * its table, the test's page with the lactate curve drawn from GET /api/v1/tests/{id}/analysis and
 * every method's threshold marked, keeping a method's LT1 and LT2 (POST …/analysis/accept) and
 * seeing them among the results; nothing wider than a phone.
 */
const suite = browserSuite(test);

/** A step test as a spreadsheet copies it (tabs, a header row, a decimal comma). */
const TABLE = [
  'Step\tPower\tDuration\tLactate\tHR',
  '0\t0\t0\t1.0\t72',
  '1\t100\t4:00\t1.1\t112',
  '2\t140\t4:00\t1.2\t124',
  '3\t180\t4:00\t1.5\t137',
  '4\t220\t4:00\t2,1\t150',
  '5\t260\t4:00\t3.2\t162',
  '6\t300\t4:00\t5.3\t174',
  '7\t340\t4:00\t8.4\t185',
].join('\n');

/** The page's state once its analysis answered (or failed). */
async function analysisSettled(page: Page): Promise<string | null> {
  await page.waitForSelector('#lactate-analysis[data-state="ready"], #lactate-analysis[data-state="error"]');
  return page.getAttribute('#lactate-analysis', 'data-state');
}

test('a person pastes a step test, reads its lactate curve with every threshold marked and keeps LT1 and LT2', async (t) => {
  const user = await createTestUser(suite.service);
  const token = await tokenFor(suite.service, user, ['data:read', 'data:write']);
  const { page, csp } = await openPage(suite.browser);
  const errors = collectErrors(page);
  await page.setViewportSize(DESKTOP);
  await signIn(page, suite.service.url, user.email, '/');
  await page.click('header.site a:has-text("Tests")');
  await page.waitForURL((u) => u.pathname === '/tests');
  t.is((await page.textContent('h1'))?.trim(), 'Tests');
  t.truthy(await page.$('#no-tests'));
  t.is((await page.textContent('#intensity-unit'))?.trim(), 'W');
  await page.fill('#sport', 'running');
  t.is((await page.textContent('#intensity-unit'))?.trim(), 'min/km', 'running takes a pace in the user’s unit');
  await page.fill('#sport', 'cycling');
  await page.fill('#title', 'Spring ramp');
  await page.fill('#start', '2026-05-18T09:00');
  await page.fill('#tags', 'lab');
  await page.fill('#steps', TABLE);
  await phoneAndDesktop(t, page, 'tests-list-form');
  await page.click('#create-test-submit');
  await page.waitForURL((u) => /^\/tests\/[0-9a-f-]{36}$/.test(u.pathname));
  const id = new URL(page.url()).pathname.split('/')[2]!;
  t.is((await page.textContent('p.notice'))?.trim(), 'Test created.');
  t.is((await page.textContent('#test-title'))?.trim(), 'Spring ramp');
  t.is(await page.locator('#test-traces tbody tr').count(), 8);

  // The browser's own clock wrote the offset: Chromium here runs in the machine's zone.
  const stored = await api(suite.service, token, 'GET', `/api/v1/tests/${id}`);
  t.is(stored.body.start_local, '2026-05-18T09:00:00');

  // The curve: a point per step, a marker per method that gives a threshold.
  t.is(await analysisSettled(page), 'ready', (await page.textContent('#analysis-status')) ?? '');
  const analysis = (await api(suite.service, token, 'GET', `/api/v1/tests/${id}/analysis`)).body;
  const applying = analysis.lactate.filter((m: { marker: unknown }) => m.marker);
  t.true(applying.length > 0, 'some method gives a threshold');
  t.is(await page.locator('#lactate-chart svg .lactate-point').count(), analysis.steps.length);
  t.is(await page.locator('#lactate-chart svg .hr-point').count(), analysis.steps.length);
  t.is(await page.locator('#lactate-chart svg .threshold-marker').count(), applying.length);
  for (const m of applying) t.is(await page.locator(`#lactate-chart .threshold-marker[data-method="${m.method}"]`).count(), 1, m.method);
  t.is(await page.locator('#methods-table tbody tr').count(), analysis.lactate.length);
  for (const m of analysis.lactate.filter((x: { marker: unknown }) => !x.marker))
    t.is((await page.textContent(`#methods-table tr[data-method="${m.method}"] .method-reason`))?.trim(), m.reason);
  await phoneAndDesktop(t, page, 'test-page');

  // The options: another fit, the resting sample in it; the page's URL carries them to the analysis and to what is kept.
  await page.selectOption('#analysis-options select[name="fit"]', 'B-spline');
  await page.check('#analysis-options input[name="include_baseline"]');
  await page.click('#analysis-options button[type="submit"]');
  await page.waitForURL((u) => u.searchParams.get('fit') === 'B-spline' && u.searchParams.get('include_baseline') === 'true');
  t.is(await analysisSettled(page), 'ready');
  t.is(await page.inputValue('#analysis-options select[name="fit"]'), 'B-spline');
  t.true(await page.isChecked('#analysis-options input[name="include_baseline"]'));
  const options = (await api(suite.service, token, 'GET', `/api/v1/tests/${id}/analysis?fit=B-spline&include_baseline=true`)).body;
  const chosen = options.lactate.filter((m: { marker: unknown }) => m.marker);
  t.is(await page.locator('#lactate-chart svg .threshold-marker').count(), chosen.length);
  t.regex((await page.textContent('#methods-table tr[data-method="OBLA 2.0"]')) ?? '', /B-spline/);

  // Keep two methods' thresholds as LT1 and LT2.
  const lt1 = chosen.find((m: { method: string }) => m.method === 'LTP1') ?? chosen[0];
  const lt2 = chosen.find((m: { method: string }) => m.method === 'OBLA 4.0') ?? chosen.at(-1);
  await page.selectOption('#accept-lt1', lt1.method);
  await page.selectOption('#accept-lt2', lt2.method);
  await page.click('#accept-submit');
  await page.waitForURL((u) => u.searchParams.has('accepted'));
  t.is((await page.textContent('p.notice'))?.trim(), 'Results kept.');
  t.truthy(await page.$('#results tr[data-result="lt1"]'));
  t.truthy(await page.$('#results tr[data-result="lt2"]'));
  const kept = (await api(suite.service, token, 'GET', `/api/v1/tests/${id}`)).body.results;
  t.is(kept.lt1.power, lt1.marker.power);
  t.is(kept.lt2.power, lt2.marker.power);
  t.regex((await page.textContent('#results tr[data-result="lt1"] td')) ?? '', new RegExp(`^${Math.round(lt1.marker.power)} W`));

  // The list shows it with its results; nothing overflows a phone.
  await page.goto(`${suite.service.url}/tests`);
  t.regex((await page.textContent(`tr[data-test-id="${id}"]`)) ?? '', /Spring ramp[\s\S]*LT1, LT2/);
  await page.setViewportSize(PHONE);
  t.true((await overflow(page)) <= 0, 'the list fits a phone');
  await page.context().close();
  t.deepEqual(errors, []);
  t.deepEqual(csp, []);
});

test('a bad row is named on the form and a deleted test leaves the list', async (t) => {
  const user = await createTestUser(suite.service);
  const { page } = await openPage(suite.browser);
  const errors = collectErrors(page, [{ url: `${suite.service.url}/tests`, status: 422 }]);
  await page.setViewportSize(PHONE);
  await signIn(page, suite.service.url, user.email, '/tests');
  await page.waitForURL((u) => u.pathname === '/tests');
  await page.fill('#start', '2026-05-18T09:00');
  await page.fill('#steps', `${TABLE}\n8\t380\t4:00\t?`);
  await page.click('#create-test-submit');
  await page.waitForSelector('#steps-error');
  t.is((await page.textContent('#steps-error'))?.trim(), 'Row 10, column 4 (lactate): “?” is not a lactate in mmol/L.');
  t.true((await overflow(page)) <= 0, 'the form with its error fits a phone');
  await page.fill('#steps', TABLE);
  await page.click('#create-test-submit');
  await page.waitForURL((u) => /^\/tests\/[0-9a-f-]{36}$/.test(u.pathname));
  await analysisSettled(page);
  t.true((await overflow(page)) <= 0, 'the test page fits a phone');
  await page.click('#delete-test');
  await page.waitForURL((u) => u.pathname === '/tests' && u.searchParams.has('deleted'));
  t.is((await page.textContent('p.notice'))?.trim(), 'Test deleted.');
  t.truthy(await page.$('#no-tests'));
  await page.context().close();
  t.deepEqual(errors, []);
});
