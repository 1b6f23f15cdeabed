/** `reprocess`: activities made by older ingest rules re-derived from their originals; waits for the jobs and counts what happened. */
import type { Config } from '../../lib/config.ts';
import type { Db } from '../../db/database.ts';
import { createRedis, waitForRedis } from '../../workers/connections.ts';
import { closeQueues, createQueues, enqueueReprocess, reprocessJobId, type Queues } from '../../workers/queues.ts';
import type { QueueEvents } from 'bullmq';
import { sourcesToReprocess, type ReprocessSelection } from '../../db/reprocess.ts';
import type { ReprocessResult } from '../../workers/reprocess.ts';
import { INGEST_RULES_VERSION } from '../../engine/ingest/rules.ts';
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
import { type Flags, userIdOf, interruptible, eventsFromNow, REPORT_EVERY_MS } from './common.ts';

/** Sources listed per query when `reprocess` selects them, and queued per addBulk. */
const REPROCESS_PAGE = 1_000;
/** With no job finishing for this long, `reprocess` asks Redis about the oldest jobs it waits for (their end may have been missed). */
const REPROCESS_QUIET_MS = 10_000;
const REPROCESS_SWEEP = 200;

export async function reprocess(db: Db, config: Config, flags: Flags, json: boolean) {
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
