import test, { type ExecutionContext } from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { startTestService, type TestService } from './helpers/service.ts';
import { poll } from './helpers/curves.ts';
import { createTestUser, tokenFor } from './helpers/users.ts';
import { upload } from './helpers/activities.ts';
import { assertSampleFiles } from './helpers/faults.ts';
import { fitCopy, fixturesDir } from './helpers/fixtures.ts';
import { canonical, freshIngest, oldRules, sameValues } from './helpers/reprocess.ts';
import { kill, startWorkerProcess } from './helpers/worker-process.ts';
import { curveRows } from '../db/curves.ts';
import type { IngestedActivity } from '../engine/ingest/ingested.ts';
import { CHANNELS } from '../engine/channels.ts';
import { INGEST_RULES_VERSION } from '../engine/ingest/rules.ts';
import { computeCurves } from '../engine/curves/activity-curves.ts';
import { sampleKey } from '../lib/object-store.ts';
import { objectFile } from '../lib/object-store-local.ts';
import { MAX_FILES_PER_UPLOAD } from '../api/services/activities/upload.ts';
import { activityRow } from '../workers/ingest.ts';

// `cli reprocess` with the workers in their own process (`npm run worker`), which is killed with
// SIGKILL mid-run, as a deploy or the OOM killer would; a new worker process finishes the run.
// The user's history: copies of the real-device fixtures, uploaded, then set back to what old
// ingest rules stored (version 1, old summary and laps, other samples and curves). The worker is
// killed where a retry has the most to put right: a job's new sample files in place, its
// transaction not committed (held there by a lock on the user's row, so the kill does not depend
// on timing).

/** Sources of the history (copies of the fixtures that hold an activity, in turn). */
const SOURCES = 44;
/** Activities at the current version when the worker is stopped (a part of the history). */
const KILL_AFTER = 8;
/** Deadline of each wait (ingest, the run to its kill, the run's end). */
const RUN_MS = 60_000;

let service: TestService;
/** The processes this file starts (worker processes, CLI runs), killed at the end should a test fail before they end. */
const children: ChildProcess[] = [];

test.before(async () => {
  // A killed worker's job is handed to the next one once its lock (JOB_LOCK_MS) has expired.
  service = await startTestService({ workers: false, env: { JOB_LOCK_MS: '3000' } });
});
test.after.always(async () => {
  for (const child of children) await kill(child, 'SIGKILL');
  await service?.close();
});

async function startWorker() {
  const child = await startWorkerProcess(service.config);
  children.push(child);
  return child;
}

/** Copies of the fixtures that parse to activities, `count` files in all (names and bytes unique). */
async function history(count: number) {
  const dir = path.join(fixturesDir(), 'fit');
  const usable: { name: string; bytes: Uint8Array }[] = [];
  for (const name of readdirSync(dir).sort()) {
    const bytes = new Uint8Array(readFileSync(path.join(dir, name)));
    if (
      await freshIngest(bytes).then(
        () => true,
        () => false,
      )
    )
      usable.push({ name, bytes });
  }
  return Array.from({ length: count }, (_, i) => {
    const { name, bytes } = usable[i % usable.length]!;
    const copy = Math.floor(i / usable.length);
    return { name: `copy${copy}-${name}`, bytes: fitCopy(bytes, copy) };
  });
}

const cliEnv = () => ({
  DATABASE_URL: service.config.DATABASE_URL,
  REDIS_URL: service.config.REDIS_URL,
  QUEUE_PREFIX: service.config.QUEUE_PREFIX,
  DATA_DIR: service.config.DATA_DIR,
});

/** `cli reprocess --json …` as a child process (as helpers/cli.ts runCli, but killed at the end should it hang): its exit code and summary line (the last). */
function reprocess(...args: string[]): Promise<{ code: number | null; stderr: string; summary: any }> {
  const child = spawn(process.execPath, ['--import=tsx', 'bin/cli.ts', 'reprocess', '--json', ...args], {
    env: { ...process.env, LOG_LEVEL: 'silent', ...cliEnv() },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve) =>
    child.on('close', (code) =>
      resolve({
        code,
        stderr,
        summary: stdout
          .trim()
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l))
          .at(-1),
      }),
    ),
  );
}

/** `promise`, or an error naming `what` once `ms` have passed. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  const late = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms)),
  );
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

async function currentCount(userId: string): Promise<number> {
  const row = await service.deps.db
    .selectFrom('activities')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('user_id', '=', userId)
    .where('ingest_version', '=', INGEST_RULES_VERSION)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The user's `activity_updated` events, counted per activity. */
async function updatedEvents(userId: string): Promise<Record<string, number>> {
  const rows = await service.deps.db
    .selectFrom('events')
    .select(['resource_id', (eb) => eb.fn.countAll<string>().as('n')])
    .where('user_id', '=', userId)
    .where('type', '=', 'activity_updated')
    .groupBy('resource_id')
    .execute();
  return Object.fromEntries(rows.map((r) => [r.resource_id, Number(r.n)]));
}

/**
 * Lock the user's row: a reprocess job then parses its source, locks its activities, puts their
 * new sample files in place and waits to bump the user's versions (the last step before its
 * commit). `blocked()` resolves once a job waits there; `release()` lets it go on.
 */
async function holdUserRow(userId: string, total: number) {
  const lock = new pg.Client({ connectionString: service.config.DATABASE_URL });
  await lock.connect();
  await lock.query('BEGIN');
  await lock.query('SELECT id FROM users WHERE id = $1 FOR UPDATE', [userId]);
  const lockPid: number = (await lock.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
  return {
    blocked: () =>
      poll(
        'a reprocess job waiting for the user row',
        async () => {
          const { rows } = await sql<{
            n: number;
          }>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE ${lockPid}::int = ANY(pg_blocking_pids(pid))`.execute(service.deps.db);
          if (rows[0]!.n > 0) return true;
          if ((await currentCount(userId)) === total) throw new Error('the run ended before a job waited for the user row');
          return false;
        },
        RUN_MS,
      ),
    release: async () => {
      await lock.query('ROLLBACK').catch(() => {});
      await lock.end().catch(() => {});
    },
  };
}

/** Samples as old rules might have stored them: oldRules' power (helpers/reprocess.ts), every other channel off by one. */
function oldSamples(a: IngestedActivity) {
  const channels = Object.entries(oldRules(a).channels).map(([c, v]) => [c, c === 'power' ? v : v.map((x) => x + 1)]);
  return { start: a.start, length: a.length, channels: Object.fromEntries(channels) };
}

/** Whether an activity's stored sample file holds exactly a fresh ingest's samples. */
async function sampleFileIs(userId: string, id: string, fresh: IngestedActivity): Promise<boolean> {
  const file = await service.deps.engine.samples.readSampleFile(objectFile(service.config.DATA_DIR, sampleKey(userId, id)));
  return (
    file.start === fresh.start &&
    file.length === fresh.length &&
    CHANNELS.every((c) => sameValues(file.channels[c], fresh.channels[c], fresh.length))
  );
}

/** What differs between an activity as stored (row, sample file, curves) and a fresh ingest of its original. */
async function differences(userId: string, id: string, session: number, fresh: IngestedActivity): Promise<string[]> {
  const db = service.deps.db;
  const row = await db.selectFrom('activities').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const want = activityRow(id, session, fresh);
  const out: string[] = [];
  const check = (what: string, got: unknown, expected: unknown) =>
    canonical(got) !== canonical(expected) &&
    out.push(`${id} ${what}: ${canonical(got).slice(0, 80)} ≠ ${canonical(expected).slice(0, 80)}`);
  check('ingest_version', row.ingest_version, INGEST_RULES_VERSION);
  check('session', row.session_index, session);
  check('summary', row.summary, want.summary);
  check('laps', row.laps, want.laps);
  check('timer_seconds', row.timer_seconds, want.timer_seconds ?? null);
  check('moving_seconds', row.moving_seconds, want.moving_seconds ?? null);
  check('device_summary', row.device_summary, want.device_summary ?? null);
  check('dropped_records', row.dropped_records, want.dropped_records ?? null);
  check(
    'span and samples',
    [row.start_time.getTime(), row.end_time.getTime(), row.samples, row.sport],
    [want.start_time.getTime(), want.end_time.getTime(), want.samples, want.sport],
  );
  if (!(await sampleFileIs(userId, id, fresh))) out.push(`${id} sample file`);
  const curves = await db.selectFrom('activity_curves').selectAll().where('activity_id', '=', id).orderBy('metric').execute();
  const wantCurves = curveRows(id, fresh.curves, new Date()).sort((a, b) => (a.metric < b.metric ? -1 : 1));
  const bytesOf = (c: { metric: string; encoding: number; level_duration: Buffer | null; level_start: Buffer | null; awd: Buffer }) =>
    [c.metric, c.encoding, c.level_duration, c.level_start, c.awd].map((b) => (b instanceof Buffer ? b.toString('base64') : b));
  check('curves', curves.map(bytesOf), wantCurves.map(bytesOf));
  return out;
}

function assertNoTemporaryFiles(t: ExecutionContext, userId: string) {
  const names = readdirSync(path.join(service.config.DATA_DIR, 'users', userId, 'activities'));
  t.deepEqual(
    names.filter((n) => n.includes('.tmp-')),
    [],
    'no temporary sample file left behind',
  );
}

test.serial(
  'the worker process killed (SIGKILL) mid-reprocess: a new one finishes the run, each activity re-derived once, as a fresh ingest',
  async (t) => {
    const db = service.deps.db;
    const dataDir = service.config.DATA_DIR;
    const user = await createTestUser(service);
    const token = await tokenFor(service, user, ['data:read', 'data:write']);
    const first = await startWorker();

    // The history, ingested by the worker process.
    const files = await history(SOURCES);
    for (let i = 0; i < files.length; i += MAX_FILES_PER_UPLOAD) {
      const res = await upload(service, token, files.slice(i, i + MAX_FILES_PER_UPLOAD));
      t.is(res.status, 202, JSON.stringify(res.body));
    }
    await poll(
      'the history ingested',
      async () =>
        (await db.selectFrom('sources').select('id').where('user_id', '=', user.id).where('status', '=', 'processing').limit(1).execute())
          .length === 0,
      RUN_MS,
    );
    const sources = await db.selectFrom('sources').select(['id', 'filename', 'status']).where('user_id', '=', user.id).execute();
    t.is(sources.length, SOURCES);
    t.deepEqual(
      sources.filter((s) => s.status !== 'processed'),
      [],
      'every file ingested',
    );
    const bytesOf = new Map(files.map((f) => [f.name, f.bytes]));
    const fresh = new Map<string, IngestedActivity[]>();
    for (const s of sources) fresh.set(s.id, await freshIngest(bytesOf.get(s.filename)!));
    const activities = await db
      .selectFrom('activities')
      .select(['id', 'source_id', 'session_index'])
      .where('user_id', '=', user.id)
      .orderBy('id')
      .execute();
    const total = activities.length;
    t.is(
      total,
      [...fresh.values()].reduce((n, a) => n + a.length, 0),
      'one activity per session',
    );
    const freshOf = (a: { source_id: string; session_index: number }) => fresh.get(a.source_id)![a.session_index]!;

    // As old rules stored it: version 1, old summary and laps, no new fields, other samples and curves.
    for (const a of activities) {
      const old = oldRules(freshOf(a));
      await db
        .updateTable('activities')
        .set({
          ingest_version: 1,
          summary: JSON.stringify(old.summary),
          laps: JSON.stringify(old.laps),
          timer_seconds: null,
          moving_seconds: null,
          device_summary: null,
          dropped_records: null,
        })
        .where('id', '=', a.id)
        .execute();
      const samples = oldSamples(freshOf(a));
      await service.deps.engine.samples.writeSampleFile(objectFile(dataDir, sampleKey(user.id, a.id)), samples);
      await db.deleteFrom('activity_curves').where('activity_id', '=', a.id).execute();
      const curves = curveRows(a.id, computeCurves(samples.channels), new Date());
      if (curves.length) await db.insertInto('activity_curves').values(curves).execute();
    }
    t.is(await currentCount(user.id), 0);
    for (const a of activities) t.false(await sampleFileIs(user.id, a.id, freshOf(a)), 'every sample file holds old samples');
    t.deepEqual(await updatedEvents(user.id), {}, 'no activity_updated yet');

    // The run, killed once part of it is done: while the worker waits on the user's row, its job's new
    // sample files are in place and nothing of it is committed (the window a retry must put right).
    const startedAt = Date.now();
    const run = reprocess('--user', user.email);
    let killedSource = '';
    await poll('part of the history reprocessed', async () => (await currentCount(user.id)) >= KILL_AFTER, RUN_MS);
    // A job also waits for the user row after its commit (its activities' training load bumps the
    // user's versions): held again until the job waiting is one whose activities are not committed.
    for (let attempt = 0; !killedSource; attempt++) {
      const held = await holdUserRow(user.id, total);
      try {
        await held.blocked();
        const active = await service.deps.queues.reprocess.getActive();
        t.is(active.length, 1, 'one job running when the worker is killed');
        const source = active[0]!.data.sourceId;
        const committed = await db
          .selectFrom('activities')
          .select('id')
          .where('source_id', '=', source)
          .where('ingest_version', '>', 1)
          .execute();
        if (committed.length && attempt < 20) continue;
        killedSource = source;
        await kill(first, 'SIGKILL');
      } finally {
        await held.release();
      }
    }
    const doneAtKill = await currentCount(user.id);
    t.log(`killed after ${Date.now() - startedAt} ms with ${doneAtKill} of ${total} activities reprocessed`);
    t.true(doneAtKill >= KILL_AFTER && doneAtKill < total, `killed mid-way (${doneAtKill} of ${total})`);
    const killed = activities.filter((a) => a.source_id === killedSource);
    for (const a of killed) {
      t.like(
        await db.selectFrom('activities').select('ingest_version').where('id', '=', a.id).executeTakeFirstOrThrow(),
        { ingest_version: 1 },
        'the killed job committed nothing',
      );
      t.true(await sampleFileIs(user.id, a.id, freshOf(a)), 'the killed job had put its new sample file in place');
    }

    await startWorker();
    const result = await within(run, RUN_MS, 'the reprocess run to end');
    t.log(`run ended ${Date.now() - startedAt} ms after it was queued`);
    t.is(result.code, 0, result.stderr);
    t.like(result.summary, {
      event: 'summary',
      sources: SOURCES,
      activities: total,
      done: total,
      failed: 0,
      missing_original: 0,
      gone: 0,
      jobs_failed: 0,
    });
    t.is(result.summary.reprocessed + result.summary.unchanged, total);

    // Every activity: same id, the current version, exactly a fresh ingest; no row added; one event each.
    const after = await db
      .selectFrom('activities')
      .select(['id', 'source_id', 'session_index'])
      .where('user_id', '=', user.id)
      .orderBy('id')
      .execute();
    t.deepEqual(after, activities, 'ids, sources and sessions unchanged, no row added');
    const problems: string[] = [];
    for (const a of activities) problems.push(...(await differences(user.id, a.id, a.session_index, freshOf(a))));
    t.deepEqual(problems, [], 'every activity is what a fresh ingest of its original gives');
    const events = await updatedEvents(user.id);
    t.deepEqual(events, Object.fromEntries(activities.map((a) => [a.id, 1])), 'exactly one activity_updated per activity');
    assertNoTemporaryFiles(t, user.id);
    await assertSampleFiles(t, service, user.id);

    // Run again over everything: nothing changes.
    const again = await within(reprocess('--all', '--user', user.email), RUN_MS, 'the second run to end');
    t.is(again.code, 0, again.stderr);
    t.like(again.summary, {
      sources: SOURCES,
      activities: total,
      done: total,
      reprocessed: 0,
      unchanged: total,
      failed: 0,
      jobs_failed: 0,
    });
    t.deepEqual(await updatedEvents(user.id), events, 'no further event');
    t.is(await currentCount(user.id), total);
  },
);
