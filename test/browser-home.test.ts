import test from 'ava';
import type { Page } from 'playwright-core';
import { browserSuite, openPage, signIn } from './helpers/browser.ts';
import { api, uploadAndWait } from './helpers/activities.ts';
import { buildActivityFit } from './helpers/fit-builder.ts';
import { expectedCurve } from './helpers/curve-points.ts';
import { chartsResized, collectErrors, DESKTOP, overflow, PHONE, screenshot } from './helpers/page-checks.ts';
import { daysAgo, RIDES, seedTraining, type Seeded } from './helpers/training-seed.ts';
import { createTestUser } from './helpers/users.ts';

const suite = browserSuite(test, { workers: true });
let seed: Seeded;
let today: string;
test.serial.before(async () => {
  seed = await seedTraining(suite.service);
  // A short ride that started 20 minutes ago: this week's training.
  const start = new Date(Date.now() - 20 * 60_000);
  start.setUTCMilliseconds(0);
  const [source] = await uploadAndWait(suite.service, seed.token, [
    { name: 'today.fit', bytes: buildActivityFit({ sessions: [{ sport: 'cycling', start, seconds: 600 }] }) },
  ]);
  today = source.activity_ids[0];
});

async function chartState(page: Page, selector: string) {
  await page.waitForSelector(`${selector}[data-drawn]`);
  return page.$eval(selector, (el: any) => ({
    labels: el.chart.series.map((s: { label: string }) => s.label) as string[],
    data: el.chart.data.map((a: ArrayLike<number | null>) => Array.from(a)) as (number | null)[][],
  }));
}

const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
const weekdayOf = (day: string) => (new Date(`${day}T00:00:00Z`).getUTCDay() + 6) % 7;
const isoHours = (iso: string) => {
  const m = /^PT(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?$/.exec(iso)!;
  return (Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0)) / 3600;
};

test.serial('home shows the latest activities, the 90-day curve and this week against the template week', async (t) => {
  const { page } = await openPage(suite.browser);
  const errors = collectErrors(page);
  await page.setViewportSize(DESKTOP);
  await signIn(page, suite.service.url, seed.user.email, '/');
  await page.waitForSelector('#latest-activities li');

  const latest = (await api(suite.service, seed.token, 'GET', '/api/v1/activities/?limit=5')).body as { id: string }[];
  t.is(latest[0]!.id, today, 'the ride of today comes first');
  t.deepEqual(
    await page.$$eval('#latest-activities li', (lis: any[]) => lis.map((li) => li.querySelector('a').getAttribute('href'))),
    latest.map((a) => `/activities/${a.id}`),
  );
  t.true(await page.isHidden('#home-start'), 'no first steps for a person with activities');

  const curve = await chartState(page, '#home-curve-chart');
  const frame = (
    await api(
      suite.service,
      seed.token,
      'GET',
      `/api/v1/activities/longitudinal-mean-max?sport=cycling&metric=power&start=${daysAgo(89)}&end=${daysAgo(0)}&format=json`,
    )
  ).body;
  const expected = expectedCurve(frame);
  t.deepEqual(curve.labels, ['Duration', 'Last 90 days']);
  t.deepEqual(
    curve.data[0],
    expected.map((p) => p.duration),
  );
  t.deepEqual(
    curve.data[1],
    expected.map((p) => p.value),
  );
  t.is(Math.max(...expected.map((p) => p.value)), Math.round(800 * RIDES[2].scale));
  t.is(await page.getAttribute('#home-curve-link', 'href'), '/curves?sport=cycling&metric=power&range=90d');

  const week = await chartState(page, '#home-week-chart');
  t.deepEqual(week.labels.slice(1), ['Template (average)', 'This week']);
  const template = (await api(suite.service, seed.token, 'GET', '/api/v1/profile/template-week')).body;
  t.deepEqual(
    week.data[1],
    WEEKDAYS.map((d) => isoHours(template[d].avg_training_duration)),
  );
  const day = daysAgo(0);
  const monday = daysAgo(weekdayOf(day));
  const thisWeek = (await api(suite.service, seed.token, 'GET', `/api/v1/activities/?start=${monday}&end=${day}&limit=1000`)).body as {
    start: string;
    end: string;
    start_local: string;
  }[];
  const hours: (number | null)[] = WEEKDAYS.map((_, i) => (i <= weekdayOf(day) ? 0 : null));
  for (const a of thisWeek) hours[weekdayOf(a.start_local.slice(0, 10))]! += (Date.parse(a.end) - Date.parse(a.start)) / 3_600_000;
  t.deepEqual(week.data[2], hours);
  if (thisWeek.some((a) => a.start_local.startsWith(day))) t.true(hours[weekdayOf(day)]! >= 600 / 3600, "today's ride counts today");
  t.true((await screenshot(page, 'home-desktop')) > 0);

  await page.setViewportSize(PHONE);
  await chartsResized(page);
  t.true((await overflow(page)) <= 0, 'no horizontal overflow at 390 px');
  t.true((await screenshot(page, 'home-phone')) > 0);

  await page.click(`#latest-activities li a[href="/activities/${today}"]`);
  await page.waitForURL((u) => u.pathname === `/activities/${today}`);
  t.is(await page.textContent('#activity-id'), today);
  await page.context().close();
  t.deepEqual(errors, []);
});

test.serial('a fresh account sees what to do first: upload, connect an app, create a token', async (t) => {
  const fresh = await createTestUser(suite.service);
  const { page } = await openPage(suite.browser);
  const errors = collectErrors(page);
  await page.setViewportSize(PHONE);
  await signIn(page, suite.service.url, fresh.email, '/');
  await page.waitForSelector('#home-start:not([hidden])');
  t.is(await page.getAttribute('#start-upload', 'href'), '/upload');
  t.is(await page.getAttribute('#start-apps', 'href'), '/apps');
  t.is(await page.getAttribute('#start-token', 'href'), '/settings/tokens');
  t.true(await page.isHidden('#home-training'));
  t.true((await overflow(page)) <= 0);
  t.true((await screenshot(page, 'home-empty-phone')) > 0);
  await page.click('#start-token');
  await page.waitForURL((u) => u.pathname === '/settings/tokens');
  await page.goBack();
  await page.click('#start-apps');
  await page.waitForURL((u) => u.pathname === '/apps');
  t.regex(
    (await page.textContent('#no-applications'))!,
    /listed here once its developer publishes it/,
    'the empty directory says how an application gets listed',
  );
  t.is(await page.getAttribute('#no-applications a[href="/settings/applications"]', 'href'), '/settings/applications');
  t.true((await overflow(page)) <= 0);
  await page.context().close();
  t.deepEqual(errors, []);
});

test.serial('signed out, home invites to sign up or sign in', async (t) => {
  const res = await fetch(`${suite.service.url}/`);
  t.is(res.status, 200);
  const body = await res.text();
  t.regex(body, /<a href="\/signup">Create an account<\/a> or <a href="\/signin">sign in<\/a>/);
  t.notRegex(body, /home\.js/, 'no script for a signed-out visitor');
});
