import test from 'ava';
import type { Page } from 'playwright-core';
import { browserSuite, openPage, signIn } from './helpers/browser.ts';
import { api, uploadAndWait } from './helpers/activities.ts';
import { buildActivityFit, type RecordFields } from './helpers/fit-builder.ts';
import { collectErrors, DESKTOP, phoneAndDesktop } from './helpers/page-checks.ts';
import { createTestUser, testAthlete, tokenFor } from './helpers/users.ts';

/**
 * Training load in the web app, in headless Chromium at 1280 and 390 px: home's fitness chart drawn from
 * GET /api/v1/activities/longitudinal-training-load (its ranges a click away; a sentence pointing to
 * Settings → Thresholds when there is no stress at all), the activity page's training stress, time in
 * zones and W′ balance chart from the activity's details and /data, and Settings → Thresholds adding and
 * deleting entries by form posts (a refused value said next to its field, nothing typed lost) and
 * listing a lab test's entry.
 */
const suite = browserSuite(test, { workers: true });

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

const athlete = () => testAthlete(suite.service);

/** 20 minutes at 200 W, 4 at 330 W (above CP: W′ drains), 16 at 150 W; heart rate 150. */
const record = (i: number): RecordFields => ({
  power: i < 1200 ? 200 : i < 1440 ? 330 : 150,
  heartRate: 150,
  cadence: 90,
  speed: 9,
  distance: i * 9,
});

async function uploadRide(token: string, start: Date): Promise<string> {
  const bytes = buildActivityFit({ sessions: [{ sport: 'cycling', start, seconds: 2400, record }] });
  const [source] = await uploadAndWait(suite.service, token, [{ name: 'ride.fit', bytes }]);
  if (source.status !== 'processed') throw new Error(`upload failed: ${JSON.stringify(source)}`);
  return source.activity_ids[0];
}

/** The activity's details once its training stress is computed. */
async function computed(token: string, id: string) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const res = await api(suite.service, token, 'GET', `/api/v1/activities/${id}`);
    if (res.status === 200 && res.body.training_stress !== null) return res.body;
    if (Date.now() > deadline) throw new Error(`no training stress for ${id}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The columns the fitness chart drew, once drawn with `days` days. */
async function drawnFitness(page: Page, days: number) {
  await page.waitForSelector(`#fitness-chart[data-drawn][data-days="${days}"]`);
  return page.$eval('#fitness-chart', (el: any) => el.fitness);
}

const CYCLING = { sport: 'cycling', valid_from: '2020-01-01', critical_power: 250, w_prime: 20000, threshold_heart_rate: 160 };

test.serial(
  'home draws the fitness chart of the last 90 days from the API, and the activity shows its stress, zones and W′ balance',
  async (t) => {
    const { user, token } = await athlete();
    t.is((await api(suite.service, token, 'PUT', '/api/v1/profile/thresholds', { thresholds: [CYCLING] })).status, 200);
    const start = new Date(`${day(-3)}T08:00:00Z`);
    const id = await uploadRide(token, start);
    const details = await computed(token, id);
    t.is(details.training_stress.method, 'power');
    t.true(details.training_stress.score > 0);
    t.true(details.w_prime_balance_min < 20000);

    const { page, csp } = await openPage(suite.browser);
    const errors = collectErrors(page);
    await page.setViewportSize(DESKTOP);
    await signIn(page, suite.service.url, user.email, '/');
    const drawn = await drawnFitness(page, 90);
    const frame = (
      await api(suite.service, token, 'GET', `/api/v1/activities/longitudinal-training-load?start=${day(-89)}&end=${day(0)}&format=json`)
    ).body;
    t.deepEqual(drawn, frame, 'the chart draws the API’s columns');
    const rideDay = frame.date.findIndex((d: string) => d.startsWith(day(-3)));
    t.true(Math.abs(frame.stress[rideDay] - details.training_stress.score) < 1e-9, 'the ride’s stress on its day');
    t.is(await page.getAttribute('#fitness-chart .stress-bars', 'data-days'), '1');
    for (const line of ['ctl', 'atl', 'tsb']) t.is(await page.getAttribute(`#fitness-chart .${line}-line`, 'data-points'), '90', line);
    t.regex((await page.textContent('#fitness-readout')) ?? '', new RegExp(`^${day(0)}: stress 0, fitness \\d`));
    t.true(await page.isHidden('#fitness-empty'));
    t.is(await page.getAttribute('#fitness-ranges button[data-range="90d"]', 'aria-pressed'), 'true');

    await page.click('#fitness-ranges button[data-range="1y"]');
    t.is((await drawnFitness(page, 365)).date[0].slice(0, 10), day(-364));
    await page.click('#fitness-ranges button[data-range="all"]');
    t.is((await drawnFitness(page, 4)).date[0].slice(0, 10), day(-3), 'all: from the first day with stress');
    await page.click('#fitness-ranges button[data-range="custom"]');
    await page.fill('#fitness-start', day(-10));
    await page.fill('#fitness-end', day(-1));
    await page.click('#fitness-show');
    const custom = await drawnFitness(page, 10);
    t.is(custom.date[9].slice(0, 10), day(-1));
    await page.click('#fitness-ranges button[data-range="90d"]');
    await drawnFitness(page, 90);
    await phoneAndDesktop(t, page, 'home-fitness');

    await page.goto(`${suite.service.url}/activities/${id}`);
    await page.waitForSelector('#training-load[data-state="ready"]');
    const ts = details.training_stress;
    t.is((await page.textContent('#stress-score'))?.trim(), `${Math.round(ts.score)}, from power (normalized power and critical power)`);
    t.is((await page.textContent('#intensity-factor'))?.trim(), ts.intensity_factor.toFixed(2));
    t.is((await page.textContent('#w-prime-min'))?.trim(), `${(details.w_prime_balance_min / 1000).toFixed(1)} kJ`);
    t.deepEqual(Object.keys(details.time_in_zones).sort(), ['heart_rate', 'power']);
    for (const metric of ['power', 'heart_rate']) {
      const zones = details.time_in_zones[metric];
      const rows = page.locator(`#time-in-zones figure[data-metric="${metric}"] li`);
      t.is(await rows.count(), zones.length, metric);
      t.deepEqual(
        await rows.evaluateAll((lis: any[]) => lis.map((li) => Number(li.dataset.seconds))),
        zones.map((z: { seconds: number }) => z.seconds),
      );
    }
    const power = details.time_in_zones.power;
    const z4 = page.locator('#time-in-zones figure[data-metric="power"] li[data-zone="4"]');
    t.is((await z4.locator('.zone-name').textContent())?.trim(), `Z4 ${power[3].name}`);
    t.is((await z4.locator('.zone-bounds').textContent())?.trim(), `${Math.round(power[3].low)}–${Math.round(power[3].high)} W`);
    t.is(
      (await page.textContent('#time-in-zones figure[data-metric="heart_rate"] li[data-zone="1"] .zone-bounds'))?.trim(),
      `< ${Math.round(details.time_in_zones.heart_rate[0].high)} bpm`,
    );

    // The W′ balance: a chart of the time series right under power, in kJ, its lowest value the details'.
    await page.waitForSelector('#w_prime_balance-chart[data-drawn]');
    t.deepEqual((await page.$$eval('#timeseries .ts-chart', (els: any[]) => els.map((e) => e.dataset.channel))).slice(0, 2), [
      'power',
      'w_prime_balance',
    ]);
    const wPrime = (await api(suite.service, token, 'GET', `/api/v1/activities/${id}/data?metrics=w_prime_balance&format=json`)).body
      .w_prime_balance as number[];
    const charted = (await page.$eval('#w_prime_balance-chart', (el: any) => Array.from(el.chart.data[1]))) as number[];
    t.is(charted.length, wPrime.length);
    t.true(
      charted.every((v, i) => Math.abs(v - wPrime[i]! / 1000) < 1e-9),
      'the chart draws the API’s W′ balance in kJ',
    );
    t.true(Math.abs(Math.min(...wPrime) - details.w_prime_balance_min) < 1e-6);
    await phoneAndDesktop(t, page, 'activity-load');
    await page.context().close();
    t.deepEqual(errors, []);
    t.deepEqual(csp, []);
  },
);

test.serial('with no training stress at all, home points to Settings → Thresholds instead of the chart', async (t) => {
  const { user, token } = await athlete();
  const id = await uploadRide(token, new Date(`${day(-2)}T08:00:00Z`));
  const details = await computed(token, id);
  t.is(details.training_stress.score, null);
  const { page } = await openPage(suite.browser);
  const errors = collectErrors(page);
  await signIn(page, suite.service.url, user.email, '/');
  await page.waitForSelector('#fitness[data-state="empty"]');
  t.true(await page.isVisible('#fitness-empty'));
  t.true(await page.isHidden('#fitness-chart'));
  t.true(await page.isHidden('#fitness-ranges'));
  await page.click('#fitness-thresholds-link');
  await page.waitForURL((u) => u.pathname === '/settings/thresholds');

  await page.goto(`${suite.service.url}/activities/${id}`);
  await page.waitForSelector('#training-load[data-state="ready"]');
  t.is((await page.textContent('#stress-score'))?.trim(), `None: ${details.training_stress.reason}.`);
  t.truthy(await page.$('#no-zones'));
  t.is(await page.$('#w_prime_balance-chart'), null, 'no W′ balance without critical power and W′');
  await page.context().close();
  t.deepEqual(errors, []);
});

test.serial('Settings → Thresholds adds and deletes entries, says a refused CP next to its field, and lists a lab test’s', async (t) => {
  const { user, token } = await athlete();
  const lab = await api(suite.service, token, 'POST', '/api/v1/tests/', {
    sport: 'cycling',
    start: '2024-05-01T09:00:00Z',
    title: 'Spring CP test',
    results: { critical_power: 280, w_prime: 18000 },
  });
  t.is(lab.status, 201, JSON.stringify(lab.body));
  const { page, csp } = await openPage(suite.browser);
  const errors = collectErrors(page, [{ url: `${suite.service.url}/settings/thresholds`, status: 422 }]);
  await page.setViewportSize(DESKTOP);
  await signIn(page, suite.service.url, user.email, '/settings');
  await page.click('nav.settings-nav a:has-text("Thresholds")');
  await page.waitForURL((u) => u.pathname === '/settings/thresholds');
  t.truthy(await page.$('#no-thresholds'));
  const labRow = page.locator(`#test-thresholds tr[data-test-id="${lab.body.id}"]`);
  t.is((await labRow.locator('td[data-field="critical_power"]').textContent())?.trim(), '280 W');
  t.is((await labRow.locator('td[data-field="w_prime"]').textContent())?.trim(), '18.0 kJ');
  t.is(await labRow.locator('a').getAttribute('href'), `/tests/${lab.body.id}`);
  t.is((await labRow.locator('a').textContent())?.trim(), 'Spring CP test');

  // A running entry: the threshold pace typed as the user reads it (min/km), stored as a speed.
  await page.fill('#sport', 'running');
  t.is((await page.textContent('label[for="critical_speed"]'))?.trim(), 'Threshold pace (min/km)');
  await page.fill('#valid_from', '2024-02-01');
  await page.fill('#critical_speed', '4:00');
  await page.fill('#threshold_heart_rate', '170');
  await page.click('#add-threshold-submit');
  await page.waitForURL((u) => u.pathname === '/settings/thresholds' && u.search === '?added=1');
  let stored = (await api(suite.service, token, 'GET', '/api/v1/profile/thresholds')).body;
  t.is(stored.thresholds.length, 1);
  t.like(stored.thresholds[0], { sport: 'running', valid_from: '2024-02-01', threshold_heart_rate: 170, critical_power: null });
  t.true(Math.abs(stored.thresholds[0].critical_speed - 1000 / 240) < 1e-9);
  t.deepEqual(
    stored.from_tests.map((e: { test_id: string }) => e.test_id),
    [lab.body.id],
  );
  const row = page.locator('#thresholds tr[data-sport="running"][data-valid-from="2024-02-01"]');
  t.is((await row.locator('td[data-field="critical_speed"]').textContent())?.trim(), '4:00 /km');
  t.is((await row.locator('td[data-field="threshold_heart_rate"]').textContent())?.trim(), '170 bpm');

  // A CP of 0: the API's bounds, said next to the field; everything typed is still there.
  await page.fill('#sport', 'cycling');
  await page.fill('#valid_from', '2024-03-01');
  await page.fill('#critical_power', '0');
  await page.fill('#w_prime', '20');
  await page.click('#add-threshold-submit');
  await page.waitForSelector('#critical_power-error');
  t.is((await page.textContent('#critical_power-error'))?.trim(), 'Critical power must be between 1 and 2500 W.');
  t.is(await page.getAttribute('#critical_power', 'aria-invalid'), 'true');
  t.deepEqual(await Promise.all(['#sport', '#valid_from', '#critical_power', '#w_prime'].map((s) => page.inputValue(s))), [
    'cycling',
    '2024-03-01',
    '0',
    '20',
  ]);
  await phoneAndDesktop(t, page, 'settings-thresholds');
  t.is((await api(suite.service, token, 'GET', '/api/v1/profile/thresholds')).body.thresholds.length, 1, 'nothing stored');

  await page.fill('#critical_power', '265');
  await page.click('#add-threshold-submit');
  await page.waitForURL((u) => u.search === '?added=1');
  stored = (await api(suite.service, token, 'GET', '/api/v1/profile/thresholds')).body;
  t.deepEqual(
    stored.thresholds.map((e: { sport: string; critical_power: number | null; w_prime: number | null }) => [
      e.sport,
      e.critical_power,
      e.w_prime,
    ]),
    [
      ['cycling', 265, 20000],
      ['running', null, null],
    ],
  );

  // A post from another site with the session's cookie: refused, nothing deleted.
  const cookie = (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
  const cross = await fetch(`${suite.service.url}/settings/thresholds/delete`, {
    method: 'POST',
    headers: { origin: 'https://evil.example', cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ sport: 'running', valid_from: '2024-02-01' }),
    redirect: 'manual',
  });
  t.is(cross.status, 403);
  t.is((await api(suite.service, token, 'GET', '/api/v1/profile/thresholds')).body.thresholds.length, 2);

  await page.click('#thresholds tr[data-sport="running"] button');
  await page.waitForURL((u) => u.search === '?deleted=1');
  stored = (await api(suite.service, token, 'GET', '/api/v1/profile/thresholds')).body;
  t.deepEqual(
    stored.thresholds.map((e: { sport: string }) => e.sport),
    ['cycling'],
  );
  t.is(await page.locator('#thresholds tbody tr').count(), 1);
  await page.context().close();
  t.deepEqual(errors, []);
  t.deepEqual(csp, []);
});

test.serial(
  'acting as someone, Settings → Thresholds is theirs: a manager adds a managed user’s entry; a read-only coach may not',
  async (t) => {
    const base = suite.service.url;
    const manager = await createTestUser(suite.service, { first_name: 'Maria', last_name: 'Manager' });
    const managerToken = await tokenFor(suite.service, manager, ['data:read', 'data:write']);
    const kid = (await api(suite.service, managerToken, 'POST', '/api/v1/users/', { first_name: 'Kim', last_name: 'Kid' })).body
      .id as string;
    const { page } = await openPage(suite.browser);
    const errors = collectErrors(page, [{ url: `${base}/settings/thresholds`, status: 403 }]);
    await signIn(page, base, manager.email, '/settings/managed-users');
    await page.waitForURL((u) => u.pathname === '/settings/managed-users');
    await page.click(`#act-as-${kid}`);
    await page.waitForURL((u) => u.pathname === '/activities');
    await page.goto(`${base}/settings/thresholds`);
    t.is((await page.textContent('.thresholds-page h2'))?.trim(), "Kim Kid's entries");
    await page.fill('#sport', 'cycling');
    await page.fill('#valid_from', '2024-01-01');
    await page.fill('#critical_power', '240');
    await page.click('#add-threshold-submit');
    await page.waitForURL((u) => u.search === '?added=1');
    const rows = (user: string) =>
      suite.service.deps.db.selectFrom('thresholds').select(['sport', 'critical_power']).where('user_id', '=', user).execute();
    t.deepEqual(await rows(kid), [{ sport: 'cycling', critical_power: 240 }]);
    t.deepEqual(await rows(manager.id), [], 'the manager’s own history is untouched');
    await page.click('#stop-acting');

    // A coach with read access: the athlete's entries shown, a post refused.
    const athlete = await createTestUser(suite.service, { first_name: 'Anna', last_name: 'Athlete' });
    const athleteToken = await tokenFor(suite.service, athlete, ['data:read', 'data:write']);
    await api(suite.service, athleteToken, 'PUT', '/api/v1/profile/thresholds', { thresholds: [CYCLING] });
    const teamId = (await api(suite.service, managerToken, 'POST', '/api/v1/teams/', { name: 'Coached' })).body.id as string;
    await api(suite.service, athleteToken, 'POST', `/api/v1/teams/${teamId}/authorize`, { scopes: ['data:read'] });
    await page.goto(`${base}/teams/${teamId}`);
    await page.click(`#act-as-${athlete.id}`);
    await page.waitForSelector('#acting-banner');
    await page.goto(`${base}/settings/thresholds`);
    t.is(await page.locator('#thresholds tr[data-sport="cycling"][data-valid-from="2020-01-01"]').count(), 1);
    await page.fill('#valid_from', '2024-01-01');
    await page.fill('#critical_power', '300');
    await page.click('#add-threshold-submit');
    await page.waitForSelector('p.error[role="alert"]');
    t.regex((await page.textContent('p.error[role="alert"]')) ?? '', /read access only/);
    t.is((await api(suite.service, athleteToken, 'GET', '/api/v1/profile/thresholds')).body.thresholds.length, 1, 'nothing stored');
    await page.context().close();
    t.deepEqual(errors, []);
  },
);
