import test from 'ava';
import type { Page } from 'playwright-core';
import { browserSuite, openPage, signIn } from './helpers/browser.ts';
import { api } from './helpers/activities.ts';
import { chartsResized, collectErrors, DESKTOP, overflow, PHONE, screenshot } from './helpers/page-checks.ts';
import { daysAgo, RIDES, seedTraining, type Seeded } from './helpers/training-seed.ts';
import { expectedCurve, type Frame } from './helpers/curve-points.ts';

const suite = browserSuite(test, { workers: true });
let seed: Seeded;
test.serial.before(async () => {
  seed = await seedTraining(suite.service);
});

async function frame(path: string): Promise<Frame> {
  const res = await api(suite.service, seed.token, 'GET', `${path}&format=json`);
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

interface ChartState {
  labels: string[];
  data: (number | null)[][];
  query: string;
}

/** Wait until the chart shows the page's current URL query, then read its state. */
async function drawnChart(page: Page): Promise<ChartState> {
  await page.waitForFunction(() => {
    const w = globalThis as any;
    const el = w.document.querySelector('#curve-chart');
    return el?.dataset.drawn === 'true' && el.dataset.query === w.location.search.slice(1);
  });
  return page.$eval('#curve-chart', (el: any) => ({
    labels: el.chart.series.map((s: { label: string }) => s.label),
    data: el.chart.data.map((a: ArrayLike<number | null>) => Array.from(a)),
    query: el.dataset.query,
  }));
}

/** The (x, y) points a series drew (nulls from joining the curves' x values left out). */
function seriesPoints(chart: ChartState, series: number): { x: number; y: number }[] {
  const out: { x: number; y: number }[] = [];
  chart.data[series]!.forEach((y, i) => y !== null && y !== undefined && out.push({ x: chart.data[0]![i]!, y }));
  return out;
}

const curvePath = (start: string | null, extra = '') => `/api/v1/activities/longitudinal-mean-max?sport=cycling&metric=power${start ? `&start=${start}` : ''}&end=${daysAgo(0)}${extra}`;

test.serial('presets change the range in the URL and the chart, which draws what the API answers; back returns', async (t) => {
  const { page } = await openPage(suite.browser);
  const errors = collectErrors(page);
  await page.setViewportSize(DESKTOP);
  await signIn(page, suite.service.url, seed.user.email, '/');
  await page.click('header.site a:has-text("Curves")');
  await page.waitForURL((u) => u.pathname === '/curves');

  let chart = await drawnChart(page);
  let url = new URL(page.url());
  t.is(url.searchParams.get('sport'), 'cycling', 'the sport with power is chosen first');
  t.is(url.searchParams.get('metric'), 'power');
  t.is(url.searchParams.get('range'), '90d');
  t.deepEqual(chart.labels, ['Duration', 'Last 90 days']);
  const ninety = expectedCurve(await frame(curvePath(daysAgo(89))));
  t.deepEqual(seriesPoints(chart, 1), ninety.map((p) => ({ x: p.duration, y: p.value })));
  t.is(Math.max(...ninety.map((p) => p.value)), Math.round(800 * RIDES[2].scale), 'the 90 days hold the ride of 60 days ago');
  t.regex((await page.textContent('#curve-status')) ?? '', /points come from 1 activity \(last 90 days\)/);

  await page.click('#range-presets button:has-text("Last 6 weeks")');
  chart = await drawnChart(page);
  t.is(new URL(page.url()).searchParams.get('range'), '6w');
  t.is(await page.getAttribute('#range-presets button[data-range="6w"]', 'aria-pressed'), 'true');
  t.is(await page.inputValue('#start'), daysAgo(41));
  const sixWeeks = expectedCurve(await frame(curvePath(daysAgo(41))));
  t.deepEqual(seriesPoints(chart, 1), sixWeeks.map((p) => ({ x: p.duration, y: p.value })));
  t.is(Math.max(...seriesPoints(chart, 1).map((p) => p.y)), 800);

  await page.click('#range-presets button:has-text("This year")');
  chart = await drawnChart(page);
  t.is(new URL(page.url()).searchParams.get('range'), 'year');
  t.is(Math.max(...seriesPoints(chart, 1).map((p) => p.y)), Math.round(800 * RIDES[3].scale));

  await page.click('#range-presets button:has-text("All time")');
  chart = await drawnChart(page);
  t.is(new URL(page.url()).searchParams.get('range'), 'all');
  const all = expectedCurve(await frame(curvePath(null)));
  t.deepEqual(seriesPoints(chart, 1), all.map((p) => ({ x: p.duration, y: p.value })));
  t.is(Math.max(...all.map((p) => p.value)), Math.round(800 * RIDES[4].scale));
  t.true((await screenshot(page, 'curves-desktop')) > 0);

  // Back: the previous choice, in the URL, the controls and the chart.
  await page.goBack();
  chart = await drawnChart(page);
  t.is(new URL(page.url()).searchParams.get('range'), 'year');
  t.is(Math.max(...seriesPoints(chart, 1).map((p) => p.y)), Math.round(800 * RIDES[3].scale));
  t.is(await page.getAttribute('#range-presets button[data-range="year"]', 'aria-pressed'), 'true');

  // A custom range from the date inputs.
  await page.fill('#start', daysAgo(25));
  await page.fill('#end', daysAgo(15));
  await page.dispatchEvent('#end', 'change');
  chart = await drawnChart(page);
  url = new URL(page.url());
  t.is(url.searchParams.get('range'), 'custom');
  t.is(url.searchParams.get('start'), daysAgo(25));
  t.is(url.searchParams.get('end'), daysAgo(15));
  t.is(Math.max(...seriesPoints(chart, 1).map((p) => p.y)), Math.round(800 * RIDES[1].scale), 'only the ride of 20 days ago');

  await page.setViewportSize(PHONE);
  await page.reload();
  await drawnChart(page);
  t.true((await overflow(page)) <= 0, 'no horizontal overflow at 390 px');
  t.true((await screenshot(page, 'curves-phone')) > 0);
  await page.context().close();
  t.deepEqual(errors, []);
});

test.serial('two ranges compared, hover names the owning activity, fatigue states, the model and the value-indexed view', async (t) => {
  const { page } = await openPage(suite.browser);
  const errors = collectErrors(page);
  await page.setViewportSize(DESKTOP);
  await signIn(page, suite.service.url, seed.user.email, '/curves?sport=cycling&metric=power&range=6w&compare=all&after=100,300&model=1');
  let chart = await drawnChart(page);
  t.deepEqual(chart.labels, ['Duration', 'Last 6 weeks', 'All time', 'after 100 kJ', 'after 300 kJ', 'Model']);

  const sixWeeks = expectedCurve(await frame(curvePath(daysAgo(41))));
  const all = expectedCurve(await frame(curvePath(null)));
  t.deepEqual(seriesPoints(chart, 1), sixWeeks.map((p) => ({ x: p.duration, y: p.value })));
  t.deepEqual(seriesPoints(chart, 2), all.map((p) => ({ x: p.duration, y: p.value })));

  // Fatigue states: the API's by=duration frame at durations=all, one series per state.
  const after = await frame(curvePath(daysAgo(41), '&after=100,300&by=duration&durations=all'));
  for (const [series, state] of [[3, 100], [4, 300]] as const) {
    const rows = (after.after as number[]).map((a, i) => i).filter((i) => after.after![i] === state && after.power![i] !== null);
    t.true(rows.length > 10);
    t.deepEqual(seriesPoints(chart, series), rows.map((i) => ({ x: after.duration![i] as number, y: after.power![i] as number })), `after ${state} kJ`);
  }

  // The model: its curve and its parameters, as the API gives them.
  const model = await api(suite.service, seed.token, 'GET', `/api/v1/profile/intensity-duration-model?metric=power&date=${daysAgo(0)}&sport=cycling`);
  t.is(model.status, 200);
  t.truthy(model.body.parameters, 'enough efforts to fit');
  t.deepEqual(seriesPoints(chart, 5), model.body.curve.map((p: { duration: number; intensity: number }) => ({ x: p.duration, y: p.intensity })));
  t.is(await page.textContent('#model-parameters [data-parameter="critical"]'), `${Math.round(model.body.parameters.critical_intensity)} W`);
  t.is(await page.textContent('#model-parameters [data-parameter="work-capacity"]'), `${(model.body.parameters.work_capacity / 1000).toFixed(1)} kJ`);
  t.is(await page.textContent('#model-parameters [data-parameter="max"]'), `${Math.round(model.body.parameters.max_intensity)} W`);
  t.is(await page.textContent('#model-parameters [data-parameter="efforts"]'), String(model.body.parameters.efforts));

  // Hover at 1 s: each curve's best and the activity that owns it, linked.
  const at = await page.$eval('#curve-chart', (el: any) => ({ left: el.chart.valToPos(1, 'x'), top: el.chart.valToPos(500, 'y') }));
  const over = (await page.$('#curve-chart .u-over'))!;
  const box = (await over.boundingBox())!;
  await page.mouse.move(box.x + at.left + 1, box.y + at.top);
  await page.waitForSelector('#curve-readout li a.readout-activity');
  const lines = await page.$$eval('#curve-readout li', (lis: any[]) =>
    lis.map((li) => ({ text: li.textContent ?? '', href: li.querySelector('a')?.getAttribute('href') ?? null, duration: li.dataset.duration as string })),
  );
  t.is(lines.length, 5);
  t.is(lines[0]!.duration, String(sixWeeks[0]!.duration), "the curve's point nearest 1 s: its shortest");
  t.regex(lines[0]!.text, new RegExp(`^Last 6 weeks: 800 W for ${sixWeeks[0]!.duration} s`));
  t.is(lines[0]!.href, `/activities/${sixWeeks[0]!.activity}`);
  t.is(sixWeeks[0]!.activity, seed.rides[0]!, 'the 1 s best of the last 6 weeks is the ride of 10 days ago');
  t.regex(lines[1]!.text, new RegExp(`^All time: ${Math.round(800 * RIDES[4].scale)} W for ${all[0]!.duration} s`));
  t.is(lines[1]!.href, `/activities/${seed.rides[4]}`);
  t.is(lines[4]!.href, null, 'the model owns no activity');
  t.is((await api(suite.service, seed.token, 'GET', `/api/v1/activities/${seed.rides[4]}`)).status, 200);

  // The value-indexed view: x the level, y the longest duration at or above it, row for row.
  await page.check('#view-value');
  chart = await drawnChart(page);
  t.is(new URL(page.url()).searchParams.get('view'), 'value');
  const levels = await frame(curvePath(daysAgo(41)));
  const withDuration = (levels.power as number[]).map((p, i) => ({ x: p, y: levels.duration![i] as number })).filter((p) => p.y >= 1);
  t.deepEqual(seriesPoints(chart, 1), withDuration);
  t.is(chart.labels.length, 6);

  // Following the owner link opens the activity.
  await page.mouse.move(box.x + 20, box.y + 20);
  await page.waitForSelector('#curve-readout li a.readout-activity');
  const href = await page.getAttribute('#curve-readout li:first-child a.readout-activity', 'href');
  await page.click('#curve-readout li:first-child a.readout-activity');
  await page.waitForURL((u) => u.pathname === href);
  t.is(await page.textContent('#activity-id'), href!.split('/').pop()!);

  await page.goBack();
  await drawnChart(page);
  await page.setViewportSize(PHONE);
  await chartsResized(page);
  t.true((await overflow(page)) <= 0, 'no horizontal overflow at 390 px');
  t.true((await screenshot(page, 'curves-compare-phone')) > 0);
  await page.context().close();
  t.deepEqual(errors, []);
});

test.serial('a range without rides draws an empty chart; a fatigue state that is not a number is explained, not requested', async (t) => {
  const { page } = await openPage(suite.browser);
  const errors = collectErrors(page);
  await signIn(page, suite.service.url, seed.user.email, '/curves?sport=cycling&metric=power&range=6w');
  await drawnChart(page);
  // A range without rides: an empty chart and words saying so, no error.
  await page.goto(`${suite.service.url}/curves?sport=cycling&metric=power&range=custom&start=${daysAgo(3)}&end=${daysAgo(2)}`);
  const empty = await drawnChart(page);
  t.deepEqual(seriesPoints(empty, 1), []);
  t.regex((await page.textContent('#curve-status')) ?? '', /no power data/);

  await page.fill('#after', '100, lots');
  await page.dispatchEvent('#after', 'change');
  await page.waitForSelector('#curve-status.error');
  t.regex((await page.textContent('#curve-status')) ?? '', /non-negative numbers/);
  await page.context().close();
  t.deepEqual(errors, []);
});

test.serial('a person without activities is told to upload; signed out, /curves asks to sign in', async (t) => {
  const res = await fetch(`${suite.service.url}/curves`, { redirect: 'manual' });
  t.is(res.status, 303);
  t.is(res.headers.get('location'), '/signin?next=%2Fcurves');

  const { createTestUser } = await import('./helpers/users.ts');
  const fresh = await createTestUser(suite.service);
  const { page } = await openPage(suite.browser);
  const errors = collectErrors(page);
  await signIn(page, suite.service.url, fresh.email, '/curves');
  await page.waitForSelector('#curves-empty:not([hidden])');
  t.is(await page.getAttribute('#curves-empty a[href="/upload"]', 'href'), '/upload');
  t.true(await page.isHidden('#curves-main'));
  await page.context().close();
  t.deepEqual(errors, []);
});

test.serial('choosing a sport without power draws its speed curve, with fatigue states in metres', async (t) => {
  const { page } = await openPage(suite.browser);
  const errors = collectErrors(page);
  await signIn(page, suite.service.url, seed.user.email, '/curves?sport=cycling&metric=power&range=90d');
  await drawnChart(page);
  t.deepEqual(await page.$$eval('#sport option', (os: any[]) => os.map((o) => o.value)), ['', 'cycling', 'running', 'cycling.road']);
  await page.selectOption('#sport', 'running');
  let chart = await drawnChart(page);
  let url = new URL(page.url());
  t.is(url.searchParams.get('sport'), 'running');
  t.is(url.searchParams.get('metric'), 'speed', 'speed is the metric of a sport other than cycling');
  const speed = expectedCurve(await frame(`/api/v1/activities/longitudinal-mean-max?sport=running&metric=speed&start=${daysAgo(89)}&end=${daysAgo(0)}`), 'speed');
  t.deepEqual(seriesPoints(chart, 1), speed.map((p) => ({ x: p.duration, y: p.value })));
  t.is(Math.max(...speed.map((p) => p.value)), 5, 'the run holds 5 m/s for a minute');
  t.is(speed.find((p) => p.value === 5)!.duration, 60);

  await page.fill('#after', '1000');
  await page.dispatchEvent('#after', 'change');
  chart = await drawnChart(page);
  url = new URL(page.url());
  t.is(url.searchParams.get('after'), '1000');
  t.deepEqual(chart.labels, ['Duration', 'Last 90 days', 'after 1000 m']);
  const after = await frame(`/api/v1/activities/longitudinal-mean-max?sport=running&metric=speed&start=${daysAgo(89)}&end=${daysAgo(0)}&after=1000&by=intensity`);
  t.deepEqual(seriesPoints(chart, 2), expectedCurve(after, 'speed').map((p) => ({ x: p.duration, y: p.value })));
  t.is(await page.textContent('#after-unit'), 'm');
  await page.context().close();
  t.deepEqual(errors, []);
});
