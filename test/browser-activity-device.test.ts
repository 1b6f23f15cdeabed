import test from 'ava';
import { randomBytes } from 'node:crypto';
import type { Page } from 'playwright-core';
import type { User } from '../db/database.ts';
import { activityId, storeActivities, type NewActivity } from '../db/activities.ts';
import { insertSource } from '../db/sources.ts';
import { browserSuite, openPage, signIn } from './helpers/browser.ts';
import { chartsResized, collectErrors, DESKTOP, overflow, PHONE, screenshot } from './helpers/page-checks.ts';
import { createTestUser, tokenFor } from './helpers/users.ts';
import { api } from './helpers/activities.ts';

/**
 * The activity page's timer and moving time, normalized power and work, the device's own summary
 * beside ours (only where they differ by more than 1 %), the records left out and the samples stored
 * as missing, and the ingest version when older: from rows stored directly (not from the engine's
 * numbers). The rows have no sample channels, so the page fetches only the activity.
 */

const suite = browserSuite(test);

const START = Date.UTC(2026, 4, 18, 8);
const ELAPSED = 3725; // 1:02:05
const TIMER = 3480; // 58:00
const MOVING = 3300; // 55:00
const DISTANCE = 30_000;

/** One activity of a new source of `user`, stored as ingestion would; `fields` override the defaults. */
async function storeOne(user: User, fields: Partial<NewActivity>): Promise<string> {
  const { source } = await insertSource(suite.service.deps.db, {
    user_id: user.id,
    type: 'fit',
    origin: 'manual_upload',
    filename: 'device.fit',
    content_sha256: randomBytes(32).toString('hex'),
    size_bytes: 1,
    sport: null,
  });
  const id = activityId(source.id, 0);
  await storeActivities(
    suite.service.deps.db,
    source,
    [
      {
        id,
        session_index: 0,
        sport: 'cycling.road',
        start_time: new Date(START),
        end_time: new Date(START + ELAPSED * 1000),
        utc_offset_seconds: 7200,
        metrics: [],
        summary: null,
        laps: null,
        distance: DISTANCE,
        devices: ['Garmin Edge 530'],
        samples: ELAPSED,
        implausible_samples: {},
        curves: [],
        ...fields,
      },
    ],
    new Date(),
  );
  return id;
}

/** Ours: power mean 200 W, NP 231 W, work 696 kJ, HR 141 bpm, cadence 88 rpm, speed distance / moving time, ascent 412 m. */
const SUMMARY = {
  power: { mean: 200, max: 900, normalized: 231, work: 696 },
  heart_rate: { mean: 141, max: 178, min: 95, start: 95, end: 150 },
  cadence: { mean: 88, max: 121 },
  speed: { mean: DISTANCE / MOVING, max: 15.2 },
  distance: { sum: DISTANCE },
  altitude: { gain: 412, loss: 405, min: 210, max: 690, mean: 400 },
};

/**
 * The device's: agreeing within 1 % on timer and elapsed time, distance (+0.33 %), NP (+0.43 %) and HR;
 * differing on average power (185 W), cadence (82 rpm), speed (distance / timer time) and ascent (450 m).
 */
const DEVICE = {
  total_elapsed_time: ELAPSED,
  total_timer_time: TIMER,
  total_distance: 30_100,
  avg_speed: 30_100 / TIMER,
  max_speed: 15.3,
  avg_power: 185,
  max_power: 905,
  normalized_power: 232,
  total_work: 696_000,
  avg_heart_rate: 141,
  max_heart_rate: 178,
  avg_cadence: 82,
  max_cadence: 121,
  total_ascent: 450,
  total_descent: 440,
};

const text = (page: Page, selector: string) => page.$eval(selector, (el) => (el.textContent ?? '').replace(/\s+/g, ' ').trim());
const texts = (page: Page, selector: string) =>
  page.$$eval(selector, (els) => els.map((el) => (el.textContent ?? '').replace(/\s+/g, ' ').trim()));

async function open(user: User, id: string) {
  const { page, csp } = await openPage(suite.browser);
  const errors = collectErrors(page);
  await page.setViewportSize(DESKTOP);
  await signIn(page, suite.service.url, user.email, `/activities/${id}`);
  await page.waitForURL((u) => u.pathname === `/activities/${id}`);
  await page.waitForSelector('#activity-charts[data-state=ready]');
  return { page, csp, errors };
}

/** No horizontal overflow at phone width; screenshots at both widths. */
async function fits(t: { true: (v: boolean, m?: string) => void }, page: Page, name: string) {
  await page.setViewportSize(PHONE);
  await chartsResized(page);
  t.true((await overflow(page)) <= 0, `${name}: no horizontal overflow at ${PHONE.width} px`);
  t.true((await screenshot(page, `${name}-${PHONE.width}`)) > 0);
  await page.setViewportSize(DESKTOP);
  await chartsResized(page);
  t.true((await overflow(page)) <= 0, `${name}: no horizontal overflow at ${DESKTOP.width} px`);
  t.true((await screenshot(page, `${name}-${DESKTOP.width}`)) > 0);
}

test('version 2: elapsed, timer and moving time, NP and work, the device values that differ by more than 1 %, the records and samples left out', async (t) => {
  const user = await createTestUser(suite.service);
  const lap = (start: number, end: number, timer: number, moving: number) => ({
    start: START + start * 1000,
    end: START + end * 1000,
    timer_seconds: timer,
    moving_seconds: moving,
    power: { mean: 200 },
  });
  const id = await storeOne(user, {
    summary: SUMMARY,
    laps: [lap(0, 1800, 1700, 1620), lap(1800, ELAPSED, TIMER - 1700, MOVING - 1620)],
    ingest_version: 2,
    timer_seconds: TIMER,
    moving_seconds: MOVING,
    device_summary: DEVICE,
    dropped_records: { duplicate_timestamp: 3, outside_session: 1 },
    implausible_samples: { power: 2, heart_rate: 1 },
  });

  // The API says the same (the page reads the same row).
  const token = await tokenFor(suite.service, user, ['data:read']);
  const details = (await api(suite.service, token, 'GET', `/api/v1/activities/${id}`)).body;
  t.is(details.duration, 'PT1H2M5S');
  t.is(details.timer_duration, 'PT58M');
  t.is(details.moving_duration, 'PT55M');
  t.is(details.ingest_version, 2);
  t.deepEqual(details.dropped_records, { duplicate_timestamp: 3, outside_session: 1 });

  const { page, csp, errors } = await open(user, id);
  t.is(await text(page, '#activity-duration'), '1:02:05');
  t.is(await text(page, '#activity-timer'), '58:00');
  t.is(await text(page, '#activity-moving'), '55:00');
  t.deepEqual(await texts(page, '#activity dt'), [
    'Sport',
    'Start',
    'End',
    'Elapsed',
    'Timer',
    'Moving',
    'Distance',
    'Normalized power',
    'Work',
    'Devices',
    'Metrics',
    'Id',
  ]);
  t.is(await text(page, '#activity-np'), '231 W');
  t.is(await text(page, '#activity-work'), '696 kJ');
  t.is(await page.$('#ingest-version'), null, 'the current rules: no version note');

  // The device table: exactly the rows that differ by more than 1 %, in their order.
  t.deepEqual(await texts(page, '#device-comparison thead th'), ['', 'Device says', 'We compute', 'Why it may differ']);
  t.deepEqual(await page.$$eval('#device-comparison tbody tr', (els) => els.map((el) => el.getAttribute('data-compare'))), [
    'avg_power',
    'avg_cadence',
    'avg_speed',
    'ascent',
  ]);
  const row = (key: string) => texts(page, `#device-comparison tr[data-compare="${key}"] > *`);
  const [powerLabel, powerDevice, powerOurs, powerWhy] = await row('avg_power');
  t.is(powerLabel, 'Average power');
  t.is(powerDevice, '185 W');
  t.is(powerOurs, '200 W (+8.1 %)');
  t.regex(powerWhy!, /zeros/);
  t.deepEqual((await row('avg_cadence')).slice(0, 3), ['Average cadence', '82 rpm', '88 rpm (+7.3 %)']);
  const [speedLabel, speedDevice, speedOurs, speedWhy] = await row('avg_speed');
  t.is(speedLabel, 'Average speed');
  t.is(speedDevice, `${((30_100 / TIMER) * 3.6).toFixed(1)} km/h`);
  t.is(speedOurs, `${((DISTANCE / MOVING) * 3.6).toFixed(1)} km/h (+5.1 %)`);
  t.regex(speedWhy!, /distance \/ moving time.*distance \/ timer time/);
  t.deepEqual((await row('ascent')).slice(0, 3), ['Ascent', '450 m', '412 m (−8.4 %)']);
  const table = await text(page, '#device-comparison');
  for (const agreeing of ['Timer time', 'Elapsed time', 'Distance', 'Normalized power', 'Average heart rate'])
    t.false(table.includes(agreeing), `${agreeing} agrees: no row`);
  t.is(
    await text(page, '#device-agreeing'),
    'Within 1 % of the device: timer time, elapsed time, distance, normalized power, average heart rate.',
  );
  t.is(await page.$('#device-agrees'), null);

  // The records left out and the samples stored as missing, each with its reason.
  t.deepEqual(await texts(page, '#record-checks li'), [
    "3 records left out: their timestamps repeat another record's (the last one in the file is kept)",
    '1 record left out: its timestamp lies outside the session (a device clock that jumped, or a record written after the end)',
    '2 power samples stored as missing: outside the plausible 0 to 3,000 W, so sensor glitches rather than effort',
    '1 heart rate sample stored as missing: outside the plausible 0 to 250 bpm, so sensor glitches rather than effort',
  ]);

  // Laps: their timer and moving time.
  t.deepEqual((await texts(page, '#laps thead th')).slice(0, 5), ['Lap', 'Start', 'Duration', 'Timer', 'Moving']);
  t.deepEqual((await texts(page, '#laps tr[data-lap="1"] td')).slice(2, 5), ['30:00', '28:20', '27:00']);

  await fits(t, page, 'activity-device-v2');
  await page.context().close();
  t.deepEqual(errors, [], 'no console or page errors');
  t.deepEqual(csp, [], 'no CSP violations');
});

test('the data checks made at ingest: each difference names its rule; a device error is listed as one, not compared; a difference no rule explains says so', async (t) => {
  const user = await createTestUser(suite.service);
  // The device's NP of 773 W above the ride's best 30 s (a device error); its average power 185 W
  // without zeros (a convention); its cadence unexplained; the rest agreeing.
  const id = await storeOne(user, {
    summary: SUMMARY,
    ingest_version: 2,
    timer_seconds: TIMER,
    moving_seconds: MOVING,
    device_summary: { ...DEVICE, normalized_power: 773, avg_speed: DISTANCE / MOVING, total_ascent: 412 },
    device_checks: {
      total_timer_time: { agrees: true },
      total_elapsed_time: { agrees: true },
      total_distance: { agrees: true },
      avg_power: { agrees: false, rule: 'power-zeros-left-out' },
      normalized_power: { agrees: false, rule: 'np-above-best-30s' },
      avg_heart_rate: { agrees: true },
      avg_cadence: { agrees: false },
      avg_speed: { agrees: true },
      total_ascent: { agrees: true },
    },
    dropped_records: {},
    implausible_samples: {},
  });
  const token = await tokenFor(suite.service, user, ['data:read']);
  const details = (await api(suite.service, token, 'GET', `/api/v1/activities/${id}`)).body;
  t.deepEqual(details.device_checks.normalized_power, {
    agrees: false,
    rule: 'np-above-best-30s',
    kind: 'device-error',
    explanation: details.device_checks.normalized_power.explanation,
  });
  t.regex(details.device_checks.normalized_power.explanation, /cannot exceed the highest of them/);
  t.like(details.device_checks.avg_power, { agrees: false, rule: 'power-zeros-left-out', kind: 'convention' });
  t.deepEqual(details.device_checks.avg_cadence, { agrees: false, rule: null, kind: null, explanation: null });
  t.deepEqual(details.device_checks.total_timer_time, { agrees: true, rule: null, kind: null, explanation: null });

  const { page, csp, errors } = await open(user, id);
  t.deepEqual(await texts(page, '#device-comparison thead th'), ['', 'Device says', 'We compute', 'Why they differ']);
  t.deepEqual(await page.$$eval('#device-comparison tbody tr', (els) => els.map((el) => el.getAttribute('data-compare'))), [
    'avg_power',
    'avg_cadence',
  ]);
  t.is(
    await page.$eval('#device-comparison tr[data-compare="avg_power"] [data-rule]', (el) => el.getAttribute('data-rule')),
    'power-zeros-left-out',
  );
  t.regex(
    await text(page, '#device-comparison tr[data-compare="avg_power"] .why'),
    /^power-zeros-left-out: the device's average power is above/,
  );
  t.regex(
    await text(page, '#device-comparison tr[data-compare="avg_cadence"] .why'),
    /^No rule of the data checks explains this difference\./,
  );
  const error = await text(page, '#device-errors li[data-rule="np-above-best-30s"]');
  t.regex(
    error,
    /^The device's normalized power, 773 W, is impossible: .*cannot exceed the highest of them \(np-above-best-30s\)\. The device's error/,
  );
  t.is(
    await text(page, '#device-agreeing'),
    'Agreeing with the device: timer time, elapsed time, distance, average heart rate, average speed, ascent.',
  );
  await fits(t, page, 'activity-device-checks');
  await page.context().close();
  t.deepEqual(errors, [], 'no console or page errors');
  t.deepEqual(csp, [], 'no CSP violations');
});

test("when every compared value is within 1 % of the device's: one line, no table; nothing left out: one line", async (t) => {
  const user = await createTestUser(suite.service);
  const id = await storeOne(user, {
    summary: {
      ...SUMMARY,
      power: { mean: 186, max: 905, normalized: 232, work: 647 },
      cadence: { mean: 82.4, max: 121 },
      speed: { mean: 8.66, max: 15.3 },
      altitude: { gain: 450 },
    },
    ingest_version: 2,
    timer_seconds: TIMER,
    moving_seconds: TIMER,
    device_summary: DEVICE,
    dropped_records: {},
    implausible_samples: {},
  });
  const { page, csp, errors } = await open(user, id);
  t.is(await page.$('#device-comparison'), null);
  t.regex(
    await text(page, '#device-agrees'),
    /^Agrees with the device's own summary \(within 1 %: timer time, elapsed time, distance, average power, normalized power, average heart rate, average cadence, average speed, ascent\)\.$/,
  );
  t.is(await page.$('#record-checks'), null);
  t.is(await text(page, '#record-checks-clean'), 'Every record of the file was used, and every sample was within its plausible range.');
  await page.context().close();
  t.deepEqual(errors, [], 'no console or page errors');
  t.deepEqual(csp, [], 'no CSP violations');
});

test('version 1 (nulls): no timer or moving time, no device table, the version named with a hint to reprocess', async (t) => {
  const user = await createTestUser(suite.service);
  const id = await storeOne(user, { summary: { power: { mean: 200, max: 900 }, heart_rate: { mean: 141, max: 178 } } });
  const token = await tokenFor(suite.service, user, ['data:read']);
  const details = (await api(suite.service, token, 'GET', `/api/v1/activities/${id}`)).body;
  t.is(details.ingest_version, 1);
  t.is(details.timer_duration, null);
  t.is(details.device_summary, null);
  t.is(details.dropped_records, null);

  const { page, csp, errors } = await open(user, id);
  t.is(await text(page, '#activity-duration'), '1:02:05');
  for (const absent of [
    '#activity-timer',
    '#activity-moving',
    '#activity-np',
    '#activity-work',
    '#device-comparison',
    '#device-agrees',
    '#record-checks',
  ])
    t.is(await page.$(absent), null, absent);
  t.regex(await text(page, '#ingest-version'), /^Made by version 1 of the ingest rules \(current: 2\):.*npm run cli -- reprocess/);
  // Nothing is known about dropped records then; the samples were checked.
  t.is(await text(page, '#record-checks-clean'), 'Every sample was within its plausible range.');
  await fits(t, page, 'activity-device-v1');
  await page.context().close();
  t.deepEqual(errors, [], 'no console or page errors');
  t.deepEqual(csp, [], 'no CSP violations');
});
