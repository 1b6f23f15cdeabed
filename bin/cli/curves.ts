/** `curves`: the stored activity curves that are missing or outdated recomputed (--all: every one). */
import type { Config } from '../../lib/config.ts';
import type { Db } from '../../db/database.ts';
import { createRedis, waitForRedis } from '../../workers/connections.ts';
import { closeQueues, createQueues, curvesJobId, enqueueCurves } from '../../workers/queues.ts';
import type { QueueEvents } from 'bullmq';
import { type Flags, print, userIdOf, eventsFromNow, finishedJob } from './common.ts';

export async function curves(db: Db, config: Config, flags: Flags, json: boolean) {
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
