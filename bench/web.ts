import os from 'node:os';
import { startTestService } from '../test/helpers/service.ts';
import { createTestUser } from '../test/helpers/users.ts';
import { launchBrowser, signIn } from '../test/helpers/browser.ts';
import { seedHistory, seedRide } from './curves.ts';
import { timeFetches, timeTo } from './web-timing.ts';
import { distribution, formatTable, recordTarget, writeReport, type Distribution } from './report.ts';

/**
 * `npm run bench -- web` (issue 18): what a person waits for in Chromium (headless, this machine),
 * from navigation to the chart drawn (each chart sets `data-drawn` after uPlot's first draw):
 *
 * - an activity page of a 4 h ride (14,400 rows of power, speed, heart rate and cadence): every
 *   time-series chart drawn, then the whole page (mean-max and AWD too);
 * - the curves page, all time, over BENCH_WEB_ACTIVITIES (1,000) rides: the curve drawn.
 *
 * Beside each, the plain baseline: the same API answers fetched by the page's own `fetch` (JSON
 * parsed, nothing drawn), so the row shows what the page adds to the data it needs. The first load
 * (cold caches: the service's curve cache and the browser's) is reported apart; p50 is of the loads
 * after it. Target: ≤ 1 s each.
 */
const ACTIVITIES = Number(process.env.BENCH_WEB_ACTIVITIES ?? 1000);
const RUNS = Number(process.env.BENCH_WEB_RUNS ?? 7);
const TARGET_MS = 1000;
const DAY = 86_400_000;

interface Row {
  workload: string;
  first_ms: number;
  result: Distribution;
  baseline: { name: string; result: Distribution };
  target?: string;
  met?: boolean;
}

async function runs(n: number, once: () => Promise<number>): Promise<{ first: number; rest: Distribution }> {
  const first = await once();
  const rest: number[] = [];
  for (let i = 0; i < n; i++) rest.push(await once());
  return { first, rest: distribution(rest) };
}

export async function benchWeb() {
  process.stdout.write(`\n== web (Chromium, headless)\n\nseeding ${ACTIVITIES} synthetic rides and a 4 h ride…\n`);
  const service = await startTestService({ env: { ENGINE_THREADS: '2', LOG_LEVEL: 'warn' } });
  const browser = await launchBrowser();
  const rows: Row[] = [];
  try {
    const user = await createTestUser(service);
    const seeded = await seedHistory(service, user.id, ACTIVITIES);
    const rideId = await seedRide(service, user.id, { start: seeded.newest + DAY, seconds: 4 * 3600, seed: 7, name: 'four-hours.fit' });
    process.stdout.write(`seeded in ${seeded.seconds.toFixed(1)} s\n`);
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    await signIn(page, service.url, user.email);
    await page.waitForURL((u) => !u.pathname.startsWith('/signin'));

    const activityUrl = `${service.url}/activities/${rideId}`;
    await page.goto(activityUrl);
    await page.waitForSelector('#activity-charts[data-state=ready]', { timeout: 60_000 });
    const channels = await page.$$eval('#timeseries [id$="-chart"]', (els) => els.map((e) => `#${e.id}[data-drawn]`));
    const apiPaths = [`/api/v1/activities/${rideId}`, `/api/v1/activities/${rideId}/data?format=json`];
    const series = await runs(RUNS, () => timeTo(page, activityUrl, ['#activity-charts[data-state=ready]', ...channels]));
    const whole = await runs(RUNS, () => timeTo(page, activityUrl, [...channels, '#mean-max-chart[data-drawn]', '#awd-chart[data-drawn]']));
    const seriesData = await runs(RUNS, () => timeFetches(page, apiPaths));
    const curveData = await runs(RUNS, () =>
      timeFetches(page, [
        ...apiPaths,
        `/api/v1/activities/${rideId}/mean-max?durations=all&format=json`,
        `/api/v1/activities/${rideId}/accumulated-work-duration?format=json`,
      ]),
    );
    rows.push({
      workload: `activity page, 4 h ride: ${channels.length} time-series charts × 14,400 points drawn`,
      first_ms: series.first,
      result: series.rest,
      baseline: { name: 'its API reads by fetch, not drawn', result: seriesData.rest },
      target: `p50 ≤ ${TARGET_MS} ms`,
      met: series.rest.p50_ms <= TARGET_MS,
    });
    rows.push({
      workload: 'activity page, 4 h ride: every chart drawn (time series, mean-max, AWD)',
      first_ms: whole.first,
      result: whole.rest,
      baseline: { name: 'its API reads by fetch, not drawn', result: curveData.rest },
    });

    const curvesUrl = `${service.url}/curves?sport=cycling&metric=power&range=all`;
    const curve = await runs(RUNS, () => timeTo(page, curvesUrl, ['#curve-chart[data-drawn]']));
    const curveApi = await runs(RUNS, () =>
      timeFetches(page, ['/api/v1/profile/sports/', '/api/v1/activities/longitudinal-mean-max?sport=cycling&metric=power&format=json']),
    );
    const points = await page.$eval('#curve-chart', (el) => (el as unknown as { chart: { data: unknown[][] } }).chart.data[0]!.length);
    rows.push({
      workload: `curves page, all time, ${ACTIVITIES + 1} rides: the curve drawn (${points} points)`,
      first_ms: curve.first,
      result: curve.rest,
      baseline: { name: 'its API reads by fetch, not drawn', result: curveApi.rest },
      target: `p50 ≤ ${TARGET_MS} ms`,
      met: curve.rest.p50_ms <= TARGET_MS,
    });
  } finally {
    await browser.close();
    await service.close();
  }

  for (const r of rows)
    if (r.target)
      recordTarget({
        benchmark: 'web',
        target: `${r.workload}: ${r.target}`,
        figure: `p50 ${Math.round(r.result.p50_ms)} ms (first load ${Math.round(r.first_ms)} ms)`,
        met: r.met!,
      });
  const header = ['workload', 'first load ms', 'p50 ms', 'p95 ms', 'baseline', 'baseline p50 ms', 'target', 'met'];
  const table = rows.map((r) => [
    r.workload,
    String(Math.round(r.first_ms)),
    String(Math.round(r.result.p50_ms)),
    String(Math.round(r.result.p95_ms)),
    r.baseline.name,
    String(Math.round(r.baseline.result.p50_ms)),
    r.target ?? '',
    r.met === undefined ? '' : r.met ? 'met' : 'MISSED',
  ]);
  process.stdout.write(
    `\n${formatTable(header, table)}\n(load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')})\n`,
  );
  const file = writeReport('web', { at: new Date().toISOString(), activities: ACTIVITIES, runs: RUNS, rows });
  process.stdout.write(`wrote ${file}\n`);
}
