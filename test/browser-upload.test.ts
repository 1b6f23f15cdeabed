import test from 'ava';
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { browserSuite, openPage, signIn } from './helpers/browser.ts';
import { createTestUser, tokenFor } from './helpers/users.ts';
import { api } from './helpers/activities.ts';
import { fixturesDir } from './helpers/fixtures.ts';
import { yazlZip } from './helpers/zip.ts';
import { collectErrors, phoneAndDesktop, type ExpectedFailure } from './helpers/page-checks.ts';

// Callbacks run in Chromium; this project's TypeScript has no DOM library, so what they use is declared here.
type El = {
  dataset: Record<string, string | undefined>;
  hidden: boolean;
  value: number;
  textContent: string | null;
  querySelector(s: string): El | null;
  querySelectorAll(s: string): Iterable<El>;
  getAttribute(n: string): string | null;
};
declare const document: { documentElement: { scrollWidth: number }; querySelectorAll(s: string): Iterable<El> };
declare class DataTransfer {
  items: { add(file: File): void };
}

const suite = browserSuite(test, { workers: true });

const fixture = (name: string) => readFileSync(`${fixturesDir()}/fit/${name}`);
const THREE = ['2016-05-23_18-14-30_4_25.fit', '2020-06-01-16-52-40.fit', '6449921903_ACTIVITY.fit'];

/** A real FIT file with one byte of its records flipped: still recognisably FIT, so it is accepted and fails (CRC). */
function corruptFit(): Buffer {
  const bytes = Buffer.from(fixture('2012_02_05_09_03_59.fit'));
  bytes[200] = bytes[200]! ^ 0xff;
  return bytes;
}

/** Errors of a page (page-checks.ts), `expect` adding a failed load the test provokes on purpose (a 422 answer). */
function watch(page: Page, csp: string[]) {
  const expected: ExpectedFailure[] = [];
  const errors = collectErrors(page, expected);
  return {
    expect: (url: RegExp, status: number) => expected.push({ url, status }),
    check(t: { deepEqual: (a: unknown, b: unknown, m?: string) => void }) {
      t.deepEqual(errors, [], 'no console or page errors');
      t.deepEqual(csp, [], 'no CSP violations');
    },
  };
}

/** A new athlete signed in on `path` in a fresh page (its errors watched), with a data:read token for checking through the API. */
async function signedIn(path: string) {
  const user = await createTestUser(suite.service);
  const token = await tokenFor(suite.service, user, ['data:read']);
  const { page, csp } = await openPage(suite.browser);
  const console = watch(page, csp);
  await signIn(page, suite.service.url, user.email, path);
  await page.waitForURL((u) => u.pathname === path);
  return { user, token, page, console };
}

type Source = { id: string; status: string; activity_ids: string[]; error: { code: string; message: string } | null };

test('an athlete uploads three real files and a damaged one: per-file progress, each processed with a link to its activity, the damaged one failed with its code', async (t) => {
  const { token, page, console } = await signedIn('/activities');
  await page.click('#upload-link');
  await page.waitForURL((u) => u.pathname === '/upload');
  t.truthy(await page.$('header.site a[href="/upload"]'), 'the header links the upload page');

  await page.setInputFiles('#files', [
    ...THREE.map((name) => ({ name, mimeType: 'application/octet-stream', buffer: fixture(name) })),
    { name: 'damaged.fit', mimeType: 'application/octet-stream', buffer: corruptFit() },
  ]);
  await page.waitForFunction(
    () => {
      const items = [...document.querySelectorAll('#uploads li.upload-item')];
      return items.length === 4 && items.every((li) => ['processed', 'failed'].includes(li.dataset.state!));
    },
    undefined,
    { timeout: 60_000 },
  );

  const rows = await page.$$eval('#uploads li.upload-item', (elements) =>
    (elements as unknown as El[]).map((li) => ({
      file: (li as unknown as El).dataset.file!,
      state: (li as unknown as El).dataset.state!,
      sourceId: (li as unknown as El).dataset.sourceId!,
      progress: li.querySelector('progress')!.value,
      percent: li.querySelector('.percent')!.textContent,
      links: [...li.querySelectorAll('a.activity-link')].map((a) => a.getAttribute('href')),
      code: li.querySelector('.error-code')?.textContent ?? null,
      message: li.querySelector('.error-message')?.textContent ?? null,
    })),
  );
  t.deepEqual(rows.map((r) => r.file).sort(), [...THREE, 'damaged.fit'].sort());
  for (const row of rows) {
    t.is(row.progress, 100, `${row.file}: upload progress reached 100 %`);
    t.is(row.percent, '100 %');
    // What the page shows is what the API says about the same source.
    const source = (await api(suite.service, token, 'GET', `/api/v1/sources/${row.sourceId}`)).body as Source;
    t.is(source.status, row.state, row.file);
    if (row.file === 'damaged.fit') {
      t.is(row.state, 'failed');
      t.is(row.code, source.error!.code);
      t.is(row.code, 'invalid_fit');
      t.is(row.message, source.error!.message);
      t.deepEqual(row.links, []);
    } else {
      t.is(row.state, 'processed', row.file);
      t.true(source.activity_ids.length >= 1);
      t.deepEqual(
        row.links,
        source.activity_ids.map((id) => `/activities/${id}`),
        row.file,
      );
    }
  }

  await page.waitForSelector('#upload-summary:not([hidden])');
  t.is(await page.textContent('#upload-summary'), '4 files: 3 new, 1 failed.');

  // The same file again: named a duplicate, linked to what it already is, counted apart.
  await page.setInputFiles('#files', [{ name: THREE[0]!, mimeType: 'application/octet-stream', buffer: fixture(THREE[0]!) }]);
  const again = await page.waitForSelector(`#uploads li.upload-item:first-child[data-state="duplicate"]`, { timeout: 60_000 });
  t.is(await again.$eval('.status', (s) => s.textContent), 'Already uploaded');
  t.regex((await again.$eval('.notice', (p) => p.textContent))!, /^The same file was uploaded before; nothing new was added\./);
  t.deepEqual(
    await again.$$eval('a.activity-link', (as) => as.map((a) => a.getAttribute('href'))),
    rows.find((r) => r.file === THREE[0])!.links,
  );
  await page.waitForFunction(() => [...document.querySelectorAll('#upload-summary')][0]?.textContent === '1 file: 1 already uploaded.');

  await phoneAndDesktop(t, page, 'upload');
  const first = rows.find((r) => r.state === 'processed')!;
  await page.click(`li.upload-item[data-file="${first.file}"] a.activity-link`);
  await page.waitForURL((u) => u.pathname === first.links[0]);
  t.is(await page.textContent('#activity-id'), first.links[0]!.split('/').pop()!);
  console.check(t);
  await page.context().close();
});

test('a file dropped on the page is uploaded with the chosen sport', async (t) => {
  const { token, page, console } = await signedIn('/upload');
  await page.selectOption('#sport', 'running');
  // A CSV without a sport column: the upload needs the sport field.
  const csv = [
    'timestamp,heart_rate,speed',
    ...Array.from(
      { length: 120 },
      (_, i) => `${new Date(Date.UTC(2025, 3, 2, 7, 0, i)).toISOString().replace('Z', '+00:00')},${120 + (i % 10)},3.1`,
    ),
  ].join('\n');
  const dataTransfer = await page.evaluateHandle((text) => {
    const dt = new DataTransfer();
    dt.items.add(new File([text], 'morning-run.csv', { type: 'text/csv' }));
    return dt;
  }, csv);
  await page.dispatchEvent('#drop-zone', 'dragenter', { dataTransfer });
  t.true(await page.$eval('#drop-zone', (el) => el.classList.contains('dragging')));
  await page.dispatchEvent('#drop-zone', 'drop', { dataTransfer });
  const row = await page.waitForSelector('li.upload-item[data-file="morning-run.csv"][data-state="processed"]', { timeout: 60_000 });
  const href = await row.$eval('a.activity-link', (a) => a.getAttribute('href')!);
  const activity = (await api(suite.service, token, 'GET', `/api/v1${href}`)).body as { sport: string };
  t.is(activity.sport, 'running');
  t.false(await page.$eval('#drop-zone', (el) => el.classList.contains('dragging')));
  console.check(t);
  await page.context().close();
});

test('more than 10 files or another extension are refused in the page; a file the server refuses shows its detail', async (t) => {
  const { token, page, console } = await signedIn('/upload');
  t.true(await page.$eval('#upload-error', (el) => (el as unknown as El).hidden));

  const small = fixture('2016-05-23_18-14-30_4_25.fit');
  await page.setInputFiles(
    '#files',
    Array.from({ length: 11 }, (_, i) => ({ name: `ride-${i}.fit`, mimeType: 'application/octet-stream', buffer: small })),
  );
  t.is(await page.textContent('#upload-error'), 'You chose 11 files: upload at most 10 at a time. Nothing was uploaded.');
  t.false(await page.$eval('#upload-error', (el) => (el as unknown as El).hidden));

  await page.setInputFiles('#files', [
    { name: 'ride.fit', mimeType: 'application/octet-stream', buffer: small },
    { name: 'route.kml', mimeType: 'application/vnd.google-earth.kml+xml', buffer: Buffer.from('<kml/>') },
  ]);
  t.regex(
    (await page.textContent('#upload-error'))!,
    /^Not a \.fit, \.csv, \.gpx, \.tcx, \.fit\.gz, \.csv\.gz, \.gpx\.gz, \.tcx\.gz file: route\.kml\. Nothing was uploaded\.$/,
  );
  t.is(await page.$$eval('#uploads li', (items) => items.length), 0);
  t.deepEqual((await api(suite.service, token, 'GET', '/api/v1/sources/')).body, [], 'nothing was sent');

  // A PNG named .fit passes the page's check; the server answers 422 with a detail naming it.
  console.expect(/\/api\/v1\/activities\/upload$/, 422);
  const png = Buffer.from(
    '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8ffff3f0005fe02fea7d6a4f80000000049454e44ae426082',
    'hex',
  );
  await page.setInputFiles('#files', [{ name: 'photo.fit', mimeType: 'application/octet-stream', buffer: png }]);
  t.true(await page.$eval('#upload-error', (el) => (el as unknown as El).hidden), 'a valid selection clears the refusal');
  const row = await page.waitForSelector('li.upload-item[data-file="photo.fit"][data-state="failed"]');
  t.regex((await row.textContent())!, /Refused \(422\): "photo\.fit" is not a FIT or CSV file/);
  console.check(t);
  await page.context().close();
});

test('a zip history import shows its upload progress, the backfill progress and completion, with the failed file', async (t) => {
  const user = await createTestUser(suite.service);
  const token = await tokenFor(suite.service, user, ['data:read']);
  const zip = await yazlZip([
    { name: 'export/2016-05-23_18-14-30_4_25.fit', data: fixture('2016-05-23_18-14-30_4_25.fit') },
    { name: 'export/2020-06-01-16-52-40.fit', data: fixture('2020-06-01-16-52-40.fit') },
    { name: 'export/damaged.fit', data: corruptFit() },
    { name: 'export/readme.txt', data: Buffer.from('not an activity') },
  ]);
  const { page, csp } = await openPage(suite.browser);
  const console = watch(page, csp);
  await signIn(page, suite.service.url, user.email, '/upload');
  await page.waitForURL((u) => u.pathname === '/upload');
  await page.setInputFiles('#archive', { name: 'history.zip', mimeType: 'application/zip', buffer: zip });
  await page.click('#history-submit');
  await page.waitForSelector('#history[data-state="completed"]', { timeout: 90_000 });

  t.is(await page.$eval('#history-progress', (el) => (el as unknown as El).value), 100);
  t.is(await page.textContent('#history-percent'), '100 %');
  t.is(
    await page.textContent('#history-state'),
    'Import complete. 3 activity files: 2 new, 1 failed (listed below); 1 other entry skipped (not FIT, GPX, TCX or CSV, unsafe name, or too large). See your activities',
  );
  const errors = await page.$$eval('#history-errors li', (items) => items.map((li) => li.textContent));
  t.is(errors.length, 1);
  t.regex(errors[0]!, /damaged\.fit: .*\(invalid_fit\)$/);

  // Loaded back to the oldest activity's local start, as the API's list says.
  const activities = (await api(suite.service, token, 'GET', '/api/v1/activities/')).body as { start_local: string }[];
  t.is(activities.length, 2);
  t.is(await page.textContent('#history-loaded-until'), activities.at(-1)!.start_local.slice(0, 16).replace('T', ' '));
  await phoneAndDesktop(t, page, 'upload-history');
  console.check(t);
  await page.context().close();
});

test('signed out, the upload page sends you to sign in', async (t) => {
  const res = await fetch(`${suite.service.url}/upload`, { redirect: 'manual' });
  t.is(res.status, 303);
  t.is(res.headers.get('location'), '/signin?next=%2Fupload');
});
