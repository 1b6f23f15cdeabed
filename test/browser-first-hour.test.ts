import test from 'ava';
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { api, uploadAndWait } from './helpers/activities.ts';
import { browserSuite, openPage, signIn } from './helpers/browser.ts';
import { fixturesDir } from './helpers/fixtures.ts';
import { buildActivityFit } from './helpers/fit-builder.ts';
import { collectErrors, DESKTOP, overflow, PHONE, screenshot } from './helpers/page-checks.ts';
import { createTestUser, tokenFor } from './helpers/users.ts';
import { findUserByEmail } from '../db/users.ts';

/**
 * An athlete whose only ride is years old (an imported history): every default view opens on it, or
 * says plainly where the data is with one click to it. Never a blank chart box without a sentence.
 */
const suite = browserSuite(test, { workers: true });
const RIDE_DAY = '2019-09-20'; // 4078723797.fit: a 2 h 19 min ride with power, 57.6 km
let email = '';

test.serial.before(async () => {
  const user = await createTestUser(suite.service);
  email = user.email;
  const token = await tokenFor(suite.service, user, ['data:read', 'data:write']);
  const [source] = await uploadAndWait(suite.service, token, [
    { name: 'old.fit', bytes: readFileSync(`${fixturesDir()}/fit/4078723797.fit`) },
  ]);
  const ride = (await api(suite.service, token, 'GET', `/api/v1/activities/${source.activity_ids[0]}`)).body as { start_local: string };
  if (!ride.start_local.startsWith(RIDE_DAY)) throw new Error(`the fixture's ride starts ${ride.start_local}, not on ${RIDE_DAY}`);
});

async function chart(page: Page, selector: string) {
  await page.waitForSelector(`${selector}[data-drawn]`);
  return page.$eval(selector, (el: any) => ({
    labels: el.chart.series.map((s: { label: string }) => s.label) as string[],
    points: el.chart.data.slice(1).map((a: ArrayLike<number | null>) => Array.from(a).filter((v) => v !== null).length) as number[],
  }));
}

const start90 = (day: string) => new Date(Date.parse(`${day}T00:00:00Z`) - 89 * 86_400_000).toISOString().slice(0, 10);

test.serial('home shows the 90 days up to the newest ride, and says so', async (t) => {
  const { page } = await openPage(suite.browser);
  const errors = collectErrors(page);
  await signIn(page, suite.service.url, email);
  await page.waitForURL(`${suite.service.url}/`);
  const drawn = await chart(page, '#home-curve-chart');
  t.deepEqual(drawn.labels, ['Duration', `90 days to ${RIDE_DAY}`]);
  t.true(drawn.points[0]! > 100, 'a curve, not a blank box');
  t.is(await page.textContent('#home-curve-heading'), `Best efforts of the 90 days up to ${RIDE_DAY}`);
  t.is(
    await page.textContent('#home-curve-status'),
    `No cycling in the last 90 days: your newest is from ${RIDE_DAY}, so these are the 90 days up to it.`,
  );
  t.is(
    await page.getAttribute('#home-curve-link', 'href'),
    `/curves?sport=cycling&metric=power&range=custom&start=${start90(RIDE_DAY)}&end=${RIDE_DAY}`,
  );
  await page.waitForSelector('#home-week-status:not([hidden])');
  t.is(await page.textContent('#home-week-status'), 'No training this week nor in the 12 weeks before.');
  t.true(await page.isHidden('#home-week-chart'), 'no empty week chart');
  await page.setViewportSize(PHONE);
  t.true((await screenshot(page, 'first-hour-home-390')) > 0);
  await page.context().close();
  t.deepEqual(errors, []);
});

test.serial('curves open on a range that holds the newest ride; an empty range offers one click to the data', async (t) => {
  const { page } = await openPage(suite.browser);
  const errors = collectErrors(page);
  await signIn(page, suite.service.url, email, '/curves');
  await page.waitForURL((u) => u.pathname === '/curves' && u.searchParams.has('range'));
  t.is(
    new URL(page.url()).search,
    `?sport=cycling&metric=power&range=custom&start=${start90(RIDE_DAY)}&end=${RIDE_DAY}`,
    'opened without a range: the 90 days up to the newest ride',
  );
  const opened = await chart(page, '#curve-chart');
  t.true(opened.points[0]! > 100);
  t.regex((await page.textContent('#curve-status'))!, /the curve's points come from 1 activity/);
  t.true(await page.isHidden('#curve-way'));

  // The last 90 days asked for: empty, and the page says where the ride is, with a button to it.
  await page.click('#range-presets button[data-range="90d"]');
  await page.waitForSelector('#curve-way:not([hidden])');
  t.is(await page.textContent('#curve-status'), `Cycling, power: no activity in last 90 days; the newest is from ${RIDE_DAY}.`);
  t.is(await page.textContent('#way-latest'), `Show the 90 days up to ${RIDE_DAY}`);
  await page.click('#way-latest');
  await page.waitForURL((u) => u.searchParams.get('end') === RIDE_DAY);
  await page.waitForSelector(`#curve-chart[data-query*="end=${RIDE_DAY}"]`); // (the new range's chart, not the last one)
  t.true((await chart(page, '#curve-chart')).points[0]! > 100);
  await page.waitForSelector('#curve-way', { state: 'hidden' }); // (decided after the chart is drawn)
  t.true(await page.isHidden('#curve-way'));
  await page.context().close();
  t.deepEqual(errors, []);
});

test.serial(
  'on All time, fatigue states use the year up to the newest ride and the model says which 90 days it is fitted to',
  async (t) => {
    const { page } = await openPage(suite.browser);
    const errors = collectErrors(page);
    await signIn(page, suite.service.url, email, '/curves?sport=cycling&metric=power&range=all&after=500&model=1');
    await page.waitForURL((u) => u.pathname === '/curves');
    const drawn = await chart(page, '#curve-chart');
    const after = drawn.labels.indexOf('after 500 kJ');
    t.true(after > 0, drawn.labels.join(', '));
    t.true(drawn.points[after - 1]! > 10, 'the 1,800 kJ ride reached 500 kJ: a curve after it');
    const status = (await page.textContent('#curve-status'))!;
    t.notRegex(status, /No activity .* reached/);
    t.regex(status, new RegExp(`Fatigue states cover at most a year: here \\d{4}-\\d{2}-\\d{2} to ${RIDE_DAY}\\.`));
    await page.waitForSelector('#model-section:not([hidden])');
    // What the API fits to the 90 days up to the ride decides which note the page must show.
    const user = (await findUserByEmail(suite.service.deps.db, email))!;
    const token = await tokenFor(suite.service, user, ['data:read']);
    const fitted = (
      await api(suite.service, token, 'GET', `/api/v1/profile/intensity-duration-model?sport=cycling&metric=power&date=${RIDE_DAY}`)
    ).body as { parameters: unknown };
    const note = (await page.textContent('#model-note'))!;
    if (fitted.parameters) {
      t.is(
        note,
        `3-parameter critical power model fitted to the best efforts (up to 30 minutes) from ${start90(RIDE_DAY)} to ${RIDE_DAY}. It is fitted to those 90 days only, so it may lie below the curve of all time.`,
      );
      t.true(drawn.labels.includes(`Model (fitted ${start90(RIDE_DAY)} to ${RIDE_DAY})`));
    } else {
      t.is(note, `Too few best efforts from ${start90(RIDE_DAY)} to ${RIDE_DAY} (the model is fitted to 90 days) to fit it.`);
      t.false(drawn.labels.some((l) => l.startsWith('Model')));
    }
    await page.context().close();
    t.deepEqual(errors, []);
  },
);

test.serial('one duration format on every chart: the activity page and Curves label their duration axes alike', async (t) => {
  const { page } = await openPage(suite.browser);
  const errors = collectErrors(page);
  await signIn(page, suite.service.url, email, '/activities');
  await page.waitForURL((u) => u.pathname === '/activities');
  await page.click('a[href^="/activities/"]:not([href="/activities/"])');
  await page.waitForSelector('#mean-max-chart[data-drawn]');
  const ticks = [1, 15, 60, 300, 3600, 7200];
  const label = (selector: string) =>
    page.$eval(selector, (el: any, at: number[]) => el.chart.axes[0].values(el.chart, at, 0, 0, 0) as string[], ticks);
  const activityAxis = await label('#mean-max-chart');
  t.deepEqual(activityAxis, ['1 s', '15 s', '1:00', '5:00', '1:00:00', '2:00:00']);
  await page.goto(`${suite.service.url}/curves?sport=cycling&metric=power&range=all`);
  await page.waitForSelector('#curve-chart[data-drawn]');
  t.deepEqual(await label('#curve-chart'), activityAxis, 'Curves writes durations as the activity page does');
  await page.context().close();
  t.deepEqual(errors, []);
});

test.serial(
  'a compared range equal to the main one stays visible: compared and fatigue curves are dashed over the solid main curve',
  async (t) => {
    const { page } = await openPage(suite.browser);
    const errors = collectErrors(page);
    await signIn(
      page,
      suite.service.url,
      email,
      `/curves?sport=cycling&metric=power&range=all&compare=custom&compare_start=${start90(RIDE_DAY)}&compare_end=${RIDE_DAY}&after=500`,
    );
    await page.waitForURL((u) => u.pathname === '/curves');
    await page.waitForSelector('#curve-chart[data-drawn]');
    const series = await page.$eval('#curve-chart', (el: any) =>
      el.chart.series.slice(1).map((s: { label: string; dash?: number[] }, i: number) => ({
        label: s.label,
        dash: s.dash ?? null,
        points: Array.from(el.chart.data[i + 1] as ArrayLike<number | null>).filter((v) => v !== null).length,
      })),
    );
    t.is(series[0].dash, null, 'the main curve is solid');
    t.is(series[0].points, series[1].points, 'the compared range holds the same ride: the same curve');
    t.deepEqual(series[1].dash, [10, 6], 'the compared curve is dashed, so the main one shows between its dashes');
    t.deepEqual(series[2].dash, [4, 4], 'so is the fatigue state');
    t.true((await screenshot(page, 'first-hour-compare-equal-1280')) > 0);
    await page.context().close();
    t.deepEqual(errors, []);
  },
);

test.serial('on a phone, an empty range says where the ride is and its buttons fit and work', async (t) => {
  const { page } = await openPage(suite.browser);
  const errors = collectErrors(page);
  await page.setViewportSize(PHONE);
  await signIn(page, suite.service.url, email, '/curves?sport=cycling&metric=power&range=90d');
  await page.waitForSelector('#curve-way:not([hidden])');
  t.true((await overflow(page)) <= 0);
  t.true((await screenshot(page, 'first-hour-empty-range-390')) > 0);
  await page.click('#way-all');
  await page.waitForURL((u) => u.searchParams.get('range') === 'all');
  await page.waitForSelector('#curve-chart[data-query*="range=all"]');
  await page.waitForSelector('#curve-way', { state: 'hidden' }); // (decided after the chart is drawn)
  t.true(await page.isHidden('#curve-way'));
  t.true((await overflow(page)) <= 0);
  await page.context().close();
  t.deepEqual(errors, []);
});

test.serial('a fatigue state no activity of its window reached offers the year up to the newest activity that did', async (t) => {
  // A short ride today: the last year now holds an activity, but none past 1,000 kJ.
  const user = (await findUserByEmail(suite.service.deps.db, email))!;
  const token = await tokenFor(suite.service, user, ['data:read', 'data:write']);
  const start = new Date(Date.now() - 3_600_000);
  start.setUTCMilliseconds(0);
  await uploadAndWait(suite.service, token, [
    { name: 'short.fit', bytes: buildActivityFit({ sessions: [{ sport: 'cycling', start, seconds: 600 }] }) },
  ]);

  const { page } = await openPage(suite.browser);
  const errors = collectErrors(page);
  await signIn(page, suite.service.url, email, '/curves?sport=cycling&metric=power&range=all&after=1000');
  await page.waitForURL((u) => u.pathname === '/curves');
  await page.waitForSelector('#way-after');
  t.regex((await page.textContent('#curve-status'))!, /No activity from \d{4}-\d{2}-\d{2} to \d{4}-\d{2}-\d{2} reached 1000 kJ/);
  t.is(await page.textContent('#way-after'), `Show the year up to ${RIDE_DAY}, when an activity passed 1000 kJ`);
  await page.click('#way-after');
  await page.waitForURL((u) => u.searchParams.get('end') === RIDE_DAY);
  await page.waitForSelector(`#curve-chart[data-query*="end=${RIDE_DAY}"]`);
  const drawn = await chart(page, '#curve-chart');
  const after = drawn.labels.indexOf('after 1000 kJ');
  t.true(drawn.points[after - 1]! > 10, 'drawn in that year');
  await page.waitForSelector('#way-after', { state: 'detached' }); // (the way forward is decided after the chart is drawn)
  await page.waitForSelector('#curve-way', { state: 'hidden' }); // (decided after the chart is drawn)
  t.true(await page.isHidden('#curve-way'));
  await page.context().close();
  t.deepEqual(errors, []);
});

test.serial(
  'the first-hour views at 1280 and 390 px: curves with compared and fatigue curves and the model, an empty range, home',
  async (t) => {
    const views = [
      {
        path: `/curves?sport=cycling&metric=power&range=custom&start=${start90(RIDE_DAY)}&end=${RIDE_DAY}&compare=all&after=500&model=1`,
        chart: '#curve-chart',
      },
      { path: '/curves?sport=cycling&metric=power&range=90d&after=500', chart: '#curve-chart' },
      { path: '/', chart: '#home-curve-chart' },
    ];
    for (const viewport of [DESKTOP, PHONE]) {
      const { page } = await openPage(suite.browser);
      const errors = collectErrors(page);
      await page.setViewportSize(viewport);
      await signIn(page, suite.service.url, email, '/activities');
      await page.waitForURL((u) => u.pathname === '/activities');
      for (const [i, view] of views.entries()) {
        await page.goto(`${suite.service.url}${view.path}`);
        await page.waitForSelector(`${view.chart}[data-drawn]`);
        await page.waitForLoadState('networkidle');
        t.true((await overflow(page)) <= 0, `${view.path} at ${viewport.width} px`);
        t.true((await screenshot(page, `first-hour-view${i}-${viewport.width}`)) > 0);
      }
      await page.goto(`${suite.service.url}${views[0]!.path}`);
      await page.waitForSelector('#model-section:not([hidden])');
      t.regex(
        (await page.textContent('#model-note'))!,
        new RegExp(`${start90(RIDE_DAY)} to ${RIDE_DAY}`),
        `the model's window at ${viewport.width} px`,
      );
      await page.context().close();
      t.deepEqual(errors, [], `no console error at ${viewport.width} px`);
    }
  },
);
