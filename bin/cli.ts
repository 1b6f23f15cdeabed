import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Config } from '../lib/config.ts';
import { createLogger } from '../lib/log.ts';
import { createDb, type Db } from '../db/database.ts';
import { ensureDatabase, migrateToLatest } from '../db/migrate.ts';
import { createUser, DuplicateEmailError, findUserByEmail, listUsers } from '../db/users.ts';
import { listPublishedKeys } from '../db/signing-keys.ts';
import { hashPassword, passwordProblem } from '../api/services/auth/passwords.ts';
import { KeyStore } from '../api/services/auth/keys.ts';
import { loadSecretBox } from '../lib/secret-box.ts';
import { createPersonalToken } from '../api/services/oauth/issue.ts';
import { parseScopes } from '../api/services/auth/scopes.ts';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { startBackfill } from '../db/backfills.ts';
import { watchBackfill, type FailedFile } from '../db/backfill-progress.ts';
import { barReporter, jsonReporter, plainReporter, rateMeter, type Reporter, type Snapshot } from './backfill-report.ts';
import { openHistory, scanHistory } from '../workers/backfill.ts';
import { createRedis, waitForRedis } from '../workers/connections.ts';
import { closeQueues, createQueues, curvesJobId, enqueueCurves, enqueueReprocess, reprocessJobId, type Queues } from '../workers/queues.ts';
import { QueueEvents, type Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { sourcesToReprocess, type ReprocessSelection } from '../db/reprocess.ts';
import type { ReprocessResult } from '../workers/reprocess.ts';
import { INGEST_RULES_VERSION } from '../engine/ingest/rules.ts';
import {
  barReprocessReporter,
  emptyTally,
  jsonReprocessReporter,
  plainReprocessReporter,
  snapshot,
  type ReprocessFailure,
  type ReprocessReporter,
  type ReprocessTally,
} from './reprocess-report.ts';

const USAGE = `Operator commands: npm run cli -- <command> [options]

  user create --email EMAIL --first-name NAME --last-name NAME [--password PASSWORD]
      Create an account. Without --password a strong random one is generated and printed once.
  user list
      List accounts, newest first.
  token create --user EMAIL [--scopes "data:read data:write profile"] [--label NAME]
      Create a personal token for the user: an access token (15 minutes, RS256 JWT without aud) and
      a refresh token, printed once; revocable in Settings.
  backfill --user EMAIL PATH [--wait]
      Import a user's history: PATH is a directory (searched recursively) or a zip archive of .fit
      and .csv files (optionally .gz). The files are read and stored now, then loaded newest first by
      the workers (npm start or npm run worker); files already stored are not loaded twice. With
      --wait, show progress until the backfill completes (files loaded/failed/total, rate, ETA: a bar
      on a terminal, a line every 2 s otherwise, NDJSON with --json), then each failed file with its
      error code. Exit status with --wait: 0 every file loaded, 3 some files failed, 1 the backfill
      failed, 130 interrupted (Ctrl-C stops watching; the workers go on loading).
  curves [--user EMAIL] [--all] [--wait]
      Recompute the stored activity curves (mean-max, value-indexed, accumulated work duration)
      from the sample files: those missing or computed by an older version, or with --all every
      one; of one user or of everyone. Runs as a job on the workers; --wait prints its outcome.
  reprocess [--user EMAIL] [--all]
      Re-derive stored activities from their original files under the current ingest rules: each
      one's sample file, summary, laps and other derived fields, and curves. By default the
      activities made by older rules (ingest_version below the current), of every user; --user
      limits it to one user, --all takes activities already current too. One job per source file on
      the workers (npm start or npm run worker); the command waits for them, showing progress (a bar
      on a terminal, a line every 2 s otherwise, NDJSON with --json), then prints how many activities
      were reprocessed (changed), unchanged, failed (original no longer parses) or left with their
      original missing. Activities are only updated: ids, tags and deleted activities stay as they
      are. Exit status: 0 all done, 3 some failed or lack their original, 130 interrupted (Ctrl-C
      stops watching; the workers go on).
  keys list
      List the token signing keys (active and recently retired).
  keys rotate
      Make a new signing key; tokens signed by the old one stay valid until they expire.

Every command accepts --json for machine-readable output.
Configuration comes from the same environment variables as the service (DATABASE_URL, BASE_URL, …).`;

class UsageError extends Error {}

type Flags = Record<string, string | boolean | undefined>;

function required(flags: Flags, name: string): string {
  const v = flags[name];
  if (typeof v !== 'string' || !v.trim()) throw new UsageError(`--${name} is required`);
  return v.trim();
}

function print(json: boolean, value: unknown, text: string) {
  process.stdout.write(json ? JSON.stringify(value, null, 2) + '\n' : text + '\n');
}

async function userCreate(db: Db, flags: Flags, json: boolean) {
  const email = required(flags, 'email').toLowerCase();
  const first_name = required(flags, 'first-name');
  const last_name = required(flags, 'last-name');
  const generated = typeof flags.password !== 'string';
  const password = generated ? randomBytes(18).toString('base64url') : String(flags.password);
  const weak = passwordProblem(password, { email, names: [first_name, last_name] });
  if (weak) throw new UsageError(`--password: ${weak}`);
  try {
    const user = await createUser(db, { email, first_name, last_name, password_hash: await hashPassword(password) });
    print(
      json,
      { id: user.id, email: user.email, first_name, last_name, ...(generated ? { password } : {}) },
      `Created user ${user.email} (${user.id})${generated ? `\nPassword (shown once): ${password}` : ''}`,
    );
  } catch (err) {
    if (err instanceof DuplicateEmailError) throw new UsageError(`a user with email ${email} already exists`);
    throw err;
  }
}

async function userList(db: Db, json: boolean) {
  const users = await listUsers(db);
  const rows = users.map((u) => ({
    id: u.id,
    email: u.email,
    first_name: u.first_name,
    last_name: u.last_name,
    created_at: u.created_at.toISOString(),
  }));
  print(
    json,
    rows,
    rows.length ? rows.map((u) => `${u.id}  ${u.email}  ${u.first_name} ${u.last_name}  ${u.created_at}`).join('\n') : 'No users.',
  );
}

async function tokenCreate(db: Db, config: Config, flags: Flags, json: boolean) {
  const email = required(flags, 'user');
  const { scopes, unknown } = parseScopes(typeof flags.scopes === 'string' ? flags.scopes : 'data:read data:write profile');
  if (unknown.length) throw new UsageError(`--scopes: unknown scope ${unknown.join(', ')}`);
  if (!scopes.length) throw new UsageError('--scopes: give at least one scope');
  const user = await findUserByEmail(db, email);
  if (!user) throw new UsageError(`no user with email ${email}`);
  const keys = new KeyStore(db, await loadSecretBox(config));
  await keys.init();
  const label = typeof flags.label === 'string' && flags.label.trim() ? flags.label.trim().slice(0, 100) : 'Command line';
  const { grant, response } = await createPersonalToken(
    db,
    { issuer: config.BASE_URL, keys, now: () => new Date() },
    user.id,
    scopes,
    label,
  );
  print(
    json,
    { ...response, user_id: user.id, token_id: grant.id },
    `Personal token "${label}" for ${user.email} (scopes: ${response.scope}; shown once, revocable in Settings → Personal tokens).\n` +
      `Access token (expires in ${response.expires_in / 60} minutes):\n${response.access_token}\n` +
      `Refresh token (exchange at ${config.BASE_URL}/api/v1/oauth/token with grant_type=refresh_token):\n${response.refresh_token}`,
  );
}

async function keysList(db: Db, config: Config, json: boolean) {
  const keys = new KeyStore(db, await loadSecretBox(config));
  await keys.init();
  const rows = (await listPublishedKeys(db, new Date(0))).map((k) => ({
    kid: k.kid,
    created_at: k.created_at.toISOString(),
    retired_at: k.retired_at?.toISOString() ?? null,
    active: k.retired_at === null,
  }));
  print(json, rows, rows.map((k) => `${k.kid}  created ${k.created_at}  ${k.active ? 'ACTIVE' : `retired ${k.retired_at}`}`).join('\n'));
}

async function keysRotate(db: Db, config: Config, json: boolean) {
  const keys = new KeyStore(db, await loadSecretBox(config));
  await keys.init();
  const kid = await keys.rotate();
  print(json, { kid }, `New signing key ${kid} is active; the previous key verifies its tokens until they expire.`);
}

async function backfill(db: Db, config: Config, flags: Flags, target: string | undefined, json: boolean) {
  const email = required(flags, 'user');
  if (!target) throw new UsageError('give the directory or zip archive to import: backfill --user EMAIL PATH');
  const user = await findUserByEmail(db, email);
  if (!user) throw new UsageError(`no user with email ${email}`);
  const info = await stat(target).catch(() => undefined);
  if (!info) throw new UsageError(`${target} does not exist`);
  const kind = info.isDirectory() ? 'directory' : 'archive';
  const redis = createRedis(config.REDIS_URL, 'producer');
  const queues = createQueues(redis, config.QUEUE_PREFIX);
  try {
    await waitForRedis(redis, 10_000);
    const reader = await openHistory(path.resolve(target), kind, { maxEntryBytes: config.UPLOAD_MAX_FILE_BYTES }).catch((err) => {
      throw new UsageError(`${target}: ${(err as Error).message}`);
    });
    const started = await startBackfill(db, { user_id: user.id, origin: 'cli', filename: path.basename(path.resolve(target)) });
    if ('busy' in started) {
      reader.close();
      throw new UsageError(
        `${email} has a history import in progress (${started.busy.id}, ${started.busy.filename}, ${started.busy.status}): imports of one user run one at a time`,
      );
    }
    const row = started.backfill;
    const log = createLogger('warn');
    let result: Awaited<ReturnType<typeof scanHistory>>;
    try {
      result = await scanHistory(
        { db, queues, dataDir: config.DATA_DIR, maxFileBytes: config.UPLOAD_MAX_FILE_BYTES, log, now: () => new Date() },
        row,
        reader,
      );
    } finally {
      reader.close();
    }
    const scanned = { backfill_id: row.id, user_id: user.id, ...result };
    const scannedText = `Backfill ${row.id} for ${user.email}: ${result.total} files found, ${result.skipped} skipped, ${result.queued} queued (newest first).`;
    if (flags.wait !== true) return print(json, scanned, scannedText);
    // With --wait and --json every line is one JSON object (NDJSON), this one included.
    process.stdout.write(json ? JSON.stringify({ event: 'scanned', ...scanned }) + '\n' : scannedText + '\n');
    const reporter = json
      ? jsonReporter(process.stdout, row.id, REPORT_EVERY_MS)
      : process.stdout.isTTY
        ? barReporter(process.stdout)
        : plainReporter(process.stdout, REPORT_EVERY_MS);
    process.exitCode = await waitForBackfill(db, row.id, reporter);
  } finally {
    await closeQueues(queues);
    await redis.quit().catch(() => redis.disconnect());
  }
}

/** How often `backfill --wait` reads the progress (the bar's pace), and writes a plain or JSON line. */
const POLL_MS = 500;
const REPORT_EVERY_MS = 2_000;

/**
 * Ctrl-C while a command watches the workers: `pause()` waits POLL_MS, or less when Ctrl-C comes,
 * and tells whether it came (the workers go on; only the watching stops). `dispose()` lets go of SIGINT.
 */
function interruptible() {
  let interrupted = false;
  let wake: (() => void) | undefined;
  const onInterrupt = () => {
    interrupted = true;
    wake?.();
  };
  process.once('SIGINT', onInterrupt);
  return {
    async pause(): Promise<boolean> {
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, POLL_MS);
      });
      return interrupted;
    },
    dispose: () => process.off('SIGINT', onInterrupt),
  };
}

/**
 * Report a backfill's progress until it is done (or Ctrl-C), then its summary and failed files.
 * The exit status: 0 every file loaded (or already stored), 3 some files failed, 1 the backfill failed,
 * 130 interrupted (the workers go on).
 */
async function waitForBackfill(db: Db, id: string, reporter: Reporter): Promise<number> {
  const look = watchBackfill(db, id, { counts: true });
  const measure = rateMeter(Date.now());
  const failures: FailedFile[] = [];
  const ctrlC = interruptible();
  let last: Snapshot | undefined;
  try {
    for (;;) {
      const progress = await look();
      failures.push(...progress.failed);
      last = measure(progress, progress.counts!, Date.now());
      if (progress.done) {
        const error = progress.backfill.status === 'failed' ? (progress.backfill.error_message ?? 'the history could not be read') : null;
        reporter.finish(last, failures, error);
        return error ? 1 : failures.length ? 3 : 0;
      }
      reporter.update(last);
      if (await ctrlC.pause()) {
        reporter.interrupt(last);
        return 130;
      }
    }
  } finally {
    ctrlC.dispose();
  }
}

/** The user `--user EMAIL` names (undefined without the flag); a UsageError when nobody has that email. */
async function userIdOf(db: Db, flags: Flags): Promise<string | undefined> {
  if (typeof flags.user !== 'string') return undefined;
  const user = await findUserByEmail(db, flags.user.trim());
  if (!user) throw new UsageError(`no user with email ${flags.user}`);
  return user.id;
}

/**
 * A queue's events read from the stream's position now, before the caller adds its jobs: their ends
 * cannot be missed however soon they come (a finished job is removed and cannot be looked at later).
 */
async function eventsFromNow(producer: Redis, queue: Queue, connection: Redis, prefix: string): Promise<QueueEvents> {
  const [last] = await producer.xrevrange(queue.keys.events!, '+', '-', 'COUNT', 1);
  return new QueueEvents(queue.name, { connection, prefix, lastEventId: last?.[0] ?? '0-0' });
}

/** The return value of job `jobId` once it completes (rejects with its reason when it fails for good). */
function finishedJob<T>(events: QueueEvents, jobId: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const completed = (args: { jobId: string; returnvalue: unknown }) => args.jobId === jobId && (stop(), resolve(args.returnvalue as T));
    const failed = (args: { jobId: string; failedReason: string }) =>
      args.jobId === jobId && (stop(), reject(new Error(args.failedReason)));
    const stop = () => {
      events.off('completed', completed);
      events.off('failed', failed);
    };
    events.on('completed', completed);
    events.on('failed', failed);
  });
}

async function curves(db: Db, config: Config, flags: Flags, json: boolean) {
  const userId = await userIdOf(db, flags);
  const redis = createRedis(config.REDIS_URL, 'producer');
  const queues = createQueues(redis, config.QUEUE_PREFIX);
  const eventsRedis = flags.wait === true ? createRedis(config.REDIS_URL, 'worker') : undefined;
  let events: QueueEvents | undefined;
  try {
    await waitForRedis(redis, 10_000);
    const request = { ...(userId ? { userId } : {}), all: flags.all === true };
    let finished: Promise<{ recomputed: number; missing_samples: number }> | undefined;
    if (eventsRedis) {
      events = await eventsFromNow(redis, queues.curves, eventsRedis, config.QUEUE_PREFIX);
      finished = finishedJob(events, curvesJobId(request));
    }
    const jobId = await enqueueCurves(queues, request);
    const who = userId ? String(flags.user) : 'every user';
    if (!finished)
      return print(
        json,
        { job_id: jobId },
        `Queued curve recompute ${jobId} for ${who}; the workers (npm start or npm run worker) run it.`,
      );
    const result = await finished;
    print(
      json,
      { job_id: jobId, ...result },
      `Recomputed the curves of ${result.recomputed} activities for ${who}${result.missing_samples ? ` (${result.missing_samples} without a sample file)` : ''}.`,
    );
  } finally {
    await events?.close();
    await eventsRedis?.quit().catch(() => eventsRedis.disconnect());
    await closeQueues(queues);
    await redis.quit().catch(() => redis.disconnect());
  }
}

/** Sources listed per query when `reprocess` selects them, and queued per addBulk. */
const REPROCESS_PAGE = 1_000;
/** With no job finishing for this long, `reprocess` asks Redis about the oldest jobs it waits for (their end may have been missed). */
const REPROCESS_QUIET_MS = 10_000;
const REPROCESS_SWEEP = 200;

async function reprocess(db: Db, config: Config, flags: Flags, json: boolean) {
  const userId = await userIdOf(db, flags);
  const selection: ReprocessSelection = { ...(userId ? { userId } : {}), all: flags.all === true };
  const sources: { source_id: string; activities: number }[] = [];
  for (let after: string | undefined; ; ) {
    const page = await sourcesToReprocess(db, { ...selection, limit: REPROCESS_PAGE, ...(after ? { after } : {}) });
    sources.push(...page);
    if (page.length < REPROCESS_PAGE) break;
    after = page.at(-1)!.source_id;
  }
  const tally = emptyTally(
    sources.length,
    sources.reduce((n, s) => n + s.activities, 0),
  );
  const reporter = json
    ? jsonReprocessReporter(process.stdout, REPORT_EVERY_MS)
    : process.stdout.isTTY
      ? barReprocessReporter(process.stdout)
      : plainReprocessReporter(process.stdout, REPORT_EVERY_MS);
  const who = userId ? String(flags.user) : 'every user';
  const queuedLine = {
    event: 'queued',
    sources: tally.sources,
    activities: tally.activities,
    rules_version: INGEST_RULES_VERSION,
    all: selection.all === true,
  };
  process.stdout.write(
    json
      ? JSON.stringify(queuedLine) + '\n'
      : `Reprocessing ${tally.activities} activities of ${tally.sources} sources for ${who} under ingest rules version ${INGEST_RULES_VERSION}${selection.all ? ' (all)' : ''}.\n`,
  );
  const startedAt = Date.now();
  if (!sources.length) {
    reporter.finish(snapshot(tally, startedAt, Date.now()), []);
    return;
  }
  const redis = createRedis(config.REDIS_URL, 'producer');
  const queues = createQueues(redis, config.QUEUE_PREFIX);
  const eventsRedis = createRedis(config.REDIS_URL, 'worker');
  let events: QueueEvents | undefined;
  try {
    await waitForRedis(redis, 10_000);
    events = await eventsFromNow(redis, queues.reprocess, eventsRedis, config.QUEUE_PREFIX);
    const watch = reprocessWatch(tally);
    events.on('completed', ({ jobId, returnvalue }) => watch.completed(jobId, returnvalue as unknown as ReprocessResult));
    events.on('failed', ({ jobId, failedReason }) => watch.failed(jobId, failedReason));
    await events.waitUntilReady();
    for (let i = 0; i < sources.length; i += REPROCESS_PAGE) {
      const page = sources.slice(i, i + REPROCESS_PAGE);
      for (const s of page) watch.expect(s.source_id, s.activities);
      await enqueueReprocess(
        queues,
        page.map((s) => s.source_id),
        { all: selection.all === true },
      );
    }
    process.exitCode = await waitForReprocess(queues, watch, reporter, startedAt);
  } finally {
    await events?.close();
    await eventsRedis.quit().catch(() => eventsRedis.disconnect());
    await closeQueues(queues);
    await redis.quit().catch(() => redis.disconnect());
  }
}

/** The jobs `reprocess` waits for, and their outcomes added up as they finish. */
function reprocessWatch(tally: ReprocessTally) {
  /** Job id → the source and its selected activities, in the order queued. */
  const pending = new Map<string, { sourceId: string; activities: number }>();
  const failures: ReprocessFailure[] = [];
  let lastEndAt = Date.now();
  const finish = (jobId: string) => {
    const job = pending.get(jobId);
    if (!job) return undefined;
    pending.delete(jobId);
    tally.done += job.activities;
    lastEndAt = Date.now();
    return job;
  };
  return {
    tally,
    pending,
    failures,
    get lastEndAt() {
      return lastEndAt;
    },
    expect(sourceId: string, activities: number) {
      pending.set(reprocessJobId(sourceId), { sourceId, activities });
    },
    completed(jobId: string, r: ReprocessResult) {
      const job = finish(jobId);
      if (!job) return;
      tally.reprocessed += r.reprocessed;
      tally.unchanged += r.unchanged;
      tally.failed += r.failed;
      tally.missing_original += r.missing_original;
      tally.gone += r.gone;
      // A source deleted (or emptied) since it was listed: its activities are gone.
      if (r.skipped && !r.reprocessed && !r.unchanged && !r.failed && !r.missing_original) tally.gone += job.activities;
      if (r.error)
        failures.push({ source_id: job.sourceId, activities: r.failed + r.missing_original, code: r.error.code, message: r.error.message });
    },
    failed(jobId: string, reason: string) {
      const job = finish(jobId);
      if (!job) return;
      tally.jobs_failed++;
      tally.failed += job.activities;
      failures.push({ source_id: job.sourceId, activities: job.activities, code: 'job_failed', message: reason });
    },
    /** A job gone from Redis without its end seen: it finished, its outcome is unknown. */
    lost(jobId: string) {
      if (finish(jobId)) tally.unreported++;
    },
  };
}

/**
 * Report the jobs' progress until every one is over (or Ctrl-C), then the counts and the failed
 * sources. The exit status: 0 all done, 3 some activities failed or lack their original, 130 interrupted.
 */
async function waitForReprocess(
  queues: Queues,
  watch: ReturnType<typeof reprocessWatch>,
  reporter: ReprocessReporter,
  startedAt: number,
): Promise<number> {
  const ctrlC = interruptible();
  let sweptAt = Date.now();
  try {
    for (;;) {
      const now = Date.now();
      const current = snapshot(watch.tally, startedAt, now);
      if (!watch.pending.size) {
        reporter.finish(current, watch.failures);
        const t = current.tally;
        return t.failed || t.missing_original || t.unreported ? 3 : 0;
      }
      reporter.update(current);
      // Finished jobs are removed at once; should their end have been missed (the event stream is
      // trimmed), the oldest jobs waited for are looked up when nothing has finished for a while.
      if (now - watch.lastEndAt > REPROCESS_QUIET_MS && now - sweptAt > REPROCESS_QUIET_MS) {
        sweptAt = now;
        const oldest = [...watch.pending.keys()].slice(0, REPROCESS_SWEEP);
        const states = await Promise.all(oldest.map((id) => queues.reprocess.getJobState(id)));
        oldest.forEach((id, i) => states[i] === 'unknown' && watch.lost(id));
      }
      if (await ctrlC.pause()) {
        reporter.interrupt(snapshot(watch.tally, startedAt, Date.now()));
        return 130;
      }
    }
  } finally {
    ctrlC.dispose();
  }
}

/** The settings the CLI must share with the server, and which of them are defaults: a CLI run against another database would otherwise seem to work. */
const SHARED_WITH_SERVER = ['DATABASE_URL', 'DATA_DIR', 'QUEUE_PREFIX'] as const;

/** One line (stderr) on where this run reads and writes, naming the settings left at their defaults. */
function whereTo(config: Config, env: NodeJS.ProcessEnv): string {
  const url = new URL(config.DATABASE_URL);
  url.password = url.password ? '***' : '';
  const defaults = SHARED_WITH_SERVER.filter((name) => !env[name]);
  const where = `cli: database ${url.toString()}, data ${path.resolve(config.DATA_DIR)}, queue prefix ${config.QUEUE_PREFIX}`;
  return defaults.length
    ? `${where} (${defaults.join(', ')} not set: defaults; give the CLI the server's values, or it works on another store)`
    : where;
}

async function main(argv: string[]) {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      email: { type: 'string' },
      'first-name': { type: 'string' },
      'last-name': { type: 'string' },
      password: { type: 'string' },
      user: { type: 'string' },
      scopes: { type: 'string' },
      label: { type: 'string' },
      wait: { type: 'boolean', default: false },
      all: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  // `backfill PATH` takes its path as a positional; the other commands are one or two words.
  const command = positionals[0] === 'backfill' ? 'backfill' : positionals.join(' ');
  if (values.help || !command || command === 'help') {
    process.stdout.write(USAGE + '\n');
    return;
  }
  const config = loadConfig();
  process.stderr.write(`${whereTo(config, process.env)}\n`);
  await ensureDatabase(config.DATABASE_URL);
  const db = createDb(config.DATABASE_URL, 2);
  try {
    await migrateToLatest(db);
    const json = values.json === true;
    switch (command) {
      case 'user create':
        return await userCreate(db, values, json);
      case 'user list':
        return await userList(db, json);
      case 'token create':
        return await tokenCreate(db, config, values, json);
      case 'backfill':
        return await backfill(db, config, values, positionals[1], json);
      case 'curves':
        return await curves(db, config, values, json);
      case 'reprocess':
        return await reprocess(db, config, values, json);
      case 'keys list':
        return await keysList(db, config, json);
      case 'keys rotate':
        return await keysRotate(db, config, json);
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } finally {
    await db.destroy();
  }
}

main(process.argv.slice(2)).catch((err) => {
  if (err instanceof UsageError || err instanceof ConfigError || (err as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    process.stderr.write(`error: ${err.message}\n\n${err instanceof UsageError ? 'Run `npm run cli -- help` for usage.' : ''}\n`);
    process.exit(2);
  }
  createLogger('error').error('cli failed', { err });
  process.exit(1);
});
