import { spawn } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import { ingestFile } from '../engine/ingest/ingest.ts';
import { fitFileParserDecode } from './ingest.ts';
import { describeCpu } from './cpu.ts';
import { syntheticHistory } from '../test/helpers/synthetic.ts';
import { formatTable, ROOT, round2, writeReport, recordTarget } from './report.ts';

/**
 * Backfill throughput (issue 15: ≥ 20 files/s of 2 h rides on 2 cores, worker RSS ≤ 500 MB; the
 * first target was ≥ 8 files/s): a synthetic history of BENCH_BACKFILL_FILES (default 500) rides on
 * distinct days over two years, zipped, POSTed to /api/v1/activities/backfill of a service with
 * workers (INGEST_CONCURRENCY=2, ENGINE_THREADS=2 unless BENCH_INGEST_CONCURRENCY /
 * BENCH_ENGINE_THREADS say otherwise) in a child process (bench/backfill-service.ts), timed until
 * the backfill is completed, with the worker process's RSS sampled every 100 ms. Two workloads
 * (BENCH_BACKFILL_WORKLOADS picks, default both): every ride 2 h (the target's), and rides of 30 min
 * to 3 h (the workload of the earlier figures). Baselines, in this process, on the same files:
 * fit-file-parser decoding them one after another, and the engine's ingest task (parse + resample
 * + summary + curves) likewise.
 */
const COUNT = Number(process.env.BENCH_BACKFILL_FILES ?? 500);
const TARGET_FILES_PER_S = 20;
const TARGET_RSS_MB = 500;
const WORKLOADS = [
  { key: '2h', label: '2 h rides', seconds: 7200 as number | undefined, target: true },
  { key: 'mixed', label: '30–180 min rides', seconds: undefined, target: false },
].filter((w) => (process.env.BENCH_BACKFILL_WORKLOADS ?? '2h,mixed').split(',').includes(w.key));

/** The naive local date-time the backfill-status stream reports (synthetic rides are written at UTC+1). */
export function naiveLocal(iso: string, offsetSeconds: number): string {
  return new Date(new Date(iso).getTime() + offsetSeconds * 1000).toISOString().slice(0, 19);
}

// biome-ignore lint/suspicious/noExplicitAny: the child's JSON report (bench/backfill-service.ts), read field by field below
export function runChild(env: Record<string, string>): Promise<any> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import=tsx', 'bench/backfill-service.ts'], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    child.once('error', reject);
    child.once('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('BENCH_RESULT '));
      if (code === 0 && line) resolve(JSON.parse(line.slice('BENCH_RESULT '.length)));
      else reject(new Error(`bench/backfill-service.ts exited ${code}${out ? `: ${out.slice(-2000)}` : ''}`));
    });
  });
}

export async function benchBackfill() {
  const reports = [];
  for (const workload of WORKLOADS) reports.push(await benchWorkload(workload));
  if (reports.length > 1) {
    process.stdout.write(`\n== backfill: summary\n`);
    for (const r of reports) {
      process.stdout.write(
        `  ${r.workload}: ${r.rows[2]!.files_per_second.toFixed(1)} files/s (baseline decode ${r.rows[0]!.files_per_second.toFixed(1)}, engine task ${r.rows[1]!.files_per_second.toFixed(1)}), worker peak RSS ${r.service.memory_mb.worker_peak_rss.toFixed(0)} MB${r.target ? `; target ${r.target.met ? 'met' : 'MISSED'}` : ''}\n`,
      );
    }
  }
  const report = {
    benchmark: 'backfill',
    at: new Date().toISOString(),
    node: process.version,
    cores: os.cpus().length,
    files: COUNT,
    workloads: reports,
  };
  process.stdout.write(`wrote ${writeReport('backfill', report)} and bench/results/latest.json\n`);
  return report;
}

async function benchWorkload(workload: (typeof WORKLOADS)[number]) {
  process.stdout.write(`\n== backfill, ${workload.label}: ${COUNT} FIT files in one zip, POST → completed\n`);
  const history = await syntheticHistory({
    count: COUNT,
    ...(workload.seconds ? { seconds: workload.seconds } : {}),
    onProgress: (done) => {
      if (done % 50 === 0 || done === COUNT) process.stdout.write(`  generating synthetic history: ${done}/${COUNT}\r`);
    },
  });
  const hours = history.files.reduce((s, f) => s + f.seconds, 0) / 3600;
  const zipMb = statSync(history.zip).size / 1024 / 1024;
  process.stdout.write(
    `${history.generated ? `generated in ${history.generateSeconds.toFixed(0)} s` : 'from the cache'} (not measured): ${history.dir}\n` +
      `${COUNT} rides, ${hours.toFixed(0)} h of 1 Hz records (${Math.round(Math.min(...history.files.map((f) => f.seconds)) / 60)}–${Math.round(Math.max(...history.files.map((f) => f.seconds)) / 60)} min each), zip ${zipMb.toFixed(1)} MiB\n`,
  );

  // Baselines: the same files, one after another, in this process (single thread).
  const files = history.files.map((f) => readFileSync(f.path));
  let t = performance.now();
  for (const bytes of files) fitFileParserDecode(bytes);
  const decodeSeconds = (performance.now() - t) / 1000;
  t = performance.now();
  for (const bytes of files) {
    const r = await ingestFile({ format: 'fit', bytes, sport: null });
    if (!r.ok) throw new Error(`engine ingest: ${r.code} ${r.message}`);
  }
  const engineSeconds = (performance.now() - t) / 1000;
  files.length = 0;

  const oldest = history.files.reduce((a, b) => (a.start < b.start ? a : b));
  const r = await runChild({ BENCH_ZIP: history.zip, BENCH_EXPECTED: String(COUNT), BENCH_OLDEST_LOCAL: naiveLocal(oldest.start, 3600) });
  const c = r.checks;

  const rows = [
    { workload: 'baseline: fit-file-parser decode, sequential in-process', seconds: decodeSeconds },
    { workload: 'engine ingest task, sequential in-process (parse + resample + summary + curves)', seconds: engineSeconds },
    {
      workload: `backfill: POST archive → completed (${r.concurrency} workers, ${r.engine_threads} engine threads)`,
      seconds: r.seconds.total,
    },
    { workload: '  POST → 202 (archive upload)', seconds: r.seconds.accepted },
    { workload: '  202 → scanned (entries read, sources stored, jobs queued)', seconds: r.seconds.scanned - r.seconds.accepted },
    { workload: '  scanned → completed (ingest)', seconds: r.seconds.completed - r.seconds.scanned },
  ].map((row) => ({ ...row, seconds: round2(row.seconds), files_per_second: round2(COUNT / row.seconds) }));
  const baseline = rows[0]!.files_per_second;
  const header = ['workload', 'seconds', 'files/s', 'vs baseline'];
  const table = rows.map((row) => [
    row.workload,
    row.seconds.toFixed(2),
    row.files_per_second.toFixed(1),
    `${((row.files_per_second / baseline) * 100).toFixed(0)}%`,
  ]);
  process.stdout.write(`\n${COUNT} files (${workload.label}); ${os.cpus().length} cores, Node ${process.version}\n\n`);
  process.stdout.write(formatTable(header, table));

  const m = r.memory_mb;
  const rate = rows[2]!.files_per_second;
  const met = rate >= TARGET_FILES_PER_S && m.worker_peak_rss <= TARGET_RSS_MB;
  if (workload.target) {
    recordTarget({
      benchmark: 'backfill',
      target: `500 × 2 h FIT files: ≥ ${TARGET_FILES_PER_S} files/s, worker peak RSS ≤ ${TARGET_RSS_MB} MB`,
      figure: `${rate.toFixed(1)} files/s, ${m.worker_peak_rss.toFixed(0)} MB`,
      met,
    });
  }
  const newestFirst = c.first_created_rank_by_start < r.concurrency && c.pickup_inversions === 0;
  const ok = (b: boolean) => (b ? 'ok' : 'FAILED');
  process.stdout.write(
    [
      '',
      `memory: the workers run in their own process (bin/worker.ts, as npm run worker), the API in the benchmark's service process`,
      `  worker RSS (engine threads included) idle ${m.worker_idle_rss.toFixed(0)} MB, peak ${m.worker_peak_rss.toFixed(0)} MB (${m.samples} samples every 100 ms)`,
      `  API RSS idle ${m.api_idle_rss.toFixed(0)} MB, peak ${m.api_peak_rss.toFixed(0)} MB; peak heap used ${m.peak_heap_used.toFixed(0)} MB, external ${m.peak_external.toFixed(0)} MB`,
      `  API event-loop delay during the backfill: p50 ${r.event_loop_delay_ms.p50.toFixed(1)} ms, p99 ${r.event_loop_delay_ms.p99.toFixed(1)} ms, max ${r.event_loop_delay_ms.max.toFixed(1)} ms`,
      `  ${describeCpu(r.cpu).replace('this process', 'the API process')}`,
      `  CPU per file: worker process ${((r.worker_cpu_s / COUNT) * 1000).toFixed(1)} ms, PostgreSQL+Redis ${((r.cpu.postgres_redis_cores * r.cpu.wall_s * 1000) / COUNT).toFixed(1)} ms, ` +
        `API ${((r.cpu.this_process_cores * r.cpu.wall_s * 1000) / COUNT).toFixed(1)} ms; other programs on the machine used ${Math.max(0, r.cpu.other_processes_cores - r.worker_cpu_s / r.cpu.wall_s).toFixed(2)} cores meanwhile`,
      `  worker CPU per file by thread (busiest first): ${(r.worker_thread_cpu_s as [string, number][])
        .filter(([, s]) => s >= 0.05)
        .map(([name, s]) => `${name} ${((s / COUNT) * 1000).toFixed(1)} ms`)
        .join(', ')}`,
      `checks:`,
      `  activities ${c.activities}/${c.expected}: ${ok(c.activities === c.expected)}; failed sources: ${c.failed_sources}; backfill files_total ${r.backfill.files_total}, skipped ${r.backfill.files_skipped}`,
      `  newest first: ${ok(newestFirst)} (first activity created is #${c.first_created_rank_by_start + 1} by start time; jobs picked up out of date order: ${c.pickup_inversions} pairs of ${c.jobs_compared} jobs; ` +
        `creation vs start order: ${c.adjacent_inversions} adjacent inversions, max displacement ${c.max_displacement}, mean ${c.mean_displacement.toFixed(2)} — ${r.concurrency} jobs run at once)`,
      `  backfill-status stream ends with backfill_loaded_until ${c.status_loaded_until} (oldest ride ${c.expected_loaded_until}): ${ok(c.status_loaded_until === c.expected_loaded_until)}`,
      workload.target
        ? `target (issue 15: ≥ ${TARGET_FILES_PER_S} files/s of 2 h rides, worker peak RSS ≤ ${TARGET_RSS_MB} MB): ${met ? 'met' : 'MISSED'} — ` +
          `${rate.toFixed(1)} files/s ${rate >= TARGET_FILES_PER_S ? 'met' : 'missed'}, ${m.worker_peak_rss.toFixed(0)} MB ${m.worker_peak_rss <= TARGET_RSS_MB ? 'met' : 'missed'}`
        : `(no target for this workload: ${rate.toFixed(1)} files/s, worker peak RSS ${m.worker_peak_rss.toFixed(0)} MB)`,
      '',
    ].join('\n'),
  );

  return {
    workload: workload.label,
    seconds_per_ride: workload.seconds ?? null,
    files: COUNT,
    hours: round2(hours),
    zip_mb: round2(zipMb),
    target: workload.target ? { files_per_second: TARGET_FILES_PER_S, rss_mb: TARGET_RSS_MB, met } : null,
    rows,
    service: r,
    passed: {
      activities: c.activities === c.expected,
      newest_first: newestFirst,
      status_stream: c.status_loaded_until === c.expected_loaded_until,
    },
  };
}
