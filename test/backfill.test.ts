import test from 'ava';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestUser, tokenFor } from './helpers/users.ts';
import { buildActivityFit } from './helpers/fit-builder.ts';
import { api, uploadAndWait } from './helpers/activities.ts';
import { yazlZip } from './helpers/zip.ts';
import { envOf, kill, startWorkerProcess } from './helpers/worker-process.ts';
import type { Job } from 'bullmq';
import { createBackfill, markBackfillScanned } from '../db/backfills.ts';
import { backfillProcessor } from '../workers/backfill.ts';
import type { BackfillJob } from '../workers/queues.ts';
import { poll } from './helpers/curves.ts';
import { archiveKey } from '../lib/object-store.ts';
import { objectFile } from '../lib/object-store-local.ts';
import { multipartBody } from './helpers/multipart.ts';

const DAY = 86_400_000;

/** A short ride on day `n` after 2025-01-01 (07:00 UTC, local UTC+1). */
function ride(n: number, seconds = 120) {
  return buildActivityFit({
    utcOffsetSeconds: 3600,
    sessions: [{ sport: 'cycling', start: new Date(Date.parse('2025-01-01T07:00:00Z') + n * DAY), seconds }],
  });
}
const localStart = (n: number) => new Date(Date.parse('2025-01-01T08:00:00Z') + n * DAY).toISOString().slice(0, 19);

async function postBackfill(service: TestService, token: string, archive: Buffer, name = 'export.zip') {
  const form = new FormData();
  form.append('archive', new Blob([archive as Uint8Array<ArrayBuffer>], { type: 'application/zip' }), name);
  const res = await fetch(`${service.url}/api/v1/activities/backfill`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  return { status: res.status, body: await res.json() };
}

/** Read the status stream to its end: its lines (parsed). */
async function readStatus(service: TestService, token: string) {
  const res = await fetch(`${service.url}/api/v1/activities/backfill-status`, { headers: { authorization: `Bearer ${token}` } });
  const text = await res.text();
  return {
    status: res.status,
    type: res.headers.get('content-type'),
    lines: text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l)),
    text,
  };
}

/** Open the status stream and read it a line at a time: `next()` is the next line (parsed), or null once the stream has ended. */
async function openStatus(service: TestService, token: string) {
  const res = await fetch(`${service.url}/api/v1/activities/backfill-status`, { headers: { authorization: `Bearer ${token}` } });
  if (res.status !== 200 || !res.body) throw new Error(`backfill-status: ${res.status}`);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  return {
    async next(): Promise<Record<string, unknown> | null> {
      for (;;) {
        const end = buffered.indexOf('\n');
        if (end >= 0) {
          const line = buffered.slice(0, end);
          buffered = buffered.slice(end + 1);
          if (line) return JSON.parse(line);
          continue;
        }
        const { value, done } = await reader.read();
        if (done) {
          if (buffered.trim()) throw new Error(`unterminated line: ${buffered}`);
          return null;
        }
        buffered += value;
      }
    },
  };
}

async function backfillOf(service: TestService, userId: string) {
  return service.deps.db
    .selectFrom('backfills')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('created_at', 'desc')
    .executeTakeFirstOrThrow();
}

async function athlete(service: TestService) {
  const user = await createTestUser(service);
  return { user, token: await tokenFor(service, user, ['data:read', 'data:write']) };
}

let service: TestService;
test.before(async () => {
  // A time limit of an hour, out of reach of any test here: a stream that ends, ends because its backfill did.
  service = await startTestService({
    workers: true,
    env: { INGEST_CONCURRENCY: '1', BACKFILL_STATUS_INTERVAL_MS: '100', BACKFILL_STATUS_SECONDS: '3600' },
  });
});
test.after.always(() => service?.close());

test('an archive is loaded newest first; the status stream moves backward, reports failed files and ends when done', async (t) => {
  const { user, token } = await athlete(service);
  // One file was uploaded before: the backfill recognises it and does not load it again.
  const [earlier] = await uploadAndWait(service, token, [{ name: 'day3.fit', bytes: ride(3) }]);
  const days = [5, 1, 9, 3, 7, 2, 8, 4, 6];
  const truncated = ride(10).subarray(0, 200);
  const archive = await yazlZip([
    ...days.map((n) => ({ name: n % 2 ? `2025/ride-${n}.fit` : `ride-${n}.fit`, data: ride(n) })),
    { name: 'extra/ride-0.fit.gz', data: gzipSync(ride(0)) },
    { name: 'broken.fit', data: truncated },
    { name: 'notes.txt', data: Buffer.from('not an activity') },
  ]);
  const started = await postBackfill(service, token, archive);
  t.is(started.status, 202);
  t.like(started.body, { filename: 'export.zip', status: 'scanning', error: null, completed_at: null });

  const stream = await readStatus(service, token);
  t.is(stream.status, 200);
  t.is(stream.type, 'application/x-ndjson');
  for (const line of stream.lines) t.true('backfill_loaded_until' in line !== 'error' in line, JSON.stringify(line));
  const progress = stream.lines.filter((l) => 'backfill_loaded_until' in l).map((l) => l.backfill_loaded_until as string | null);
  const seen = progress.filter((v): v is string => v !== null);
  t.deepEqual(seen, [...seen].sort().reverse(), 'backfill_loaded_until only moves backward');
  t.is(progress.at(-1), localStart(0), 'ends at the oldest activity, as a naive local date-time');
  const files = {
    found: 11,
    loaded: 9,
    already_stored: 1,
    failed: 1,
    skipped: 1,
    formats: { fit: { found: 11, loaded: 9, already_stored: 1, failed: 1 } },
    skipped_by_reason: { unsupported: 1 },
    nested_archives: 0,
  };
  t.deepEqual(stream.lines.at(-1).files, files, 'the last line says what became of the files: day 3 was stored before');
  t.true(
    stream.lines.slice(0, -1).every((l) => !('files' in l)),
    'only the last line of a completed import carries counts',
  );
  t.like(
    await backfillOf(service, user.id),
    { status: 'completed' },
    'the stream ended when the backfill completed (its time limit is an hour away)',
  );
  const errors = stream.lines.filter((l) => 'error' in l);
  t.is(errors.length, 1);
  t.regex(errors[0].error, /^broken\.fit: .*\(invalid_fit\)$/);

  const backfill = await backfillOf(service, user.id);
  t.like(backfill, { status: 'completed', files_total: 11, files_skipped: 1 });
  const sources = await service.deps.db
    .selectFrom('sources')
    .selectAll()
    .where('backfill_id', '=', backfill.id)
    .orderBy('processed_at')
    .execute();
  t.is(sources.length, 10, 'the file uploaded before is not a source of the backfill');
  const processed = sources.filter((s) => s.status === 'processed');
  const order = processed.map((s) => s.recorded_at!.getTime());
  t.deepEqual(
    order,
    [...order].sort((a, b) => b - a),
    'files were loaded newest first',
  );
  t.is(sources.at(-1)!.filename, 'broken.fit', 'a file without a readable date loads last');
  const activities = await service.deps.db.selectFrom('activities').select(['start_time']).where('user_id', '=', user.id).execute();
  t.is(activities.length, 10, 'day 3 once, days 0–9 otherwise');
  t.is((await api(service, token, 'GET', `/api/v1/sources/${earlier.id}`)).body.origin, 'manual_upload');

  // Reading the stream again after completion: the final state, then the end.
  const after = await readStatus(service, token);
  t.deepEqual(after.lines.at(-1), { backfill_loaded_until: localStart(0), files });
});

test('a user without a backfill gets one line (their earliest activity, or null) and the stream ends', async (t) => {
  const { token } = await athlete(service);
  const empty = await readStatus(service, token);
  t.deepEqual(empty.lines, [{ backfill_loaded_until: null }]);
  await uploadAndWait(service, token, [
    { name: 'a.fit', bytes: ride(20) },
    { name: 'b.fit', bytes: ride(15) },
  ]);
  t.deepEqual((await readStatus(service, token)).lines, [{ backfill_loaded_until: localStart(15) }]);
});

test('an archive that is not a zip fails the backfill, reported on the stream', async (t) => {
  const { user, token } = await athlete(service);
  const started = await postBackfill(service, token, Buffer.from('this is not a zip archive at all'), 'export.zip');
  t.is(started.status, 202);
  const stream = await readStatus(service, token);
  t.true(
    stream.lines.some((l) => typeof l.error === 'string' && l.error.startsWith('export.zip: ')),
    stream.text,
  );
  const failed = await backfillOf(service, user.id);
  t.like(failed, { status: 'failed' });
  // This backfill's archive (other tests of this file load theirs at the same time, in the same directory).
  t.false(existsSync(objectFile(service.config.DATA_DIR, archiveKey(failed.id))), 'the archive is removed');
});

test('backfill auth: no token 401, data:read cannot start one, data:write cannot read the stream, no archive is 422', async (t) => {
  const { user } = await athlete(service);
  const reader = await tokenFor(service, user, ['data:read']);
  const writer = await tokenFor(service, user, ['data:write']);
  t.is((await fetch(`${service.url}/api/v1/activities/backfill-status`)).status, 401);
  t.is((await postBackfill(service, reader, await yazlZip([]))).status, 403);
  t.is((await readStatus(service, writer)).status, 403);
  const form = new FormData();
  form.append('other', 'x');
  const res = await fetch(`${service.url}/api/v1/activities/backfill`, {
    method: 'POST',
    headers: { authorization: `Bearer ${writer}` },
    body: form,
  });
  t.is(res.status, 422);
  t.deepEqual(((await res.json()) as { detail: { loc: unknown[] }[] }).detail[0]!.loc, ['body', 'archive']);
});

test('an archive part without a Content-Type (python requests) is the archive: its .fit and .csv.gz files are loaded', async (t) => {
  const { user, token } = await athlete(service);
  const archive = await yazlZip([
    { name: 'a/ride.fit', data: ride(40) },
    { name: 'b/run.csv.gz', data: gzipSync('timestamp,sport,speed\n2025-03-01T06:00:00Z,running,3.0\n2025-03-01T06:00:01Z,,3.1\n') },
  ]);
  for (const type of [undefined, 'application/octet-stream']) {
    const { body, contentType } = multipartBody([{ name: 'archive', filename: 'export.zip', type, data: archive }]);
    const res = await fetch(`${service.url}/api/v1/activities/backfill`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
      body,
    });
    t.is(res.status, 202, `Content-Type ${type ?? 'none'}: ${await res.clone().text()}`);
    const { id } = (await res.json()) as { id: string };
    await poll(
      'backfill completed',
      async () =>
        (await service.deps.db.selectFrom('backfills').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status ===
        'completed',
    );
  }
  const sources = await service.deps.db
    .selectFrom('sources')
    .select(['type', 'status'])
    .where('user_id', '=', user.id)
    .orderBy('type')
    .execute();
  t.deepEqual(
    sources,
    [
      { type: 'csv', status: 'processed' },
      { type: 'fit', status: 'processed' },
    ],
    'the second archive found the same two files',
  );
});

test('the operator CLI backfills a directory for a user; the workers load it', async (t) => {
  const { user, token } = await athlete(service);
  const dir = mkdtempSync(join(os.tmpdir(), 'history-'));
  mkdirSync(join(dir, '2024'));
  for (const n of [30, 31, 32]) writeFileSync(join(dir, n === 31 ? '2024' : '.', `ride-${n}.fit`), ride(n));
  writeFileSync(join(dir, 'readme.md'), '# not an activity');
  const out = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, ['--import=tsx', 'bin/cli.ts', 'backfill', '--user', user.email, dir, '--json'], {
      env: envOf(service.config),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
  t.is(out.code, 0, out.stderr);
  t.like(JSON.parse(out.stdout), { user_id: user.id, total: 3, skipped: 1, queued: 3 });
  const stream = await readStatus(service, token);
  t.deepEqual(stream.lines.at(-1), {
    backfill_loaded_until: localStart(30),
    files: {
      found: 3,
      loaded: 3,
      already_stored: 0,
      failed: 0,
      skipped: 1,
      formats: { fit: { found: 3, loaded: 3, already_stored: 0, failed: 0 } },
      skipped_by_reason: { unsupported: 1 },
      nested_archives: 0,
    },
  });
  t.like(await backfillOf(service, user.id), { origin: 'cli', status: 'completed', files_total: 3 });
});

test.serial('a worker killed mid-backfill resumes without duplicates; the stream closes after its time limit', async (t) => {
  // The API alone here; the workers are separate processes.
  const api = await startTestService({
    workers: false,
    env: { JOB_LOCK_MS: '2000', INGEST_CONCURRENCY: '1', BACKFILL_STATUS_INTERVAL_MS: '200', BACKFILL_STATUS_SECONDS: '60' },
  });
  try {
    const { user, token } = await athlete(api);
    const files = Array.from({ length: 24 }, (_, n) => ({ name: `ride-${n}.fit`, data: ride(n, 1800) }));
    t.is((await postBackfill(api, token, await yazlZip(files))).status, 202);

    // Nothing loads without workers: the stream keeps reporting null until BACKFILL_STATUS_SECONDS
    // have passed on the service's clock, then ends.
    const waiting = await openStatus(api, token);
    t.deepEqual(await waiting.next(), { backfill_loaded_until: null });
    t.deepEqual(await waiting.next(), { backfill_loaded_until: null }, 'a second line: the stream did not end at its first');
    api.clock.advance(60_000);
    const rest: Record<string, unknown>[] = [];
    for (let line = await waiting.next(); line; line = await waiting.next()) rest.push(line);
    t.true(
      rest.every((l) => l.backfill_loaded_until === null),
      JSON.stringify(rest),
    );
    t.like(await backfillOf(api, user.id), { status: 'scanning' }, 'it ended for its time limit: no worker has even read the archive');

    const processedCount = async () =>
      Number(
        (
          await api.deps.db
            .selectFrom('sources')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('user_id', '=', user.id)
            .where('status', '=', 'processed')
            .executeTakeFirstOrThrow()
        ).n,
      );
    const first = await startWorkerProcess(api.config);
    await poll('5 files loaded', async () => (await processedCount()) >= 5, 60_000);
    // Paused, the queue hands the worker no further job (the one it is running, if any, goes on):
    // however fast the worker, the backfill is unfinished when it is killed.
    await api.deps.queues.ingest.pause();
    await kill(first, 'SIGKILL');
    const before = await processedCount();
    t.true(before >= 5 && before < 24, `${before} loaded when the worker was killed`);
    await api.deps.queues.ingest.resume();

    const second = await startWorkerProcess(api.config);
    try {
      await poll('the backfill completed', async () => (await backfillOf(api, user.id)).status === 'completed', 90_000);
      t.is((await backfillOf(api, user.id)).status, 'completed');
    } finally {
      await kill(second, 'SIGTERM');
    }
    const activities = await api.deps.db.selectFrom('activities').select(['id', 'start_time']).where('user_id', '=', user.id).execute();
    t.is(activities.length, 24, 'every file once');
    t.is(new Set(activities.map((a) => a.start_time.getTime())).size, 24, 'no duplicates');
    t.is(readdirSync(join(api.config.DATA_DIR, 'users', user.id, 'activities')).length, 24, 'one sample file each, no leftovers');
    t.deepEqual((await readStatus(api, token)).lines.at(-1), {
      backfill_loaded_until: localStart(0),
      files: {
        found: 24,
        loaded: 24,
        already_stored: 0,
        failed: 0,
        skipped: 0,
        formats: { fit: { found: 24, loaded: 24, already_stored: 0, failed: 0 } },
        skipped_by_reason: {},
        nested_archives: 0,
      },
    });
  } finally {
    await api.close();
  }
});

test('a backfill job run again after its scan finished queues what is left and does not fail the backfill', async (t) => {
  const { user } = await athlete(service);
  const { db, queues, config, log } = service.deps;
  const row = await createBackfill(db, { user_id: user.id, origin: 'api', filename: 'export.zip' });
  await markBackfillScanned(db, row.id, { total: 0, skipped: 0 }, new Date());
  const process = backfillProcessor({
    db,
    queues,
    dataDir: config.DATA_DIR,
    store: service.deps.engine.files.store,
    maxFileBytes: config.UPLOAD_MAX_FILE_BYTES,
    log,
    now: () => new Date(),
  });
  // The archive was removed by the first run; the retry must not take that for a lost archive.
  t.deepEqual(await process({ data: { backfillId: row.id } } as Job<BackfillJob>), { queued: 0 });
  // Nothing was left to load (the first run stopped before it completed the backfill): completed, not left `loading`.
  t.is((await backfillOf(service, user.id)).status, 'completed');
});

test.serial(
  "a user's history imports run one at a time: another while one is in progress is 409 before its archive is read, two at once start one; other users are not held up",
  async (t) => {
    // No workers: a backfill stays `scanning` until the test completes it.
    const idle = await startTestService({ workers: false });
    t.teardown(() => idle.close());
    const { user, token } = await athlete(idle);
    const archive = await yazlZip([{ name: 'ride-1.fit', data: ride(1) }]);

    const [a, b] = await Promise.all([postBackfill(idle, token, archive, 'a.zip'), postBackfill(idle, token, archive, 'b.zip')]);
    t.deepEqual([a.status, b.status].sort(), [202, 409], 'two at once: exactly one starts');
    const first = (a.status === 202 ? a.body : b.body) as { id: string };
    const refused = (a.status === 409 ? a.body : b.body) as { detail: string };
    t.regex(refused.detail, new RegExp(`${first.id}.*scanning.*one at a time`));
    const rows = await idle.deps.db.selectFrom('backfills').select(['id', 'status']).where('user_id', '=', user.id).execute();
    t.deepEqual(rows, [{ id: first.id, status: 'scanning' }], 'nothing stored for the refused one');

    // Refused before the archive is read: a declared body far over what the drain reads still gets its 409.
    const huge = await fetch(`${idle.url}/api/v1/activities/backfill`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'multipart/form-data; boundary=x',
        'content-length': String(3 * 1024 ** 3),
      },
      body: new ReadableStream({ pull: (c) => c.enqueue(new Uint8Array(64 * 1024)) }),
      duplex: 'half',
    } as RequestInit).catch((err: Error) => err);
    t.false(huge instanceof Error, String(huge));
    t.is((huge as Response).status, 409);

    // Another user is not held up.
    const other = await athlete(idle);
    t.is((await postBackfill(idle, other.token, archive)).status, 202);

    // Once the first has completed, the user may start the next.
    await idle.deps.db.updateTable('backfills').set({ status: 'completed', completed_at: new Date() }).where('id', '=', first.id).execute();
    t.is((await postBackfill(idle, token, archive, 'c.zip')).status, 202);
  },
);
