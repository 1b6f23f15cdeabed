import test from 'ava';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestUser, tokenFor } from './helpers/users.ts';
import { buildActivityFit } from './helpers/fit-builder.ts';
import { api } from './helpers/activities.ts';
import { yazlZip } from './helpers/zip.ts';
import { signedInClient } from './helpers/http.ts';
import { runCli } from './helpers/cli.ts';
import { envOf } from './helpers/worker-process.ts';

// The platforms' export layouts through the history import: a Strava bulk export (activities.csv's
// names, descriptions, sports, gear), Garmin Connect's zip inside a zip, a folder through the CLI.

const DAY = 86_400_000;
const fit = (n: number, sport = 'cycling', subSport?: string) =>
  buildActivityFit({
    utcOffsetSeconds: 0,
    sessions: [{ sport, ...(subSport ? { subSport } : {}), start: new Date(Date.parse('2024-03-01T07:00:00Z') + n * DAY), seconds: 120 }],
  });

let service: TestService;
test.before(async () => {
  service = await startTestService({
    workers: true,
    env: { INGEST_CONCURRENCY: '2', BACKFILL_STATUS_INTERVAL_MS: '100', BACKFILL_STATUS_SECONDS: '3600' },
  });
});
test.after.always(() => service?.close());

async function athlete() {
  const user = await createTestUser(service);
  return { user, token: await tokenFor(service, user, ['data:read', 'data:write']) };
}

async function importArchive(token: string, archive: Buffer, name = 'export.zip') {
  const form = new FormData();
  form.append('archive', new Blob([archive as Uint8Array<ArrayBuffer>]), name);
  const res = await fetch(`${service.url}/api/v1/activities/backfill`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  if (res.status !== 202) throw new Error(`backfill: ${res.status} ${await res.text()}`);
  const stream = await fetch(`${service.url}/api/v1/activities/backfill-status`, { headers: { authorization: `Bearer ${token}` } });
  const lines = (await stream.text())
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { lines, files: lines.at(-1)!.files as Record<string, unknown> };
}

const activitiesOf = (userId: string) =>
  service.deps.db
    .selectFrom('activities')
    .select(['id', 'sport', 'name', 'description', 'tags', 'start_time'])
    .where('user_id', '=', userId)
    .orderBy('start_time')
    .execute();

const HEADER =
  'Activity ID,Activity Date,Activity Name,Activity Type,Activity Description,Elapsed Time,Distance,Filename,Activity Gear,Elapsed Time,Distance';
const EVIL_NAME = `Evil\u0000<script>alert(1)</script>${'x'.repeat(1_000_000)}`;

async function stravaExport() {
  const csv = [
    HEADER,
    `1,"Mar 2, 2024",Morning <b>Ride</b> & co,Ride,"Line 1\nLine 2, ""quoted""",120,1.0,activities/1.fit.gz,Canyon Aeroad (2019),120,1000`,
    `2,"Mar 3, 2024",Trail loop,Trail Run,,120,1.0,activities/2.fit,,120,1000`,
    `3,"Mar 4, 2024",Zwift,Virtual Ride,,120,1.0,activities/3.fit.gz,,120,1000`,
    `4,"Mar 5, 2024",Gym,Weight Training,,3600,0,,,3600,0`,
    `5,"Mar 6, 2024",Yoga,Yoga,,3600,0,,,3600,0`,
    `6,"Mar 7, 2024",Sneaky,Run,,60,0,../../etc/passwd,,60,0`,
    `7,"Mar 8, 2024","${EVIL_NAME.replace(/"/g, '""')}",Quidditch,"D\u0000E",120,1.0,activities/7.fit.gz,,120,1000`,
  ].join('\n');
  return yazlZip([
    { name: 'activities.csv', data: Buffer.from(csv) },
    { name: 'profile.csv', data: Buffer.from('Email,Name\na@b.c,A\n') },
    { name: 'activities/1.fit.gz', data: gzipSync(fit(1)) },
    { name: 'activities/2.fit', data: fit(2, 'running') },
    { name: 'activities/3.fit.gz', data: gzipSync(fit(3, 'cycling', 'indoorCycling')) },
    { name: 'activities/7.fit.gz', data: gzipSync(fit(7, 'running')) },
    { name: 'activities/8.fit', data: fit(8, 'running') },
  ]);
}

test('a Strava bulk export: names, descriptions, sports and gear from activities.csv; counts by format and outcome; again: nothing twice', async (t) => {
  const { user, token } = await athlete();
  const archive = await stravaExport();
  const { files } = await importArchive(token, archive, 'export_12345.zip');
  t.deepEqual(files, {
    found: 5,
    loaded: 5,
    already_stored: 0,
    failed: 0,
    skipped: 2,
    formats: { fit: { found: 5, loaded: 5, already_stored: 0, failed: 0 } },
    skipped_by_reason: { export_csv: 1, export_other: 1 },
    nested_archives: 0,
    activities_csv: { rows: 7, with_file: 4, without_file: 2, file_missing: 1 },
  });
  const rows = await activitiesOf(user.id);
  t.deepEqual(
    rows.map((r) => [r.sport, r.name?.slice(0, 31) ?? null, r.tags]),
    [
      ['cycling.road', 'Morning <b>Ride</b> & co', ['gear:Canyon Aeroad 2019']],
      ['running.trail', 'Trail loop', []],
      ['cycling+stationary+virtual', 'Zwift', []],
      ['running', 'Evil <script>alert(1)</script>x', []],
      ['running', null, []],
    ],
    "Strava's type wins over the file's sport; an unknown type keeps the file's; a file not in the CSV has no name",
  );
  t.is(rows[0]!.description, 'Line 1\nLine 2, "quoted"');
  t.is(rows[3]!.name!.length, 255, 'a 1 MB name is cut to 255 characters');
  t.is(rows[3]!.description, 'DE', 'NUL removed');

  const one = await api(service, token, 'GET', `/api/v1/activities/${rows[0]!.id}`);
  t.is(one.status, 200);
  t.like(one.body, { name: 'Morning <b>Ride</b> & co', description: 'Line 1\nLine 2, "quoted"', sport: 'cycling.road' });
  const plain = await api(service, token, 'GET', `/api/v1/activities/${rows[4]!.id}`);
  t.like(plain.body, { name: null, description: null });

  // The web page and list show the name escaped.
  const web = await signedInClient(service.url, user.email);
  const page = await (await web.get(`/activities/${rows[3]!.id}`)).text();
  t.false(page.includes('<script>alert'), 'no raw markup from the name');
  t.regex(page, /<title>Evil &lt;script&gt;alert\(1\)&lt;\/script&gt;x+ 2024-03-08 · Training data service<\/title>/);
  t.regex(page, /<h1 id="activity-title">Evil &lt;script&gt;alert\(1\)&lt;\/script&gt;x+<\/h1>/);
  const first = await (await web.get(`/activities/${rows[0]!.id}`)).text();
  t.regex(first, /<p id="activity-description" class="activity-description">Line 1\nLine 2, (&quot;|")quoted(&quot;|")<\/p>/);
  const list = await (await web.get('/activities')).text();
  t.regex(list, /<td class="activity-name">Morning &lt;b&gt;Ride&lt;\/b&gt; &amp; co<\/td>/);

  // The same export again: every file is recognised by its content; nothing is loaded twice.
  const again = await importArchive(token, archive, 'export_12345.zip');
  t.like(again.files, {
    found: 5,
    loaded: 0,
    already_stored: 5,
    formats: { fit: { found: 5, loaded: 0, already_stored: 5, failed: 0 } },
  });
  t.is((await activitiesOf(user.id)).length, 5);

  // Reprocessing re-derives the activities from their files: the export's sport, name and tags stay.
  const reprocess = await runCli(envOf(service.config, { LOG_LEVEL: 'silent' }), 'reprocess', '--user', user.email, '--all');
  t.is(reprocess.code, 0, reprocess.stderr + reprocess.stdout);
  t.deepEqual(await activitiesOf(user.id), rows);
});

test('a Garmin Connect export: the FIT files of the zip inside the zip; a zip nested too deep is skipped and counted', async (t) => {
  const { user, token } = await athlete();
  const tooDeep = await yazlZip([{ name: 'z.zip', data: await yazlZip([{ name: 'deep.fit', data: fit(40) }]) }]);
  const part1 = await yazlZip([
    { name: 'a.fit', data: fit(20) },
    { name: 'sub/b.fit', data: fit(21, 'running') },
    { name: 'nested.zip', data: tooDeep },
  ]);
  const archive = await yazlZip([
    { name: 'DI_CONNECT/DI-Connect-Uploaded-Files/UploadedFiles_0-_Part1.zip', data: part1 },
    { name: 'DI_CONNECT/DI-Connect-Fitness/user_biometrics.json', data: Buffer.from('{}') },
  ]);
  const { files } = await importArchive(token, archive, 'garmin.zip');
  t.like(files, {
    found: 2,
    loaded: 2,
    failed: 0,
    skipped: 2,
    skipped_by_reason: { unsupported: 1, too_deep: 1 },
    nested_archives: 2,
    formats: { fit: { found: 2, loaded: 2, already_stored: 0, failed: 0 } },
  });
  t.false('activities_csv' in files);
  const rows = await activitiesOf(user.id);
  t.deepEqual(
    rows.map((r) => [r.sport, r.name]),
    [
      ['cycling', null],
      ['running', null],
    ],
  );
});

test('the CLI imports a folder holding a Strava layout and a zip; its summary counts by format and names the activities.csv rows', async (t) => {
  const user = await createTestUser(service);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cli-export-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(path.join(dir, 'activities'));
  writeFileSync(
    path.join(dir, 'activities.csv'),
    [
      HEADER,
      '11,"Apr 1, 2024",Folder ride,GravelRide,By folder,120,1,activities/11.fit.gz,,120,1',
      '12,"Apr 2, 2024",Manual,Walk,,60,0,,,60,0',
    ].join('\n'),
  );
  writeFileSync(path.join(dir, 'activities', '11.fit.gz'), gzipSync(fit(50)));
  writeFileSync(path.join(dir, 'activities', 'notes.txt'), 'no');
  writeFileSync(path.join(dir, 'activities', 'garmin.zip'), await yazlZip([{ name: 'g.fit', data: fit(51, 'running') }]));
  const run = await runCli(envOf(service.config, { LOG_LEVEL: 'silent' }), 'backfill', '--user', user.email, dir, '--wait', '--json');
  t.is(run.code, 0, run.stderr + run.stdout);
  const lines = run.stdout
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  t.like(lines[0], {
    event: 'scanned',
    total: 2,
    formats: { fit: 2 },
    nested_archives: 1,
    activities_csv: { rows: 2, with_file: 1, without_file: 1, file_missing: 0 },
  });
  t.like(lines.at(-1), {
    event: 'summary',
    loaded: 2,
    formats: { fit: { found: 2, loaded: 2 } },
    skipped_by_reason: { export_csv: 1, unsupported: 1 },
  });
  const rows = await activitiesOf(user.id);
  t.deepEqual(
    rows.map((r) => [r.sport, r.name, r.description]),
    [
      ['cycling.gravel', 'Folder ride', 'By folder'],
      ['running', null, null],
    ],
  );
});
