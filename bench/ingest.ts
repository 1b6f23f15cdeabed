import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ingestFile } from '../engine/ingest/ingest.ts';
import { createSampleStore } from '../engine/samples/sample-file.ts';
import type { IngestedActivity } from '../engine/ingest/ingested.ts';
import { startTestService, type TestService } from '../test/helpers/service.ts';
import { createTestUser, tokenFor } from '../test/helpers/users.ts';
import { buildRideFit } from '../test/helpers/synthetic.ts';
import { fitFileParserDecode } from './fit-decode.ts';
import { describeCpu, measureCpu, type CpuSplit } from './cpu.ts';
import { distribution, formatTable, round2, writeReport, type Distribution, recordTarget } from './report.ts';

/**
 * Ingestion latency of one file (docs/architecture.md, "Benchmarks" (Targets): a 2 h FIT file, upload → processed, p50 ≤ 1 s):
 * a service with workers in this process (test/helpers/service.ts: real PostgreSQL and Redis),
 * N sequential uploads of a synthetic 2 h 1 Hz ride (distinct start times, so no deduplication),
 * each polled on GET /api/v1/sources/{id} every 10 ms until processed. Baseline: decoding the same
 * file in this process with fit-file-parser, the plain parse cost; the engine's ingest task and the
 * sample-file write are also timed in this process to break the pipeline's time down, and the
 * BullMQ job's timestamps split each upload into queue wait and job run time.
 * BENCH_INGEST_FILES (default 20) and BENCH_INGEST_WARMUP (default 2) tune it.
 */
const FILES = Number(process.env.BENCH_INGEST_FILES ?? 20);
const WARMUP = Number(process.env.BENCH_INGEST_WARMUP ?? 2);
const SECONDS = 2 * 3600;
const POLL_MS = 10;
const TARGET_P50_MS = 1000;

export { fitFileParserDecode };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Upload {
  total_ms: number;
  /** POST sent → 202 received (the job is queued before the answer is sent). */
  upload_ms: number;
  /** POST sent → job queued (BullMQ job.timestamp). */
  to_queue_ms: number;
  /** Job queued → a worker started it (job.processedOn). */
  queue_ms: number;
  /** Job started → rows committed (the source's processed_at): pool parse, sample file, transaction. */
  job_ms: number;
  /** Rows committed → the client's poll saw `processed`. */
  seen_ms: number;
}

async function uploadAndPoll(service: TestService, token: string, bytes: Uint8Array, name: string): Promise<Upload> {
  const form = new FormData();
  form.append('files', new Blob([bytes as Uint8Array<ArrayBuffer>], { type: 'application/octet-stream' }), name);
  const sent = Date.now();
  const t0 = performance.now();
  const res = await fetch(`${service.url}/api/v1/activities/upload`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  const body = (await res.json()) as { sources?: { id: string; status: string }[] };
  const tAccepted = performance.now();
  if (res.status !== 202 || !body.sources?.[0]) throw new Error(`upload: ${res.status} ${JSON.stringify(body)}`);
  const id = body.sources[0].id;
  if (body.sources[0].status !== 'processing') throw new Error(`upload: source ${id} is already ${body.sources[0].status} (deduplicated?)`);
  for (;;) {
    const r = await fetch(`${service.url}/api/v1/sources/${id}`, { headers: { authorization: `Bearer ${token}` } });
    const source = (await r.json()) as { status: string; error?: unknown };
    if (r.status !== 200) throw new Error(`GET source: ${r.status} ${JSON.stringify(source)}`);
    if (source.status === 'processed') break;
    if (source.status !== 'processing') throw new Error(`source ${id} ${source.status}: ${JSON.stringify(source)}`);
    if (performance.now() - t0 > 60_000) throw new Error(`source ${id} still processing after 60 s`);
    await sleep(POLL_MS);
  }
  const total = performance.now() - t0;
  const seen = sent + total;
  const job = await service.deps.queues.ingest.getJob(id);
  const row = await service.deps.db.selectFrom('sources').select('processed_at').where('id', '=', id).executeTakeFirstOrThrow();
  const committed = row.processed_at ? new Date(row.processed_at).getTime() : Number.NaN;
  const queued = job?.timestamp ?? Number.NaN;
  const started = job?.processedOn ?? Number.NaN;
  return {
    total_ms: total,
    upload_ms: tAccepted - t0,
    to_queue_ms: queued - sent,
    queue_ms: started - queued,
    job_ms: committed - started,
    seen_ms: seen - committed,
  };
}

export async function benchIngest() {
  process.stdout.write(`\n== ingest: one 2 h FIT file, upload → processed (${FILES} files after ${WARMUP} warm-up uploads)\n`);
  let t = performance.now();
  const files = Array.from({ length: FILES + WARMUP }, (_, k) =>
    buildRideFit({ start: new Date(Date.UTC(2025, 4, 1 + k, 7, 0, k)), seconds: SECONDS, seed: 42 }),
  );
  process.stdout.write(
    `generated ${files.length} synthetic rides (${SECONDS} records, 12 laps, ${Math.round(files[0]!.byteLength / 1024)} KiB each) in ${((performance.now() - t) / 1000).toFixed(1)} s (not measured)\n`,
  );

  // In-process references, single thread, warmed up on the warm-up files first.
  const decode: number[] = [];
  const engine: number[] = [];
  const write: number[] = [];
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tds-bench-ingest-'));
  const store = await createSampleStore();
  try {
    for (const [k, bytes] of files.entries()) {
      t = performance.now();
      const records = fitFileParserDecode(bytes);
      const d = performance.now() - t;
      if (records !== SECONDS) throw new Error(`fit-file-parser read ${records} records, expected ${SECONDS}`);
      t = performance.now();
      const result = await ingestFile({ format: 'fit', bytes, sport: null });
      const e = performance.now() - t;
      if (!result.ok) throw new Error(`engine ingest: ${result.code} ${result.message}`);
      t = performance.now();
      await store.writeSampleFile(path.join(dir, `${k}.parquet`), result.activities[0] as IngestedActivity);
      const w = performance.now() - t;
      if (k >= WARMUP) {
        decode.push(d);
        engine.push(e);
        write.push(w);
      }
    }
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }

  const service = await startTestService({ workers: true, env: { INGEST_CONCURRENCY: '2', ENGINE_THREADS: '2' } });
  const uploads: Upload[] = [];
  const warmups: Upload[] = [];
  let cpu: CpuSplit;
  try {
    const user = await createTestUser(service);
    const token = await tokenFor(service, user, ['data:read', 'data:write']);
    for (let k = 0; k < WARMUP; k++) warmups.push(await uploadAndPoll(service, token, files[k]!, `ride-${k}.fit`));
    const cpuSplit = measureCpu();
    for (let k = WARMUP; k < files.length; k++) uploads.push(await uploadAndPoll(service, token, files[k]!, `ride-${k}.fit`));
    cpu = cpuSplit();
  } finally {
    await service.close();
  }

  const baseline = distribution(decode);
  const rows: { workload: string; result: Distribution }[] = [
    { workload: 'baseline: fit-file-parser decode, in-process', result: baseline },
    { workload: 'engine ingest task, in-process (parse + resample + summary + curves)', result: distribution(engine) },
    { workload: 'sample file write, in-process (DuckDB Parquet)', result: distribution(write) },
    { workload: 'upload → processed (HTTP, queue, pool, sample file, rows)', result: distribution(uploads.map((u) => u.total_ms)) },
    { workload: '  POST sent → job queued (multipart, checks, source row)', result: distribution(uploads.map((u) => u.to_queue_ms)) },
    { workload: '  job queued → started', result: distribution(uploads.map((u) => u.queue_ms)) },
    { workload: '  job started → rows committed (pool, sample file, rows)', result: distribution(uploads.map((u) => u.job_ms)) },
    { workload: '  rows committed → seen by the 10 ms poll', result: distribution(uploads.map((u) => u.seen_ms)) },
    { workload: '  (POST sent → 202 received, overlaps the job)', result: distribution(uploads.map((u) => u.upload_ms)) },
  ];
  const header = ['workload', 'p50 ms', 'p95 ms', 'max ms', 'vs baseline p50'];
  const table = rows.map(({ workload, result: r }) => [
    workload,
    r.p50_ms.toFixed(1),
    r.p95_ms.toFixed(1),
    r.max_ms.toFixed(1),
    `${(r.p50_ms / baseline.p50_ms).toFixed(1)}×`,
  ]);
  process.stdout.write(
    `\n${FILES} uploads, one at a time, polled every ${POLL_MS} ms; INGEST_CONCURRENCY=2, ENGINE_THREADS=2; ${os.cpus().length} cores, Node ${process.version}\n\n`,
  );
  process.stdout.write(formatTable(header, table));
  const p50 = rows[3]!.result.p50_ms;
  process.stdout.write(`\nwarm-up uploads (not counted): ${warmups.map((u) => `${u.total_ms.toFixed(0)} ms`).join(', ')}\n`);
  process.stdout.write(`${describeCpu(cpu)}\n`);
  process.stdout.write(`target p50 ≤ ${TARGET_P50_MS} ms: ${p50 <= TARGET_P50_MS ? 'met' : 'NOT MET'} (${p50.toFixed(0)} ms)\n`);
  recordTarget({
    benchmark: 'ingest',
    target: `2 h FIT upload → processed: p50 ≤ ${TARGET_P50_MS} ms`,
    figure: `p50 ${p50.toFixed(0)} ms`,
    met: p50 <= TARGET_P50_MS,
  });

  const report = {
    benchmark: 'ingest',
    at: new Date().toISOString(),
    node: process.version,
    cores: os.cpus().length,
    files: FILES,
    warmup: WARMUP,
    file_bytes: files[0]!.byteLength,
    records: SECONDS,
    poll_ms: POLL_MS,
    target_p50_ms: TARGET_P50_MS,
    rows,
    cpu,
    warmup_ms: warmups.map((u) => round2(u.total_ms)),
  };
  process.stdout.write(`wrote ${writeReport('ingest', report)} and bench/results/latest.json\n`);
  return report;
}
