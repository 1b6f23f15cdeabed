import { openAsBlob } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { findBackfill } from '../db/backfills.ts';
import { startTestService, type TestService } from '../test/helpers/service.ts';
import { createTestUser, tokenFor } from '../test/helpers/users.ts';
import { readFileSync } from 'node:fs';
import { kill, startWorkerProcess } from '../test/helpers/worker-process.ts';
import { measureCpu, procTicks, threadSeconds, threadTicks } from './cpu.ts';

/** Resident set size of another process (all its threads), from /proc. */
function rssOf(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : 0;
}

/**
 * The measured side of the backfill benchmark (bench/backfill.ts starts it as a child process, so
 * that nothing of the generator or the baseline is measured): the API in this process and the
 * workers in their own process (`bin/worker.ts`, as `npm run worker` runs them in production; its
 * RSS, engine threads included, is the figure the backfill target bounds (docs/architecture.md, "Benchmarks" (Targets))),
 * one POST /api/v1/activities/backfill of BENCH_ZIP, the backfills row polled every 20 ms until it
 * is completed, process.memoryUsage() sampled every 100 ms, then the checks. Prints one line
 * `BENCH_RESULT <json>`.
 */
const ZIP = process.env.BENCH_ZIP!;
const EXPECTED = Number(process.env.BENCH_EXPECTED);
const OLDEST_LOCAL = process.env.BENCH_OLDEST_LOCAL ?? null;
const CONCURRENCY = process.env.BENCH_INGEST_CONCURRENCY ?? '2';
const THREADS = process.env.BENCH_ENGINE_THREADS ?? '2';
const TIMEOUT_MS = 20 * 60_000;
const MB = 1024 * 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const LOOP_RESOLUTION_MS = 10;
const delay = (ns: number) => Math.max(0, ns / 1e6 - LOOP_RESOLUTION_MS);

async function main() {
  const service = await startTestService({ workers: false, env: { INGEST_CONCURRENCY: CONCURRENCY, ENGINE_THREADS: THREADS } });
  // BENCH_WORKER_NODE_ARGS, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`, profiles the worker process (its engine threads write their own profiles).
  const nodeArgs = (process.env.BENCH_WORKER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const worker = await startWorkerProcess(
    service.config,
    { INGEST_CONCURRENCY: CONCURRENCY, ENGINE_THREADS: THREADS, LOG_LEVEL: 'warn' },
    nodeArgs,
  );
  const workerPid = worker.pid!;
  try {
    const user = await createTestUser(service);
    const token = await tokenFor(service, user, ['data:read', 'data:write']);
    await sleep(1000);
    const sampling = startSampling(workerPid);
    const { row, sent, acceptedMs } = await postBackfill(service, token, sampling.t0);
    const totalMs = performance.now() - sampling.t0;
    const usage = sampling.stop();
    if (row.status === 'failed') throw new Error(`backfill failed: ${row.error_message}`);
    const checks = await orderChecks(service, user.id, token);

    const scannedMs = row.scanned_at ? new Date(row.scanned_at).getTime() - sent : Number.NaN;
    const completedMs = row.completed_at ? new Date(row.completed_at).getTime() - sent : Number.NaN;
    const wallSeconds = totalMs / 1000;
    const { idle, workerIdle, workerPeak, peak, timeline, loop } = usage;
    const result = {
      concurrency: Number(CONCURRENCY),
      engine_threads: Number(THREADS),
      backfill: { status: row.status, files_total: row.files_total, files_skipped: row.files_skipped },
      seconds: { total: wallSeconds, accepted: acceptedMs / 1000, scanned: scannedMs / 1000, completed: completedMs / 1000 },
      files_per_second: EXPECTED / wallSeconds,
      memory_mb: {
        worker_idle_rss: workerIdle / MB,
        worker_peak_rss: workerPeak / MB,
        api_idle_rss: idle.rss / MB,
        api_peak_rss: peak.rss / MB,
        peak_heap_used: peak.heapUsed / MB,
        peak_external: peak.external / MB,
        peak_array_buffers: peak.arrayBuffers / MB,
        samples: timeline.length,
      },
      rss_timeline_ms_mb: timeline.filter((_, i) => i % 10 === 0),
      // The histogram records the time between 10 ms timer ticks: the delay is what exceeds the 10 ms.
      event_loop_delay_ms: { p50: delay(loop.percentile(50)), p99: delay(loop.percentile(99)), max: delay(loop.max) },
      cpu: usage.cpu,
      /** CPU time of the worker process (main thread, engine threads, DuckDB's and libuv's threads) during the backfill. */
      worker_cpu_s: usage.workerCpuSeconds,
      /** The same by thread, busiest first (bench/cpu.ts threadSeconds). */
      worker_thread_cpu_s: usage.workerThreadSeconds,
      checks,
    };
    process.stdout.write(`BENCH_RESULT ${JSON.stringify(result)}\n`);
  } finally {
    await kill(worker, 'SIGTERM');
    await service.close();
  }
}

/**
 * Memory every 100 ms (this process's, and the worker process's RSS); event-loop delay; CPU of this
 * process, of the machine and of the worker process, from now (t0) until `stop()`.
 */
function startSampling(workerPid: number) {
  const idle = process.memoryUsage();
  const workerIdle = rssOf(workerPid);
  let workerPeak = workerIdle;
  const peak = { rss: idle.rss, heapUsed: idle.heapUsed, external: idle.external, arrayBuffers: idle.arrayBuffers };
  const timeline: [number, number][] = [];
  const t0 = performance.now();
  const sampler = setInterval(() => {
    const m = process.memoryUsage();
    const w = rssOf(workerPid);
    workerPeak = Math.max(workerPeak, w);
    peak.rss = Math.max(peak.rss, m.rss);
    peak.heapUsed = Math.max(peak.heapUsed, m.heapUsed);
    peak.external = Math.max(peak.external, m.external);
    peak.arrayBuffers = Math.max(peak.arrayBuffers, m.arrayBuffers);
    timeline.push([Math.round(performance.now() - t0), Math.round(w / MB)]);
  }, 100);
  const loop = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  loop.enable();
  const cpuSplit = measureCpu();
  const workerTicks = procTicks(String(workerPid))?.ticks ?? Number.NaN;
  const workerThreads = threadTicks(workerPid);
  return {
    t0,
    stop() {
      clearInterval(sampler);
      loop.disable();
      const cpu = cpuSplit();
      const workerCpuSeconds = ((procTicks(String(workerPid))?.ticks ?? Number.NaN) - workerTicks) / 100;
      const workerThreadSeconds = threadSeconds(workerPid, workerThreads, threadTicks(workerPid));
      return { idle, workerIdle, workerPeak, peak, timeline, loop, cpu, workerCpuSeconds, workerThreadSeconds };
    },
  };
}

/** One POST /api/v1/activities/backfill of BENCH_ZIP, then its backfills row polled every 20 ms until it is completed or failed. */
async function postBackfill(service: TestService, token: string, t0: number) {
  const form = new FormData();
  form.append('archive', await openAsBlob(ZIP, { type: 'application/zip' }), 'history.zip');
  const sent = Date.now();
  const res = await fetch(`${service.url}/api/v1/activities/backfill`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  const accepted = (await res.json()) as { id?: string };
  const acceptedMs = performance.now() - t0;
  if (res.status !== 202 || !accepted.id) throw new Error(`POST backfill: ${res.status} ${JSON.stringify(accepted)}`);
  let row = (await findBackfill(service.deps.db, accepted.id))!;
  while (row.status !== 'completed' && row.status !== 'failed') {
    if (performance.now() - t0 > TIMEOUT_MS) throw new Error(`backfill still ${row.status} after ${TIMEOUT_MS / 1000} s`);
    await sleep(20);
    row = (await findBackfill(service.deps.db, accepted.id))!;
  }
  return { row, sent, acceptedMs };
}

/**
 * The checks: every file an activity, loaded newest first (the activities' order of creation against
 * their dates, the order the workers picked the jobs up), and what the backfill-status stream says.
 */
async function orderChecks(service: TestService, userId: string, token: string) {
  const { db } = service.deps;
  const activities = await db
    .selectFrom('activities as a')
    .innerJoin('sources as s', 's.id', 'a.source_id')
    .select(['a.start_time', 'a.created_at', 's.processed_at', 's.recorded_at', 's.id as source_id'])
    .where('a.user_id', '=', userId)
    .orderBy('a.created_at')
    .orderBy('s.processed_at')
    .execute();
  const failed = await db
    .selectFrom('sources')
    .select(['filename', 'error_code', 'error_message'])
    .where('user_id', '=', userId)
    .where('status', '=', 'failed')
    .execute();
  const startMs = activities.map((a) => new Date(a.start_time).getTime());
  const byStartDesc = [...startMs].sort((a, b) => b - a);
  const rankOf = new Map(byStartDesc.map((s, i) => [s, i]));
  const displacement = startMs.map((s, i) => Math.abs(rankOf.get(s)! - i));
  let adjacentInversions = 0;
  for (let i = 1; i < startMs.length; i++) if (startMs[i]! > startMs[i - 1]!) adjacentInversions++;

  // The order in which workers picked the jobs up (BullMQ processedOn), against the files' dates.
  const jobs = await service.deps.queues.ingest.getJobs(['completed'], 0, -1);
  const recorded = new Map(activities.map((a) => [a.source_id, a.recorded_at ? new Date(a.recorded_at).getTime() : Number.NaN]));
  const picked = jobs
    .filter((j) => recorded.has(j.data.sourceId) && j.processedOn)
    .map((j) => ({ at: j.processedOn!, recorded: recorded.get(j.data.sourceId)! }))
    .sort((a, b) => a.at - b.at);
  let pickupInversions = 0;
  for (let i = 0; i < picked.length; i++)
    for (let j = i + 1; j < picked.length; j++)
      if (picked[i]!.at < picked[j]!.at && picked[i]!.recorded < picked[j]!.recorded) pickupInversions++;

  // What a client watching the backfill-status stream sees at the end.
  const status = await fetch(`${service.url}/api/v1/activities/backfill-status`, { headers: { authorization: `Bearer ${token}` } });
  const lines = (await status.text())
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { backfill_loaded_until?: string | null; error?: string });
  const loadedUntil = lines.at(-1)?.backfill_loaded_until ?? null;
  return {
    activities: activities.length,
    expected: EXPECTED,
    failed_sources: failed.length,
    failed_examples: failed.slice(0, 5),
    first_created_rank_by_start: rankOf.get(startMs[0]!) ?? null,
    max_displacement: Math.max(0, ...displacement),
    mean_displacement: displacement.reduce((a, b) => a + b, 0) / Math.max(1, displacement.length),
    adjacent_inversions: adjacentInversions,
    jobs_compared: picked.length,
    pickup_inversions: pickupInversions,
    status_loaded_until: loadedUntil,
    expected_loaded_until: OLDEST_LOCAL,
    status_errors: lines.filter((l) => l.error).length,
  };
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`backfill benchmark failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
