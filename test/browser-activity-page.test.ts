import test from 'ava';
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { browserSuite, openPage, signIn } from './helpers/browser.ts';
import { collectErrors, PHONE, phoneAndDesktop } from './helpers/page-checks.ts';
import { createTestUser, tokenFor } from './helpers/users.ts';
import { api, uploadAndWait } from './helpers/activities.ts';
import { fixturesDir } from './helpers/fixtures.ts';

const suite = browserSuite(test, { workers: true });

const fit = (name: string) => ({ name, bytes: new Uint8Array(readFileSync(`${fixturesDir()}/fit/${name}`)) });

/** The channels the page charts over time, in its order (static/activity-timeseries.js). */
const CHARTED = ['power', 'heart_rate', 'speed', 'cadence', 'altitude', 'temperature', 'core_temperature', 'smo2', 'respiration_rate'];

type Frame = Record<string, (number | string | null)[]>;

async function chartState(page: Page, selector: string) {
  return page.$eval(selector, (el) => {
    const chart = (el as any).chart;
    return {
      series: chart.series.length as number,
      x: Array.from(chart.data[0] as ArrayLike<number>),
      y: Array.from(chart.data[1] as ArrayLike<number | null>),
      min: chart.scales.x.min as number,
      max: chart.scales.x.max as number,
    };
  });
}

test('a ride with power, heart rate and GPS: every channel over time, the route, the mean-max curve (a point zooms the time series to its best) and the AWD', async (t) => {
  const user = await createTestUser(suite.service);
  const token = await tokenFor(suite.service, user, ['data:read', 'data:write']);
  const [source] = await uploadAndWait(suite.service, token, [fit('4078723797.fit')]);
  const id: string = source.activity_ids[0];
  const activity = (await api(suite.service, token, 'GET', `/api/v1/activities/${id}`)).body;
  const channels = CHARTED.filter((c) => activity.metrics.includes(c));
  t.deepEqual(channels, ['power', 'heart_rate', 'speed', 'cadence', 'altitude', 'temperature']);
  const frame: Frame = (
    await api(
      suite.service,
      token,
      'GET',
      `/api/v1/activities/${id}/data?format=json&metrics=${[...channels, 'latitude', 'longitude'].join(',')}`,
    )
  ).body;
  const rows = frame.timestamp!.length;
  t.is(rows, 8357);
  const meanMax: Frame = (
    await api(suite.service, token, 'GET', `/api/v1/activities/${id}/mean-max?format=json&durations=all&metric=power`)
  ).body;
  const awd: Frame = (await api(suite.service, token, 'GET', `/api/v1/activities/${id}/accumulated-work-duration?format=json&metric=power`))
    .body;

  const { page, csp } = await openPage(suite.browser);
  const errors = collectErrors(page);
  await page.setViewportSize({ width: 1280, height: 900 });
  await signIn(page, suite.service.url, user.email, `/activities/${id}`);
  await page.waitForURL((u) => u.pathname === `/activities/${id}`);
  await page.waitForSelector('#activity-charts[data-state=ready]');
  for (const c of channels) await page.waitForSelector(`#${c}-chart[data-drawn]`);
  await page.waitForSelector('#mean-max-chart[data-drawn]');
  await page.waitForSelector('#awd-chart[data-drawn]');
  t.true(await page.$eval('#charts-status', (el) => (el as unknown as { hidden: boolean }).hidden));

  // One chart per recorded channel, each with every row of the API's frame (pauses as gaps).
  t.deepEqual(
    await page.$$eval('#timeseries .ts-chart', (els) =>
      els.map((el) => (el as unknown as { dataset: Record<string, string> }).dataset.channel),
    ),
    channels,
  );
  const t0 = Date.parse(activity.start);
  for (const c of channels) {
    const state = await chartState(page, `#${c}-chart`);
    t.is(state.series, 2, c);
    t.is(state.x.length, rows, c);
    t.is(state.y.length, rows, c);
    t.is(state.x[0], (Date.parse(frame.timestamp![0] as string) - t0) / 1000);
    t.is(state.y.filter((v) => v !== null).length, frame[c]!.filter((v) => v !== null).length, `${c}: same samples`);
  }
  t.deepEqual((await chartState(page, '#power-chart')).y.slice(0, 500), frame.power!.slice(0, 500));

  // The route: one polyline point per row with a position.
  const positions = frame.latitude!.filter((v, i) => v !== null && frame.longitude![i] !== null).length;
  t.true(positions > 8000);
  t.is(await page.$$eval('#route svg polyline', (els) => els.length), 1);
  t.is(
    await page.$eval('#route svg polyline', (el) => (el as unknown as { points: { numberOfItems: number } }).points.numberOfItems),
    positions,
  );

  // The mean-max curve: every duration of the API's frame, on a log axis; the AWD: every level.
  const mm = await chartState(page, '#mean-max-chart');
  t.is(mm.x.length, meanMax.duration!.length);
  t.deepEqual(mm.x, meanMax.duration);
  t.deepEqual(mm.y, meanMax.power);
  t.is(await page.$eval('#mean-max-chart', (el) => (el as any).chart.scales.x.distr), 3);
  const awdState = await chartState(page, '#awd-chart');
  t.is(awdState.x.length, awd.duration!.length);
  t.deepEqual(awdState.x, [...awd.power!].reverse());
  t.deepEqual(awdState.y, [...awd.duration!].reverse());

  // Hover over the power chart: every chart's legend reads its channel at that instant.
  const box = (await page.$('#power-chart .u-over'))!;
  await box.scrollIntoViewIfNeeded();
  const over = (await box.boundingBox())!;
  await page.mouse.move(over.x + over.width * 0.4, over.y + over.height / 2);
  const idx = await page.$eval('#power-chart', (el) => (el as any).chart.cursor.idx as number);
  t.true(idx > 0 && idx < rows);
  const legend = (c: string) => page.$eval(`#${c}-chart .u-legend .u-series:nth-child(2) .u-value`, (el) => el.textContent);
  t.is(await legend('power'), frame.power![idx] === null ? '–' : (frame.power![idx] as number).toFixed(0));
  t.is(await legend('heart_rate'), frame.heart_rate![idx] === null ? '–' : (frame.heart_rate![idx] as number).toFixed(0));
  t.is(await legend('speed'), frame.speed![idx] === null ? '–' : ((frame.speed![idx] as number) * 3.6).toFixed(1));
  t.is(await page.$eval('#heart_rate-chart', (el) => (el as any).chart.cursor.idx), idx, 'the cursors are synced');
  t.is(
    await page.$eval('#route .route-cursor', (el) => el.getAttribute('visibility')),
    frame.latitude![idx] === null ? 'hidden' : 'visible',
  );

  // Click the 5-minute point of the mean-max curve: every time-series chart shows that best's window.
  // (Durations are every 5 s around 5 min, under a pixel apart on the log axis: the row the cursor
  // snapped to is the one clicked.)
  const i300 = meanMax.duration!.indexOf(300);
  await page.$eval('#mean-max-chart', (el) => el.scrollIntoView({ block: 'center' }));
  const point = await page.$eval(
    '#mean-max-chart',
    (el, [d, v]) => {
      const chart = (el as any).chart;
      const r = chart.over.getBoundingClientRect();
      return { x: r.left + chart.valToPos(d, 'x'), y: r.top + chart.valToPos(v, 'y') };
    },
    [300, meanMax.power![i300] as number],
  );
  await page.mouse.click(point.x, point.y);
  const picked = await page.$eval('#mean-max-chart', (el) => (el as any).chart.cursor.idx as number);
  const duration = meanMax.duration![picked] as number;
  t.true(Math.abs(duration - 300) <= 10, `clicked near 5 min: ${duration} s`);
  const best = (Date.parse(meanMax.start![picked] as string) - t0) / 1000;
  for (const c of channels) {
    const s = await chartState(page, `#${c}-chart`);
    t.is(s.min, best, `${c} zoomed to the best's start`);
    t.is(s.max, best + duration, `${c} zoomed to the best's end`);
  }
  t.true(await page.isVisible('#best-window'));
  const m = Math.floor(duration / 60);
  const label = `${m}:${String(duration % 60).padStart(2, '0')}`;
  t.regex(
    (await page.textContent('#best-window-text')) ?? '',
    new RegExp(`^Best ${label}: ${Math.round(meanMax.power![picked] as number)} W`),
  );

  // "Whole activity" shows every row again.
  await page.click('#reset-zoom');
  for (const c of channels) {
    const s = await chartState(page, `#${c}-chart`);
    t.is(s.min, s.x[0]!);
    t.is(s.max, s.x[rows - 1]!);
  }
  t.false(await page.isVisible('#best-window'));

  // Dragging across one chart zooms them all; double-clicking shows the whole activity.
  const hrOver = (await page.$('#heart_rate-chart .u-over'))!;
  await hrOver.scrollIntoViewIfNeeded();
  const hr = (await hrOver.boundingBox())!;
  await page.mouse.move(hr.x + hr.width * 0.2, hr.y + 20);
  await page.mouse.down();
  await page.mouse.move(hr.x + hr.width * 0.5, hr.y + 20, { steps: 5 });
  await page.mouse.up();
  const zoomed = await chartState(page, '#heart_rate-chart');
  t.true(zoomed.max - zoomed.min < (zoomed.x[rows - 1]! - zoomed.x[0]!) * 0.5);
  for (const c of channels) {
    const s = await chartState(page, `#${c}-chart`);
    t.deepEqual([s.min, s.max], [zoomed.min, zoomed.max], `${c} follows the zoom`);
  }
  await page.mouse.dblclick(hr.x + hr.width * 0.5, hr.y + 20);
  const whole = await chartState(page, '#power-chart');
  t.deepEqual([whole.min, whole.max], [whole.x[0], whole.x[rows - 1]]);

  await phoneAndDesktop(t, page, 'activity-page-power-gps');
  // The list of activities fits a phone too (its table scrolls inside its box).
  await page.setViewportSize(PHONE);
  await page.goto(`${suite.service.url}/activities`);
  t.truthy(await page.$(`tr[data-activity-id="${id}"]`));
  t.true(((await page.evaluate('document.documentElement.scrollWidth')) as number) <= 390, 'the list fits 390 px');
  await page.context().close();
  t.deepEqual(errors, [], 'no console or page errors');
  t.deepEqual(csp, [], 'no CSP violations');
});

test('a ride without power: laps as bands, the speed mean-max curve, heart rate AWD on request', async (t) => {
  const user = await createTestUser(suite.service);
  const token = await tokenFor(suite.service, user, ['data:read', 'data:write']);
  const [source] = await uploadAndWait(suite.service, token, [fit('4801048867.fit')]);
  const id: string = source.activity_ids[0];
  const activity = (await api(suite.service, token, 'GET', `/api/v1/activities/${id}`)).body;
  t.is(activity.laps.length, 8);
  const speed: Frame = (await api(suite.service, token, 'GET', `/api/v1/activities/${id}/mean-max?format=json&durations=all`)).body;
  t.truthy(speed.speed, 'the API falls back to speed');
  const hrAwd: Frame = (
    await api(suite.service, token, 'GET', `/api/v1/activities/${id}/accumulated-work-duration?format=json&metric=heart_rate`)
  ).body;

  const { page, csp } = await openPage(suite.browser);
  const errors = collectErrors(page);
  await signIn(page, suite.service.url, user.email, `/activities/${id}`);
  await page.waitForSelector('#mean-max-chart[data-drawn]');
  await page.waitForSelector('#awd-chart[data-drawn]');
  t.is(
    await page.$$eval('#timeseries .ts-chart', (els) =>
      els.map((el) => (el as unknown as { dataset: Record<string, string> }).dataset.channel).join(','),
    ),
    'heart_rate,speed,altitude,temperature',
  );
  t.is(await page.getAttribute('#heart_rate-chart', 'data-laps'), '8');
  t.is(
    await page.$$eval('#mean-max-metric option', (els) => els.map((el) => (el as unknown as { value: string }).value).join(',')),
    'speed',
  );
  const mm = await chartState(page, '#mean-max-chart');
  t.deepEqual(mm.x, speed.duration);
  t.deepEqual(
    mm.y.map((v) => Math.round((v as number) * 1000)),
    speed.speed!.map((v) => Math.round((v as number) * 3.6 * 1000)),
    'shown in km/h',
  );

  await page.selectOption('#awd-metric', 'heart_rate');
  await page.waitForFunction((n) => {
    const el = (globalThis as any).document.getElementById('awd-chart');
    return el.chart?.data[0].length === n && el.dataset.drawn === 'true';
  }, hrAwd.duration!.length);
  t.deepEqual((await chartState(page, '#awd-chart')).x, [...hrAwd.heart_rate!].reverse());

  await phoneAndDesktop(t, page, 'activity-page-laps');
  await page.context().close();
  t.deepEqual(errors, [], 'no console or page errors');
  t.deepEqual(csp, [], 'no CSP violations');
});

test('an activity without a position or a curve metric: no route, no curves, a chart of what it has', async (t) => {
  const user = await createTestUser(suite.service);
  const token = await tokenFor(suite.service, user, ['data:read', 'data:write']);
  const [source] = await uploadAndWait(suite.service, token, [fit('moxy.fit')]);
  const id: string = source.activity_ids[0];

  const { page, csp } = await openPage(suite.browser);
  const errors = collectErrors(page);
  await signIn(page, suite.service.url, user.email, `/activities/${id}`);
  await page.waitForSelector('#smo2-chart[data-drawn]');
  const frame: Frame = (await api(suite.service, token, 'GET', `/api/v1/activities/${id}/data?format=json&metrics=smo2`)).body;
  t.is((await chartState(page, '#smo2-chart')).x.length, frame.timestamp!.length);
  t.is(await page.$('#route'), null);
  t.is(await page.$('#mean-max-panel'), null);
  t.is(await page.$('#awd-panel'), null);
  await phoneAndDesktop(t, page, 'activity-page-smo2');
  await page.context().close();
  t.deepEqual(errors, [], 'no console or page errors');
  t.deepEqual(csp, [], 'no CSP violations');
});
