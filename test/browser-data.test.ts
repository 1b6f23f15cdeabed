import test from 'ava';
import { browserSuite, openPage, signIn } from './helpers/browser.ts';
import { createTestApplication, createTestUser, tokenFor } from './helpers/users.ts';
import { api } from './helpers/activities.ts';

const suite = browserSuite(test);

test('a person checks the trace and daily value an application wrote and deletes the trace with its button', async (t) => {
  const user = await createTestUser(suite.service);
  const app = await createTestApplication(suite.service, user, { name: 'Lactate Lab' });
  const token = await tokenFor(suite.service, user, ['data:read', 'data:write'], app.id);
  const trace = await api(suite.service, token, 'POST', '/api/v1/traces/', {
    timestamp: '2026-05-18T17:32:00+02:00',
    lactate: 2.1,
    power: 250,
    sport: 'cycling.road',
    notes: 'Step 3',
  });
  t.is(trace.status, 201);
  const id: string = trace.body.id;
  t.is((await api(suite.service, token, 'PUT', `/api/v1/traces/${id}/app-metadata`, { step: 3 })).status, 200);
  t.is((await api(suite.service, token, 'POST', '/api/v1/dailies/body_mass', { date: '2026-05-18', value: 72.4 })).status, 200);

  const { page, csp } = await openPage(suite.browser);
  await signIn(page, suite.service.url, user.email, '/');
  await page.click('header.site a:has-text("Traces and dailies")');
  await page.waitForURL((u) => u.pathname === '/data');
  t.is((await page.textContent('h1'))?.trim(), 'Traces and daily measures');

  const row = `tr[data-trace-id="${id}"]`;
  t.is((await page.textContent(`${row} .trace-time time`))?.trim(), '2026-05-18 17:32:00');
  t.is((await page.textContent(`${row} [data-value="lactate"]`))?.trim(), 'Lactate 2.1 mmol/L');
  t.is((await page.textContent(`${row} [data-value="power"]`))?.trim(), 'Power 250 W');
  t.is((await page.textContent(`${row} .trace-note`))?.trim(), 'Step 3');
  t.is((await page.textContent(`${row} .app-metadata`))?.trim(), 'Lactate Lab: {"step":3}');
  t.is((await page.textContent('tr[data-measure="body_mass"][data-date="2026-05-18"] .daily-value'))?.trim(), '72.4 kg');

  await page.click(`#delete-trace-${id}`);
  await page.waitForURL((u) => u.pathname === '/data' && u.searchParams.has('trace_deleted'));
  t.is((await page.textContent('p.notice'))?.trim(), 'Trace deleted.');
  t.is(await page.$(row), null);
  t.truthy(await page.$('#no-traces'));
  t.truthy(await page.$('tr[data-measure="body_mass"][data-date="2026-05-18"]'), 'the daily value stays');
  await page.context().close();

  t.is((await api(suite.service, token, 'GET', `/api/v1/traces/${id}`)).status, 404);
  t.deepEqual(csp, [], 'no CSP violations');
});
