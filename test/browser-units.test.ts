import test from 'ava';
import { api, uploadAndWait } from './helpers/activities.ts';
import { browserSuite, openPage, signIn } from './helpers/browser.ts';
import { buildActivityFit } from './helpers/fit-builder.ts';
import { chartsResized, collectErrors, overflow, PHONE, screenshot } from './helpers/page-checks.ts';
import { WebClient } from './helpers/http.ts';
import { createTestUser, TEST_PASSWORD, tokenFor } from './helpers/users.ts';

/**
 * A units preference (Settings: metric or imperial), stored per user and read by every page: speed
 * is a pace for running (per km or mile), a speed for cycling (km/h or mph), distances in km or miles.
 * Each page is read at 1280 px and at 390 px.
 */
const suite = browserSuite(test, { workers: true });
let email = '';
let run = '';
let ride = '';
let runMean = 0; // the run's mean speed as the API states it (m/s)
let rideMean = 0;
/** `m:ss` of a pace in seconds, rounded as the pages round it. */
const clock = (s: number) => `${Math.floor(Math.round(s) / 60)}:${String(Math.round(s) % 60).padStart(2, '0')}`;

const MILE = 1609.344;
test.serial.before(async () => {
  const user = await createTestUser(suite.service);
  email = user.email;
  const token = await tokenFor(suite.service, user, ['data:read', 'data:write']);
  const start = new Date(Date.now() - 2 * 86_400_000);
  start.setUTCMilliseconds(0);
  // A 10-minute run at 4 m/s (4:10 /km, 6:42 /mi), 2,400 m; a 10-minute ride at 10 m/s (36 km/h).
  const steady = (speed: number) => (i: number) => ({ heartRate: 150, speed, distance: i * speed });
  const [runSource, rideSource] = await uploadAndWait(suite.service, token, [
    { name: 'run.fit', bytes: buildActivityFit({ sessions: [{ sport: 'running', start, seconds: 600, record: steady(4) }] }) },
    {
      name: 'ride.fit',
      bytes: buildActivityFit({
        sessions: [{ sport: 'cycling', start: new Date(start.getTime() + 3_600_000), seconds: 600, record: steady(10) }],
      }),
    },
  ]);
  run = runSource.activity_ids[0];
  ride = rideSource.activity_ids[0];
  const mean = async (id: string) =>
    ((await api(suite.service, token, 'GET', `/api/v1/activities/${id}`)).body as { summary: { speed: { mean: number } } }).summary.speed
      .mean;
  runMean = await mean(run);
  rideMean = await mean(ride);
});

test.serial('Settings stores metric or imperial; a forged value is refused and changes nothing', async (t) => {
  const web = new WebClient(suite.service.url);
  t.is((await web.postForm('/signin', { email, password: TEST_PASSWORD })).status, 303);
  const page = await (await web.get('/settings')).text();
  t.regex(page, /<input type="radio" id="units-metric" name="units" value="metric" checked>/, 'metric by default');
  const bad = await web.postForm('/settings/units', { units: 'furlongs' });
  t.is(bad.status, 422);
  t.regex(await bad.text(), /Choose metric or imperial units\./);
  const stored = () => suite.service.deps.db.selectFrom('users').select('units').where('email', '=', email).executeTakeFirstOrThrow();
  t.is((await stored()).units, 'metric');
  const saved = await web.postForm('/settings/units', { units: 'imperial' });
  t.is(saved.status, 303);
  t.is(saved.headers.get('location'), '/settings?saved=units');
  t.is((await stored()).units, 'imperial');
  t.regex(await (await web.get('/settings?saved=units')).text(), /<body data-units="imperial">[\s\S]*Your units were saved\./);
  t.is((await web.postForm('/settings/units', { units: 'metric' })).status, 303);
  t.is((await stored()).units, 'metric');
});

test.serial('metric: the run reads in min/km, the ride in km/h, distances in km; imperial: min/mi, mph, miles', async (t) => {
  const { page } = await openPage(suite.browser);
  const errors = collectErrors(page);
  await signIn(page, suite.service.url, email, `/activities/${run}`);
  await page.waitForURL((u) => u.pathname === `/activities/${run}`);
  t.is(await page.textContent('#activity-distance'), '2.40 km');
  t.is(await page.textContent('#summary tr[data-channel="speed"] th'), 'Pace');
  t.is(await page.textContent('#summary tr[data-channel="speed"] td[data-stat="mean"]'), clock(1000 / runMean));
  t.true(Math.abs(1000 / runMean - 250) < 2, 'about 4:10 /km');
  await page.waitForSelector('#speed-chart[data-drawn]');
  const speedSeries = () =>
    page.$eval('#speed-chart', (el: any) => ({
      label: el.chart.series[1].label as string,
      first: el.chart.data[1][5] as number,
      dir: el.chart.scales.y.dir as number,
    }));
  t.deepEqual(await speedSeries(), { label: 'Pace (min/km)', first: 250, dir: -1 }, 'a pace in s/km on a downward axis');

  // Imperial, chosen on the Settings page.
  await page.goto(`${suite.service.url}/settings`);
  await page.check('#units-imperial');
  await page.click('#units-choice ~ button[type=submit]');
  await page.waitForURL((u) => u.searchParams.get('saved') === 'units');
  await page.goto(`${suite.service.url}/activities/${run}`);
  t.is(await page.textContent('#activity-distance'), `${(2400 / MILE).toFixed(2)} mi`);
  t.is(await page.textContent('#summary tr[data-channel="speed"] td[data-stat="mean"]'), clock(MILE / runMean));
  await page.waitForSelector('#speed-chart[data-drawn]');
  t.deepEqual(await speedSeries(), { label: 'Pace (min/mi)', first: MILE / 4, dir: -1 });
  await page.setViewportSize(PHONE);
  await chartsResized(page); // the charts follow the new width after a resize event, not at once
  t.true((await overflow(page)) <= 0, 'no horizontal overflow at 390 px');
  t.true((await screenshot(page, 'units-run-imperial-390')) > 0);

  await page.goto(`${suite.service.url}/activities/${ride}`);
  t.is(await page.textContent('#summary tr[data-channel="speed"] th'), 'Speed');
  t.is(await page.textContent('#summary tr[data-channel="speed"] td[data-stat="mean"]'), ((rideMean * 3600) / MILE).toFixed(1));
  t.regex((await page.textContent('#summary tr[data-channel="speed"] td:last-child'))!, /^mph$/);
  await page.waitForSelector('#speed-chart[data-drawn]');
  const rideSpeed = await page.$eval('#speed-chart', (el: any) => ({ label: el.chart.series[1].label, v: el.chart.data[1][5] }));
  t.deepEqual(rideSpeed, { label: 'Speed (mph)', v: (10 * 3600) / MILE });

  // Curves of running: a pace per mile; the list of activities: miles.
  await page.goto(`${suite.service.url}/curves?sport=running&metric=speed&range=90d`);
  await page.waitForSelector('#curve-chart[data-drawn]');
  const curve = await page.$eval('#curve-chart', (el: any) => ({
    y: el.chart.data[1].find((v: number | null) => v !== null),
    dir: el.chart.scales.y.dir,
  }));
  t.deepEqual(curve, { y: MILE / 4, dir: -1 });
  await page.goto(`${suite.service.url}/activities`);
  t.regex((await page.textContent(`tr[data-activity-id="${run}"]`))!, /1\.49 mi/);
  await page.context().close();
  t.deepEqual(errors, []);
});
