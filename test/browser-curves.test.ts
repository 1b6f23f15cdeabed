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

const curvePath = (start: string | null, extra = '') =>
  `/api/v1/activities/longitudinal-mean-max?sport=cycling&metric=power${start ? `&start=${start}` : ''}&end=${daysAgo(0)}${extra}`;

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
  t.deepEqual(
    seriesPoints(chart, 1),
    ninety.map((p) => ({ x: p.duration, y: p.value })),
  );
  t.is(Math.max(...ninety.map((p) => p.value)), Math.round(800 * RIDES[2].scale), 'the 90 days hold the ride of 60 days ago');
  t.regex((await page.textContent('#curve-status')) ?? '', /points come from 1 activity \(last 90 days\)/);

  await page.click('#range-presets button:has-text("Last 6 weeks")');
  chart = await drawnChart(page);
  t.is(new URL(page.url()).searchParams.get('range'), '6w');
  t.is(await page.getAttribute('#range-presets button[data-range="6w"]', 'aria-pressed'), 'true');
  t.is(await page.inputValue('#start'), daysAgo(41));
  const sixWeeks = expectedCurve(await frame(curvePath(daysAgo(41))));
  t.deepEqual(
    seriesPoints(chart, 1),
    sixWeeks.map((p) => ({ x: p.duration, y: p.value })),
  );
  t.is(Math.max(...seriesPoints(chart, 1).map((p) => p.y)), 800);

  await page.click('#range-presets button:has-text("This year")');
  chart = await drawnChart(page);
  t.is(new URL(page.url()).searchParams.get('range'), 'year');
  t.is(Math.max(...seriesPoints(chart, 1).map((p) => p.y)), Math.round(800 * RIDES[3].scale));

  await page.click('#range-presets button:has-text("All time")');
  chart = await drawnChart(page);
  t.is(new URL(page.url()).searchParams.get('range'), 'all');
  const all = expectedCurve(await frame(curvePath(null)));
  t.deepEqual(
    seriesPoints(chart, 1),
    all.map((p) => ({ x: p.duration, y: p.value })),
  );
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
  t.deepEqual(chart.labels.slice(0, 5), ['Duration', 'Last 6 weeks', 'All time', 'after 100 kJ', 'after 300 kJ']);
  t.regex(chart.labels[5]!, /^Model \(fitted \d{4}-\d{2}-\d{2} to \d{4}-\d{2}-\d{2}\)$/, 'the model names the 90 days it is fitted to');

  const sixWeeks = expectedCurve(await frame(curvePath(daysAgo(41))));
  const all = expectedCurve(await frame(curvePath(null)));
  t.deepEqual(
    seriesPoints(chart, 1),
    sixWeeks.map((p) => ({ x: p.duration, y: p.value })),
  );
  t.deepEqual(
    seriesPoints(chart, 2),
    all.map((p) => ({ x: p.duration, y: p.value })),
  );

  // Fatigue states: the API's by=duration frame at durations=all, one series per state.
  const after = await frame(curvePath(daysAgo(41), '&after=100,300&by=duration&durations=all'));
  for (const [series, state] of [
    [3, 100],
    [4, 300],
  ] as const) {
    const rows = (after.after as number[]).map((_a, i) => i).filter((i) => after.after![i] === state && after.power![i] !== null);
    t.true(rows.length > 10);
    t.deepEqual(
      seriesPoints(chart, series),
      rows.map((i) => ({ x: after.duration![i] as number, y: after.power![i] as number })),
      `after ${state} kJ`,
    );
  }

  // The model: its curve and its parameters, as the API gives them.
  const model = await api(
    suite.service,
    seed.token,
    'GET',
    `/api/v1/profile/intensity-duration-model?metric=power&date=${daysAgo(0)}&sport=cycling`,
  );
  t.is(model.status, 200);
  t.truthy(model.body.parameters, 'enough efforts to fit');
  t.deepEqual(
    seriesPoints(chart, 5),
    model.body.curve.map((p: { duration: number; intensity: number }) => ({ x: p.duration, y: p.intensity })),
  );
  t.is(
    await page.textContent('#model-parameters [data-parameter="critical"]'),
    `${Math.round(model.body.parameters.critical_intensity)} W`,
  );
  t.is(
    await page.textContent('#model-parameters [data-parameter="work-capacity"]'),
    `${(model.body.parameters.work_capacity / 1000).toFixed(1)} kJ`,
  );
  t.is(await page.textContent('#model-parameters [data-parameter="max"]'), `${Math.round(model.body.parameters.max_intensity)} W`);
  t.is(await page.textContent('#model-parameters [data-parameter="efforts"]'), String(model.body.parameters.efforts));

  // Hover at 1 s: each curve's best and the activity that owns it, linked.
  const at = await page.$eval('#curve-chart', (el: any) => ({ left: el.chart.valToPos(1, 'x'), top: el.chart.valToPos(500, 'y') }));
  const over = (await page.$('#curve-chart .u-over'))!;
  await over.scrollIntoViewIfNeeded();
  const box = (await over.boundingBox())!;
  await page.mouse.move(box.x + at.left + 1, box.y + at.top);
  await page.waitForSelector('#curve-readout li a.readout-activity');
  const lines = await page.$$eval('#curve-readout li', (lis: any[]) =>
    lis.map((li) => ({
      text: li.textContent ?? '',
      href: li.querySelector('a')?.getAttribute('href') ?? null,
      duration: li.dataset.duration as string,
    })),
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
  t.regex(
    (await page.textContent('#curve-status')) ?? '',
    /^Cycling, power: no activity in \d{4}-\d{2}-\d{2} to \d{4}-\d{2}-\d{2}; the newest is from \d{4}-\d{2}-\d{2}\.$/,
  );
  await page.waitForSelector('#way-latest'); // with a button to the data (decided after the chart is drawn)

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

/** A running speed as the page draws it for a metric user: a pace in seconds per km (api/web/static/units.js). */
const perKm = (mps: number) => (mps >= 0.2 ? 1000 / mps : null);

test.serial('choosing a sport without power draws its speed curve (a pace for running), with fatigue states in metres', async (t) => {
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
  const speed = expectedCurve(
    await frame(`/api/v1/activities/longitudinal-mean-max?sport=running&metric=speed&start=${daysAgo(89)}&end=${daysAgo(0)}`),
    'speed',
  );
  t.deepEqual(
    seriesPoints(chart, 1),
    speed.map((p) => ({ x: p.duration, y: perKm(p.value) })).filter((p) => p.y !== null),
    'the speeds of the API drawn as paces (min/km)',
  );
  t.is(await page.$eval('#curve-chart', (el: any) => el.chart.scales.y.dir), -1, 'a pace axis runs downward: faster is higher');
  t.is(Math.max(...speed.map((p) => p.value)), 5, 'the run holds 5 m/s for a minute');
  t.is(speed.find((p) => p.value === 5)!.duration, 60);

  await page.fill('#after', '1000');
  await page.dispatchEvent('#after', 'change');
  chart = await drawnChart(page);
  url = new URL(page.url());
  t.is(url.searchParams.get('after'), '1000');
  t.deepEqual(chart.labels, ['Duration', 'Last 90 days', 'after 1000 m']);
  const after = await frame(
    `/api/v1/activities/longitudinal-mean-max?sport=running&metric=speed&start=${daysAgo(89)}&end=${daysAgo(0)}&after=1000&by=intensity`,
  );
  t.deepEqual(
    seriesPoints(chart, 2),
    expectedCurve(after, 'speed')
      .map((p) => ({ x: p.duration, y: perKm(p.value) }))
      .filter((p) => p.y !== null),
  );
  t.is(await page.textContent('#after-unit'), 'm');
  await page.context().close();
  t.deepEqual(errors, []);
});

/** Rows of a frame with `after` equal to `state` (a sub-frame, columns kept). */
function afterPart(f: Frame, state: number): Frame {
  const rows = (f.after as number[]).map((_, i) => i).filter((i) => f.after![i] === state);
  return Object.fromEntries(Object.entries(f).map(([k, col]) => [k, rows.map((i) => col[i]!)]));
}

/** A by=duration part as the value-indexed view draws it: x the value ascending, y the longest duration held at it. */
function sampledByValue(part: Frame, metric: string): { x: number; y: number }[] {
  const byValue = new Map<number, number>();
  (part[metric] as (number | null)[]).forEach(
    (v, i) => v !== null && byValue.set(v, Math.max(byValue.get(v) ?? 0, part.duration![i] as number)),
  );
  return [...byValue].sort((a, b) => a[0] - b[0]).map(([x, y]) => ({ x, y }));
}

test.serial(
  'fatigue states by duration or by intensity: typical states per unit, the API answer drawn, the URL round trip, the readout naming the state',
  async (t) => {
    const { page } = await openPage(suite.browser);
    const errors = collectErrors(page);
    await page.setViewportSize(DESKTOP);
    await signIn(page, suite.service.url, seed.user.email, '/curves?sport=cycling&metric=power&range=6w');
    await drawnChart(page);
    t.is(await page.inputValue('#after-by'), 'duration', "power's fatigue curves come by duration first");
    t.is(await page.textContent('#after-typical'), '500, 1000, 1500 kJ');
    t.is(await page.getAttribute('#after', 'placeholder'), 'e.g. 500, 1000');

    // The typical states of the unit, by duration: the API's by=duration frame, one series per state.
    await page.click('#after-defaults');
    let chart = await drawnChart(page);
    let url = new URL(page.url());
    t.is(url.searchParams.get('after'), '500,1000,1500');
    t.is(url.searchParams.get('after_by'), null, 'the default orientation stays out of the URL');
    t.is(await page.inputValue('#after'), '500, 1000, 1500');
    t.deepEqual(chart.labels, ['Duration', 'Last 6 weeks', 'after 500 kJ', 'after 1000 kJ', 'after 1500 kJ']);
    const path = curvePath(daysAgo(41), '&after=500,1000,1500');
    const sampled = await frame(`${path}&by=duration&durations=all`);
    for (const [series, state] of [
      [2, 500],
      [3, 1000],
      [4, 1500],
    ] as const) {
      const part = afterPart(sampled, state);
      const rows = (part.power as (number | null)[]).map((p, i) => ({ x: part.duration![i] as number, y: p })).filter((p) => p.y !== null);
      t.deepEqual(seriesPoints(chart, series), rows, `after ${state} kJ by duration`);
    }
    t.true(seriesPoints(chart, 2).length > 10, 'a ride of about 890 kJ has a curve after 500 kJ');
    t.deepEqual(seriesPoints(chart, 3), [], 'and none after 1000 kJ');
    t.regex(
      (await page.textContent('#curve-status')) ?? '',
      /No activity from \d{4}-\d{2}-\d{2} to \d{4}-\d{2}-\d{2} reached 1000, 1500 kJ/,
    );

    // By intensity: the API's value-indexed rows per state, drawn as a duration curve.
    await page.selectOption('#after-by', 'intensity');
    chart = await drawnChart(page);
    url = new URL(page.url());
    t.is(url.searchParams.get('after_by'), 'intensity');
    t.is(url.searchParams.get('after'), '500,1000,1500');
    t.deepEqual(chart.labels, ['Duration', 'Last 6 weeks', 'after 500 kJ', 'after 1000 kJ', 'after 1500 kJ']);
    const levels = await frame(`${path}&by=intensity`);
    const after500 = expectedCurve(afterPart(levels, 500));
    t.true(after500.length > 3);
    t.deepEqual(
      seriesPoints(chart, 2),
      after500.map((p) => ({ x: p.duration, y: p.value })),
      'after 500 kJ by intensity',
    );
    t.deepEqual(
      seriesPoints(chart, 3),
      expectedCurve(afterPart(levels, 1000)).map((p) => ({ x: p.duration, y: p.value })),
    );

    // The readout names the state, its value, duration and the activity that owns it.
    const logGap = (i: number) =>
      Math.min(...[after500[i - 1], after500[i + 1]].filter(Boolean).map((p) => Math.abs(Math.log(p!.duration / after500[i]!.duration))));
    const pick = after500.map((_, i) => i).sort((a, b) => logGap(b) - logGap(a))[0]!;
    const point = after500[pick]!;
    const at = await page.$eval(
      '#curve-chart',
      (el: any, d: number) => ({ left: el.chart.valToPos(d, 'x'), top: el.chart.valToPos(300, 'y') }),
      point.duration,
    );
    const over = (await page.$('#curve-chart .u-over'))!;
    await over.scrollIntoViewIfNeeded();
    const box = (await over.boundingBox())!;
    await page.mouse.move(box.x + at.left, box.y + at.top);
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('#curve-readout li[data-duration]').length === 2);
    const line = await page.$eval('#curve-readout li:nth-child(2)', (li: any) => ({
      text: li.textContent as string,
      duration: li.dataset.duration as string,
      href: li.querySelector('a')?.getAttribute('href'),
    }));
    t.is(line.duration, String(point.duration));
    t.true(line.text.startsWith(`after 500 kJ: ${point.value} W for `), line.text);
    t.is(line.href, `/activities/${point.activity}`);

    // The value-indexed view, by intensity: the rows as they are; by duration: each sampled value with its longest duration.
    await page.check('#view-value');
    chart = await drawnChart(page);
    const part500 = afterPart(levels, 500);
    t.deepEqual(
      seriesPoints(chart, 2),
      (part500.power as number[]).map((p, i) => ({ x: p, y: part500.duration![i] as number })).filter((p) => p.y >= 1),
    );
    const intensityQuery = page.url();
    await page.selectOption('#after-by', 'duration');
    chart = await drawnChart(page);
    t.is(new URL(page.url()).searchParams.get('after_by'), null);
    t.deepEqual(seriesPoints(chart, 2), sampledByValue(afterPart(sampled, 500), 'power'));

    // Back returns to by intensity; a reload of that URL shows the same choices.
    await page.goBack();
    chart = await drawnChart(page);
    t.is(page.url(), intensityQuery);
    t.is(await page.inputValue('#after-by'), 'intensity');
    await page.reload();
    chart = await drawnChart(page);
    t.is(await page.inputValue('#after-by'), 'intensity');
    t.is(await page.inputValue('#after'), '500,1000,1500');
    t.true(await page.isChecked('#view-value'));
    t.is(chart.labels[2], 'after 500 kJ');

    // Speed: the states become metres (a ride's typical distances), by intensity only.
    await page.check('#view-duration');
    await drawnChart(page);
    await page.selectOption('#metric', 'speed');
    chart = await drawnChart(page);
    url = new URL(page.url());
    t.is(url.searchParams.get('metric'), 'speed');
    t.is(url.searchParams.get('after'), '20000,50000,100000', 'kJ typed for power mean nothing in metres');
    t.is(url.searchParams.get('after_by'), null);
    t.is(await page.inputValue('#after-by'), 'intensity');
    t.true(await page.$eval('#after-by option[value="duration"]', (o: any) => o.disabled as boolean));
    t.is(await page.textContent('#after-unit'), 'm');
    t.is(await page.textContent('#after-typical'), '20000, 50000, 100000 m');
    t.deepEqual(chart.labels, ['Duration', 'Last 6 weeks', 'after 20000 m', 'after 50000 m', 'after 100000 m']);
    const speedLevels = await frame(
      `/api/v1/activities/longitudinal-mean-max?sport=cycling&metric=speed&start=${daysAgo(41)}&end=${daysAgo(0)}&after=20000,50000,100000&by=intensity`,
    );
    const after20k = expectedCurve(afterPart(speedLevels, 20000), 'speed');
    t.true(after20k.length > 3, 'a ride of about 25 km has a curve after 20 km');
    t.deepEqual(
      seriesPoints(chart, 2),
      after20k.map((p) => ({ x: p.duration, y: p.value * 3.6 })),
      'a cycling speed drawn in km/h',
    );

    await page.setViewportSize(PHONE);
    await chartsResized(page);
    t.true((await overflow(page)) <= 0, 'no horizontal overflow at 390 px');
    t.true((await screenshot(page, 'curves-after-phone')) > 0);
    await page.setViewportSize(DESKTOP);
    await chartsResized(page);
    t.true((await screenshot(page, 'curves-after-desktop')) > 0);
    await page.context().close();
    t.deepEqual(errors, []);
  },
);

/** The hyperbola the page draws for a test: its value at each drawn duration (api/web/static/test-curve.js, 120 s to 1800 s). */
const TEST_SECONDS = [...Array.from({ length: 49 }, (_, i) => 120 + 10 * i), ...Array.from({ length: 40 }, (_, i) => 630 + 30 * i)];

test.serial(
  'the newest lab test: its CP + W′/t hyperbola from 2 to 30 minutes, labelled, with a note; off without a test or when unticked; speed as a pace',
  async (t) => {
    const { page } = await openPage(suite.browser);
    const errors = collectErrors(page);
    await page.setViewportSize(DESKTOP);
    await signIn(page, suite.service.url, seed.user.email, '/curves?sport=cycling&metric=power&range=90d&test=1');
    let chart = await drawnChart(page);
    t.true(await page.isChecked('#lab-test'));
    t.deepEqual(chart.labels, ['Duration', 'Last 90 days'], 'no test yet: nothing drawn');
    t.regex(
      (await page.textContent('#test-note')) ?? '',
      /^No test with a critical power up to \d{4}-\d{2}-\d{2} of this sport, so none is drawn\.$/,
    );

    const post = async (body: Record<string, unknown>) => {
      const res = await api(suite.service, seed.token, 'POST', '/api/v1/tests/', { tags: [], ...body });
      if (res.status !== 201) throw new Error(`POST test: ${res.status} ${JSON.stringify(res.body)}`);
    };
    await post({
      sport: 'cycling.road',
      start: `${daysAgo(30)}T07:00:00Z`,
      title: 'Older',
      results: { critical_power: 280, w_prime: 15000 },
    });
    await post({
      sport: 'cycling.road',
      start: `${daysAgo(10)}T07:00:00Z`,
      title: 'Lab CP',
      results: { critical_power: 310, w_prime: 19500 },
    });
    await post({ sport: 'running', start: `${daysAgo(8)}T07:00:00Z`, title: null, results: { critical_speed: 4, d_prime: 180 } });

    await page.reload();
    chart = await drawnChart(page);
    const label = `Test “Lab CP” of ${daysAgo(10)}: CP 310 W, W′ 19.5 kJ`;
    t.deepEqual(chart.labels, ['Duration', 'Last 90 days', label]);
    const drawn = seriesPoints(chart, 2);
    t.deepEqual(
      drawn.map((p) => p.x),
      TEST_SECONDS,
      'from 120 s to 1800 s only',
    );
    t.true(
      drawn.every((p) => Math.abs(p.y - (310 + 19500 / p.x)) < 1e-9),
      'P(t) = CP + W′/t',
    );
    // The model's window ends at the newest ride (the page's rule), the day of the test.
    t.is(
      await page.textContent('#test-note'),
      `${label}, drawn as CP + W′/t from 2:00 to 30:00. It is newer than the oldest field data of the 90 days from ${daysAgo(RIDES[0].daysAgo + 89)} to ${daysAgo(RIDES[0].daysAgo)}: prefer it, or compare it with the curve and the model.`,
    );
    // With the model: both drawn, the model's series first.
    await page.check('#model');
    chart = await drawnChart(page);
    t.is(chart.labels.length, 4);
    t.regex(chart.labels[2]!, /^Model \(fitted /);
    t.is(chart.labels[3], label);
    t.true((await screenshot(page, 'curves-test-desktop')) > 0);

    // The value-indexed view: the values ascending, each with its duration.
    await page.check('#view-value');
    chart = await drawnChart(page);
    const byValue = seriesPoints(chart, 3);
    t.deepEqual(
      byValue.map((p) => p.y),
      [...TEST_SECONDS].reverse(),
    );
    t.true(byValue.every((p, i) => i === 0 || p.x > byValue[i - 1]!.x));
    await page.check('#view-duration');
    await page.uncheck('#model');
    await drawnChart(page);

    // Unticked: gone, out of the URL, the note hidden.
    await page.uncheck('#lab-test');
    chart = await drawnChart(page);
    t.is(new URL(page.url()).searchParams.get('test'), null);
    t.deepEqual(chart.labels, ['Duration', 'Last 90 days']);
    t.true(await page.isHidden('#test-note'));
    await page.check('#lab-test');
    chart = await drawnChart(page);
    t.is(new URL(page.url()).searchParams.get('test'), '1');
    t.is(chart.labels[2], label);

    // Running: the test's critical speed and D′, drawn as paces.
    await page.selectOption('#sport', 'running');
    chart = await drawnChart(page);
    t.is(new URL(page.url()).searchParams.get('metric'), 'speed');
    t.regex(chart.labels[2]!, new RegExp(`^Test of ${daysAgo(8)}: CS 4:10 /km, D′ 180 m$`));
    const paces = seriesPoints(chart, 2);
    t.true(
      paces.every((p) => Math.abs(p.y - 1000 / (4 + 180 / p.x)) < 1e-6),
      'CS + D′/t as a pace',
    );

    await page.setViewportSize(PHONE);
    await chartsResized(page);
    t.true((await overflow(page)) <= 0, 'no horizontal overflow at 390 px');
    t.true((await screenshot(page, 'curves-test-phone')) > 0);
    await page.context().close();
    t.deepEqual(errors, []);
  },
);
