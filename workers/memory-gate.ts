import type { Worker } from 'bullmq';
import type { Logger } from '../lib/log.ts';

/** Below this share of the cap a paused process takes jobs again (hysteresis: no flapping at the line). */
const RESUME_BELOW = 0.8;

/**
 * A worker process's memory cap (WORKER_MAX_RSS_MB): while the process's resident memory is over it,
 * `workers` take no new job (BullMQ pause, without waiting for the running ones, which finish); below
 * 80 % of it they take jobs again. Each job's own memory is bounded by the file limits (size, records,
 * span) and INGEST_TIMEOUT_MS; this keeps jobs from stacking on a process that is already large, and
 * the jobs it leaves wait in the queue for this or another worker process. Returns the stop function.
 */
export function gateOnMemory(
  workers: Worker[],
  opts: { maxRssBytes: number; everyMs: number; log: Logger; rss?: () => number },
): () => void {
  const rss = opts.rss ?? (() => process.memoryUsage.rss());
  let paused = false;
  const check = () => {
    const used = rss();
    if (!paused && used > opts.maxRssBytes) {
      paused = true;
      opts.log.warn('memory over WORKER_MAX_RSS_MB: taking no new jobs', {
        rss_mb: Math.round(used / 2 ** 20),
        cap_mb: Math.round(opts.maxRssBytes / 2 ** 20),
      });
      for (const w of workers) void w.pause(true).catch(() => {});
    } else if (paused && used < opts.maxRssBytes * RESUME_BELOW) {
      paused = false;
      opts.log.info('memory under WORKER_MAX_RSS_MB again: taking jobs', { rss_mb: Math.round(used / 2 ** 20) });
      for (const w of workers) w.resume();
    }
  };
  check();
  const timer = setInterval(check, opts.everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
