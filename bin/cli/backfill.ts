/** `backfill PATH`: a history (directory or zip) imported for a user; with --wait, its progress until done. */
import type { Config } from '../../lib/config.ts';
import { createLogger } from '../../lib/log.ts';
import type { Db } from '../../db/database.ts';
import { findUserByEmail } from '../../db/users.ts';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { startBackfill } from '../../db/backfills.ts';
import { watchBackfill, type FailedFile } from '../../db/backfill-progress.ts';
import { barReporter, jsonReporter, plainReporter, rateMeter, type Reporter, type Snapshot } from './backfill-report.ts';
import { openHistory, scanHistory } from '../../workers/backfill.ts';
import { createObjectStore } from '../../lib/object-store-setup.ts';
import { createRedis, waitForRedis } from '../../workers/connections.ts';
import { closeQueues, createQueues } from '../../workers/queues.ts';
import { type Flags, print, required, UsageError, interruptible, REPORT_EVERY_MS } from './common.ts';

export async function backfill(db: Db, config: Config, flags: Flags, target: string | undefined, json: boolean) {
  const email = required(flags, 'user');
  if (!target) throw new UsageError('give the directory or zip archive to import: backfill --user EMAIL PATH');
  const user = await findUserByEmail(db, email);
  if (!user) throw new UsageError(`no user with email ${email}`);
  const info = await stat(target).catch(() => undefined);
  if (!info) throw new UsageError(`${target} does not exist`);
  const kind = info.isDirectory() ? 'directory' : 'archive';
  const redis = createRedis(config.REDIS_URL, 'producer');
  const queues = createQueues(redis, config.QUEUE_PREFIX);
  const store = createObjectStore(config);
  try {
    await waitForRedis(redis, 10_000);
    const reader = await openHistory(path.resolve(target), kind, { maxEntryBytes: config.UPLOAD_MAX_FILE_BYTES }, config.DATA_DIR).catch(
      (err) => {
        throw new UsageError(`${target}: ${(err as Error).message}`);
      },
    );
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
        { db, queues, dataDir: config.DATA_DIR, store, maxFileBytes: config.UPLOAD_MAX_FILE_BYTES, log, now: () => new Date() },
        row,
        reader,
      );
    } finally {
      reader.close();
    }
    const { counts, ...found } = result;
    const scanned = {
      backfill_id: row.id,
      user_id: user.id,
      ...found,
      formats: counts.formats,
      skipped_by_reason: counts.skipped,
      nested_archives: counts.nested_archives,
      activities_csv: counts.strava,
    };
    const byFormat = Object.entries(counts.formats).map(([format, n]) => `${format} ${n}`);
    const csv = counts.strava ? `; activities.csv: ${counts.strava.rows} rows, ${counts.strava.without_file} without a file` : '';
    const scannedText = `Backfill ${row.id} for ${user.email}: ${result.total} files found${byFormat.length ? ` (${byFormat.join(', ')})` : ''}, ${result.skipped} skipped, ${result.queued} queued (newest first)${csv}.`;
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
    store.close();
    await closeQueues(queues);
    await redis.quit().catch(() => redis.disconnect());
  }
}

/**
 * Report a backfill's progress until it is done (or Ctrl-C), then its summary and failed files.
 * The exit status: 0 every file loaded (or already stored), 3 some files failed, 1 the backfill failed,
 * 130 interrupted (the workers go on).
 */
export async function waitForBackfill(db: Db, id: string, reporter: Reporter): Promise<number> {
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
