import test from 'ava';
import type { Page } from 'playwright-core';
import { browserSuite, openPage, signIn } from './helpers/browser.ts';
import { api } from './helpers/activities.ts';
import { chartsResized, collectErrors, DESKTOP, overflow, PHONE, screenshot } from './helpers/page-checks.ts';
import { BODY_MASS, daysAgo, RESTING_HR, seedTraining, TRACES, type Seeded } from './helpers/training-seed.ts';

const suite = browserSuite(test, { workers: true });
let seed: Seeded;
test.serial.before(async () => {
  seed = await seedTraining(suite.service);
});

interface ChartState {
  labels: string[];
  data: (number | null)[][];
}

async function chartState(page: Page, selector: string): Promise<ChartState> {
  await page.waitForSelector(`${selector}[data-drawn]`);
  return page.$eval(selector, (el: any) => ({
    labels: el.chart.series.map((s: { label: string }) => s.label),
    data: el.chart.data.map((a: ArrayLike<number | null>) => Array.from(a)),
  }));
}

const present = (values: (number | null)[]) => values.filter((v) => v !== null && v !== undefined);

interface Day {
  date: string;
  value: number | null;
  status: 'stored' | 'estimated' | 'missing';
}

async function dailies(measure: string): Promise<Day[]> {
  const res = await api(
    suite.service,
    seed.token,
    'GET',
    `/api/v1/dailies/${measure}?start=${daysAgo(364)}&end=${daysAgo(0)}&interpolate=true`,
  );
  if (res.status !== 200) throw new Error(`${measure}: ${res.status}`);
  return res.body;
}

test.serial(
  'the data page draws each daily measure (measured points, interpolated line), the traces and the template week as the API answers them',
  async (t) => {
    const { page } = await openPage(suite.browser);
    const errors = collectErrors(page);
    await page.setViewportSize(DESKTOP);
    await signIn(page, suite.service.url, seed.user.email, '/data');
    await page.waitForURL((u) => u.pathname === '/data');

    for (const [measure, written] of [
      ['body_mass', BODY_MASS],
      ['resting_hr', RESTING_HR],
    ] as const) {
      const chart = await chartState(page, `#daily-chart-${measure}`);
      const days = await dailies(measure);
      t.deepEqual(chart.labels.slice(1), ['Measured', 'Interpolated']);
      t.is(chart.data[0]!.length, days.length, `${measure}: one x per day of the year`);
      t.deepEqual(
        chart.data[0],
        days.map((d) => Date.parse(`${d.date}T00:00:00Z`) / 1000),
      );
      t.deepEqual(
        chart.data[1],
        days.map((d) => (d.status === 'stored' ? d.value : null)),
        `${measure}: measured days as points`,
      );
      t.deepEqual(
        present(chart.data[1]!),
        [...written].sort((a, b) => b[0] - a[0]).map(([, v]) => v),
      );
      const estimated = days.filter((d) => d.status === 'estimated');
      t.true(estimated.length > 0);
      for (const [i, d] of days.entries()) {
        if (d.status === 'estimated') t.is(chart.data[2]![i], d.value, `${measure} ${d.date}: estimated on the dashed line`);
        if (d.status === 'missing') t.is(chart.data[2]![i], null);
      }
    }
    t.deepEqual(
      await page.$$eval('figure.daily-chart', (fs: any[]) => fs.map((f) => f.dataset.measure)),
      ['body_mass', 'resting_hr'],
      'only measures with values',
    );

    const traces = await chartState(page, '#traces-chart');
    t.deepEqual(traces.labels.slice(1), ['Lactate', 'Power', 'Heart rate']);
    const axes = await page.$eval('#traces-chart', (el: any) =>
      el.chart.axes.slice(1).map((a: { scale: string; side: number; label: string }) => ({ scale: a.scale, side: a.side, label: a.label })),
    );
    t.deepEqual(
      axes,
      [
        { scale: 'lactate', side: 3, label: 'Lactate (mmol/L)' },
        { scale: 'power', side: 1, label: 'Power (W)' },
        { scale: 'heart_rate', side: 3, label: 'Heart rate (bpm)' },
      ],
      'every value has an axis of its own, heart rate too',
    );
    const listed = (await api(suite.service, seed.token, 'GET', '/api/v1/traces/?limit=1000')).body.reverse();
    t.is(listed.length, TRACES.length);
    t.deepEqual(
      traces.data[0],
      listed.map((tr: { timestamp: string }) => Date.parse(tr.timestamp) / 1000),
    );
    t.deepEqual(
      traces.data[1],
      listed.map((tr: { lactate: number | null }) => tr.lactate),
    );
    t.deepEqual(
      traces.data[2],
      listed.map((tr: { power: number | null }) => tr.power),
    );
    t.deepEqual(
      traces.data[3],
      listed.map((tr: { heart_rate: number | null }) => tr.heart_rate),
    );

    const week = await chartState(page, '#template-week-chart');
    const template = (await api(suite.service, seed.token, 'GET', '/api/v1/profile/template-week')).body;
    t.deepEqual(week.labels.slice(1), ['Average', 'Typical (median)']);
    t.deepEqual(week.data[0], [0, 1, 2, 3, 4, 5, 6]);
    const hours = (iso: string) => {
      const m = /^PT(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?$/.exec(iso)!;
      return (Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0)) / 3600;
    };
    const days = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
    t.deepEqual(
      week.data[1],
      days.map((d) => hours(template[d].avg_training_duration)),
    );
    t.deepEqual(
      week.data[2],
      days.map((d) => hours(template[d].typical_training_duration)),
    );
    t.true(
      week.data[1]!.some((h) => h! > 0),
      'the seeded rides and run are in the template week',
    );
    t.true((await screenshot(page, 'data-desktop')) > 0);

    // The delete forms still work, and the chart follows.
    const [deletedDaysAgo] = BODY_MASS[1]!;
    await page.click(`#delete-daily-body_mass-${daysAgo(deletedDaysAgo)}`);
    await page.waitForURL((u) => u.pathname === '/data' && u.searchParams.has('daily_deleted'));
    t.is((await page.textContent('p.notice'))?.trim(), 'Daily value deleted.');
    const after = await chartState(page, '#daily-chart-body_mass');
    t.is(present(after.data[1]!).length, BODY_MASS.length - 1);
    t.is(after.data[1]!.length, (await dailies('body_mass')).length);

    await page.setViewportSize(PHONE);
    await chartsResized(page);
    t.true((await overflow(page)) <= 0, 'no horizontal overflow at 390 px (the tables scroll in their box)');
    t.true((await screenshot(page, 'data-phone')) > 0);
    const chartWidths = await page.$$eval('.chart', (els: any[]) => els.map((el) => el.getBoundingClientRect().right));
    t.true(
      chartWidths.every((right) => right <= PHONE.width),
      'no chart reaches beyond the phone screen',
    );
    await page.context().close();
    t.deepEqual(errors, []);
  },
);

test.serial('a person without data sees the charts say so', async (t) => {
  const { createTestUser } = await import('./helpers/users.ts');
  const fresh = await createTestUser(suite.service);
  const { page } = await openPage(suite.browser);
  const errors = collectErrors(page);
  await signIn(page, suite.service.url, fresh.email, '/data');
  await page.waitForSelector('#no-daily-charts:not([hidden])');
  await page.waitForSelector('#no-traces-chart:not([hidden])');
  const week = await chartState(page, '#template-week-chart');
  t.deepEqual(week.data[1], [0, 0, 0, 0, 0, 0, 0]);
  await page.context().close();
  t.deepEqual(errors, []);
});
