import type { Browser } from 'playwright-core';
import { curveInputs, rideChannels, simulateRide } from '../../../test/helpers/synthetic.ts';
import { timeFetches, timeTo } from '../../web-timing.ts';
import type { Family, Row, Tree } from '../row.ts';
import { NEWEST, type StoreSynthetic, seedRide } from './curves.ts';
import { exportOf, inParallel, logOpened, startTreeService } from './tree-service.ts';

/**
 * The web benchmark (bench/web.ts) as compare rows: what a person waits for in headless Chromium,
 * from navigation to the charts drawn (each chart sets `data-drawn` after its first draw), on the
 * tree's own service and pages (its HTML and static JavaScript), one browser per side:
 *
 * - the activity page of a 4 h ride (14,400 rows of power, speed, heart rate and cadence): the
 *   time-series charts drawn, then every chart (mean-max and AWD too);
 * - the curves page, all time, over the history: the curve drawn;
 * - the activity page's API reads by the page's own `fetch` (parsed, not drawn): what the page adds
 *   to the data it needs is the difference.
 *
 * The history: BENCH_COMPARE_WEB_ACTIVITIES (default 300) rides, the curves family's (same seeds on
 * both sides), and the 4 h ride a day after them. The browser is this checkout's driver
 * (test/helpers/browser.ts), the same on both sides; the service keeps its response cache on, as
 * a person meets it (bench/web.ts does the same).
 */
const ACTIVITIES = Number(process.env.BENCH_COMPARE_WEB_ACTIVITIES ?? 300);
const DAY = 86_400_000;
const ENV = { ENGINE_THREADS: '2', LOG_LEVEL: 'warn' };
/**
 * A page row is warmed for 1.5 s (the service's engine threads, its caches and Chromium's compiled
 * page scripts, not only this process) and sampled one navigation at a time.
 */
const PAGE_ROW = { warmMs: 1500 };

export const webFamily: Family = {
  name: 'web',
  // A service and a browser per tree: each side's rows in its own process.
  isolation: 'process',
  threshold: 0.05,
  // As the other service families: each side's processes carry a bias of their own.
  forks: 2,
  about:
    'pages in headless Chromium (bench/web.ts): the activity page of a 4 h ride and the curves page, navigation to charts drawn; the API reads by fetch',
  async open(tree: Tree, options = {}) {
    const activities = options.activities ?? ACTIVITIES;
    const started = performance.now();
    const storeSynthetic = await exportOf<StoreSynthetic>(tree, 'bench/curves.ts', 'storeSynthetic');
    const ts = await startTreeService(tree, ENV);
    let browser: Browser | undefined;
    const close = async () => {
      await browser?.close();
      await ts.close();
    };
    try {
      await inParallel(activities, 4, (i) => seedRide(ts.service, ts.userId, storeSynthetic, activities, i));
      const start = NEWEST + DAY;
      const channels = rideChannels(simulateRide({ start: new Date(start), seconds: 4 * 3600, seed: 7 }));
      const curves = await ts.service.deps.engine.pool.runCurves(curveInputs(channels));
      const rideId = await storeSynthetic(ts.service, ts.userId, {
        start,
        channels,
        name: 'four-hours.fit',
        utcOffsetSeconds: 3600,
        curves,
      });
      await ts.settle();

      // Loaded here, not at start-up: every sampler process imports every family.
      const { launchBrowser, signIn } = await import('../../../test/helpers/browser.ts');
      browser = await launchBrowser();
      const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
      await signIn(page, ts.service.url, ts.email);
      await page.waitForURL((u) => !u.pathname.startsWith('/signin'));
      const activityUrl = `${ts.service.url}/activities/${rideId}`;
      await page.goto(activityUrl);
      await page.waitForSelector('#activity-charts[data-state=ready]', { timeout: 60_000 });
      const series = await page.$$eval('#timeseries [id$="-chart"]', (els) => els.map((e) => `#${e.id}[data-drawn]`));
      if (!series.length) throw new Error(`the activity page of ${tree.root} drew no time-series chart`);
      const curvesUrl = `${ts.service.url}/curves?sport=cycling&metric=power&range=all`;

      const rows: Row[] = [
        {
          id: 'web/activity-series',
          label: `activity page, 4 h ride: ${series.length} time-series charts drawn`,
          run: () => timeTo(page, activityUrl, ['#activity-charts[data-state=ready]', ...series]),
          ...PAGE_ROW,
        },
        {
          id: 'web/activity-all-charts',
          label: 'activity page, 4 h ride: every chart drawn (time series, mean-max, AWD)',
          run: () => timeTo(page, activityUrl, [...series, '#mean-max-chart[data-drawn]', '#awd-chart[data-drawn]']),
          ...PAGE_ROW,
        },
        {
          id: 'web/curves-all-time',
          label: `curves page, all time, ${activities + 1} rides: the curve drawn`,
          run: () => timeTo(page, curvesUrl, ['#curve-chart[data-drawn]']),
          ...PAGE_ROW,
        },
        {
          id: 'web/activity-api-fetch',
          label: "the activity page's API reads by the page's fetch (details and samples as JSON; parsed, not drawn)",
          run: () => timeFetches(page, [`/api/v1/activities/${rideId}`, `/api/v1/activities/${rideId}/data?format=json`]),
          ...PAGE_ROW,
        },
      ];
      logOpened('web', tree, started, `${activities} rides and a 4 h ride seeded, Chromium signed in`);
      return { rows, close };
    } catch (err) {
      await close();
      throw err;
    }
  },
};
