import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { createDb } from '../db/database.ts';
import { findSource, insertSource } from '../db/sources.ts';
import { activityId, storeActivities } from '../db/activities.ts';
import { completeBackfillIfDone } from '../db/backfills.ts';
import { fanOutEvent, fanOutWithoutDeliveries } from '../db/events.ts';
import { createUser } from '../db/users.ts';
import { parseFit } from '../engine/ingest/fit.ts';
import { resample } from '../engine/ingest/resample.ts';
import { lapStats, summarise } from '../engine/ingest/summary.ts';
import { ingestFile } from '../engine/ingest/ingest.ts';
import type { IngestedActivity } from '../engine/ingest/ingested.ts';
import { recordedAt } from '../engine/ingest/peek.ts';
import { accumulatedWorkDuration } from '../engine/curves/awd.ts';
import { LEVEL_STEP } from '../engine/curves/levels.ts';
import { meanMaxAll } from '../engine/curves/mean-max.ts';
import { valueIndexed } from '../engine/curves/value-indexed.ts';
import { zeroFilled } from '../engine/curves/activity-curves.ts';
import { createEnginePool } from '../engine/pool.ts';
import { createSampleStore } from '../engine/samples/sample-file.ts';
import { infrastructure } from '../test/helpers/infra.ts';
import { createTestDatabase } from '../test/helpers/database.ts';
import { fitFileParserDecode } from './ingest.ts';
import { buildRideFit } from '../test/helpers/synthetic.ts';
import { activityRow, stagesBackfill } from './compare/families/backfill-stages-db.ts';
import { formatTable, round2, writeReport } from './report.ts';

/**
 * Where one backfilled file's time goes (`npm run bench -- backfill-stages`): BENCH_STAGE_FILES
 * (default 30) synthetic 2 h rides, each stage of the ingest job run one file at a time in this
 * process (single thread, nothing else of the service running), in ms per file (mean and p50).
 * The stages are those of workers/ingest.ts and the ingest task (engine/ingest/ingest.ts): the
 * parse library's decode, parseFit with fit-file-parser for the whole file and with the lean
 * record path (engine/ingest/fit-records.ts), resampling, summary and
 * laps, the curves (the mean-max kernel `meanMaxAll` apart), the round trip through a one-thread
 * engine pool beyond the task itself (structured clone / transfer), the Parquet sample file
 * (DuckDB COPY, then fsync and rename), the job's PostgreSQL statements (source lookup, the
 * storeActivities transaction, the backfill completion check), the webhook fan-out of its two
 * events (the relay's one UPDATE for a user nobody delivers to; beside it, the transaction a
 * fan-out job per event ran before), and BullMQ's own cost per job (a no-op processor over the
 * same job options).
 */
const FILES = Number(process.env.BENCH_STAGE_FILES ?? 30);
const WARMUP = 3;
const SECONDS = 2 * 3600;

/** Per file (index k − WARMUP), ms. */
type Stage = { name: string; ms: number[] };

export async function benchBackfillStages() {
  process.stdout.write(
    `\n== backfill-stages: one 2 h ride's ingest, stage by stage, in-process (${FILES} files after ${WARMUP} warm-up)\n`,
  );
  const files = Array.from({ length: FILES + WARMUP }, (_, k) =>
    buildRideFit({ start: new Date(Date.UTC(2025, 0, 1 + k, 7, 0, k)), seconds: SECONDS, seed: 7 + k }),
  );
  const timer = stageTimer();
  const { stages } = timer;
  const activities = await engineStages(files, timer);
  await poolRoundTrip(files, timer);
  await sampleFileStages(activities, timer);
  const infra = await infrastructure();
  await postgresStages(activities, timer, infra.postgresUrl);
  const bullMs = await bullmqJob(infra.redisUrl);
  stages.set('BullMQ job (addBulk + no-op processor, concurrency 2), wall per job', { name: '', ms: [bullMs] });

  const rows = [...stages.entries()].map(([name, s]) => {
    const sorted = [...s.ms].sort((a, b) => a - b);
    return {
      stage: name,
      mean_ms: round2(s.ms.reduce((a, b) => a + b, 0) / s.ms.length),
      p50_ms: round2(sorted[Math.floor(sorted.length / 2)]!),
    };
  });
  process.stdout.write(
    `\n${FILES} synthetic 2 h rides (${SECONDS} records, ${Math.round(files[0]!.byteLength / 1024)} KiB); ${os.cpus().length} cores, Node ${process.version}; load average ${os.loadavg()[0]!.toFixed(1)}\n\n`,
  );
  process.stdout.write(
    formatTable(
      ['stage', 'mean ms/file', 'p50 ms'],
      rows.map((r) => [r.stage, r.mean_ms.toFixed(2), r.p50_ms.toFixed(2)]),
    ),
  );
  const report = {
    benchmark: 'backfill-stages',
    at: new Date().toISOString(),
    node: process.version,
    cores: os.cpus().length,
    files: FILES,
    rows,
  };
  process.stdout.write(`wrote ${writeReport('backfill-stages', report)} and bench/results/latest.json\n`);
  return report;
}

/** The stages' figures, and how a stage is timed for file k (the warm-up files not counted). */
function stageTimer() {
  const stages = new Map<string, Stage>();
  // A stage timed several times for one file (the curves of each metric) adds up into that file's figure.
  const record = (name: string, ms: number, k: number) => {
    if (k < WARMUP) return;
    if (!stages.has(name)) stages.set(name, { name, ms: [] });
    const s = stages.get(name)!;
    const i = k - WARMUP;
    s.ms[i] = (s.ms[i] ?? 0) + ms;
  };
  const time = async <T>(name: string, k: number, fn: () => T | Promise<T>): Promise<T> => {
    const t = performance.now();
    const out = await fn();
    record(name, performance.now() - t, k);
    return out;
  };
  return { stages, record, time };
}

type StageTimer = ReturnType<typeof stageTimer>;

/** Engine stages, file by file: peek, decode, parse, resample, summary, curves, the ingest task; the activities of the files counted. */
async function engineStages(files: Uint8Array[], { time }: StageTimer): Promise<IngestedActivity[]> {
  const activities: IngestedActivity[] = [];
  for (const [k, bytes] of files.entries()) {
    await time('peek (recordedAt, scan)', k, () => recordedAt(bytes, 'fit'));
    await time('decode: fit-file-parser', k, () => fitFileParserDecode(bytes));
    await time('parseFit, fit-file-parser for the whole file (decode + records → channels)', k, () =>
      parseFit(bytes, { decoder: 'library' }),
    );
    const recs = await time('parseFit (lean record path + fit-file-parser for the rest)', k, () => parseFit(bytes));
    const grid = await time('resample', k, () => resample(recs[0]!));
    await time('summary + laps', k, () => {
      summarise(grid, 0, grid.length);
      lapStats(grid, recs[0]!.laps, { start: grid.start, end: recs[0]!.end.getTime() });
    });
    for (const metric of ['power', 'speed'] as const) {
      const x = grid.channels[metric]!;
      const filled = zeroFilled(x);
      const mm = await time('curves: meanMaxAll (power, speed)', k, () => meanMaxAll(filled));
      await time('curves: value-indexed + AWD + zero-fill', k, () => {
        zeroFilled(x);
        valueIndexed(mm.best, mm.start, LEVEL_STEP[metric]);
        accumulatedWorkDuration(x, LEVEL_STEP[metric]);
      });
    }
    await time('curves: value-indexed + AWD + zero-fill', k, () =>
      accumulatedWorkDuration(grid.channels.heart_rate!, LEVEL_STEP.heart_rate),
    );
    const r = await time('ingest task in-process (all of the above but peek/decode)', k, () =>
      ingestFile({ format: 'fit', bytes, sport: null }),
    );
    if (!r.ok) throw new Error(r.message);
    if (k >= WARMUP) activities.push(r.activities[0]!);
  }

  return activities;
}

/** The pool round trip beyond the task (one thread, one task at a time). */
async function poolRoundTrip(files: Uint8Array[], { record }: StageTimer): Promise<void> {
  const pool = createEnginePool({ threads: 1 });
  try {
    for (const [k, bytes] of files.entries()) {
      const t = performance.now();
      const inProcess = await ingestFile({ format: 'fit', bytes, sport: null });
      const mid = performance.now();
      const r = await pool.runIngest({ format: 'fit', bytes: new Uint8Array(bytes), sport: null });
      const end = performance.now();
      if (!r.ok || !inProcess.ok) throw new Error('ingest failed');
      record('engine pool round trip minus the task (hand-off, clone/transfer)', end - mid - (mid - t), k);
    }
  } finally {
    await pool.close();
  }
}

/** Sample files: DuckDB's COPY alone, and as the worker writes them (fsync and rename). */
async function sampleFileStages(activities: IngestedActivity[], { time }: StageTimer): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tds-bench-stages-'));
  const store = await createSampleStore();
  const noSync = await createSampleStore({ fsync: false });
  try {
    for (const [k, a] of [...activities.slice(0, WARMUP), ...activities].entries()) {
      await time('sample file: DuckDB COPY → Parquet (no fsync)', k, () => noSync.writeSampleFile(path.join(dir, `n${k}.parquet`), a));
      await time('sample file: as the worker writes it (COPY + fsync + rename)', k, () =>
        store.writeSampleFile(path.join(dir, `${k}.parquet`), a),
      );
    }
  } finally {
    await store.close();
    await noSync.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** PostgreSQL: the job's statements, on a throwaway database; the webhook fan-out of its two events. */
async function postgresStages(activities: IngestedActivity[], { time }: StageTimer, postgresUrl: string): Promise<void> {
  const database = await createTestDatabase(postgresUrl);
  const db = createDb(database.url, 4);
  try {
    const { backfillId, sourceFields } = await stagesBackfill(db, createUser, new Date(0));
    // Every file's source first, as the scan stores them: the completion check then sees files still waiting.
    const all = [...activities.slice(0, WARMUP), ...activities];
    const sources = [];
    for (const [k, a] of all.entries()) {
      const { source } = await insertSource(db, { id: crypto.randomUUID(), ...sourceFields(`${k}.fit`), recorded_at: new Date(a.start) });
      sources.push(source);
    }
    for (const [k, a] of all.entries()) {
      const source = sources[k]!;
      await time('PostgreSQL: findSource', k, () => findSource(db, source.id));
      const row = activityRow(activityId(source.id, 0), a);
      await time('PostgreSQL: storeActivities transaction', k, () => storeActivities(db, source, [row], new Date()));
      await time('PostgreSQL: completeBackfillIfDone', k, () => completeBackfillIfDone(db, backfillId, new Date()));
      const events = await db.selectFrom('events').select('id').where('fanned_out_at', 'is', null).execute();
      // The user authorized no application: what the relay does now (one UPDATE for the page),
      // and what a fan-out job per event did before (its transaction; the job's own cost apart).
      await time('webhooks: relay marks the 2 events fanned out (nobody to deliver to)', k, () =>
        fanOutWithoutDeliveries(
          db,
          events.map((e) => e.id),
          new Date(),
        ),
      );
      await db
        .updateTable('events')
        .set({ fanned_out_at: null })
        .where(
          'id',
          'in',
          events.map((e) => e.id),
        )
        .execute();
      await time('webhooks: a fan-out job transaction per event instead (before)', k, async () => {
        for (const e of events) await fanOutEvent(db, e.id, new Date());
      });
    }
  } finally {
    await db.destroy();
    await database.drop();
  }
}

/** BullMQ: a no-op processor over jobs queued like ingest jobs (addBulk, priority, attempts, removeOnComplete); wall ms per job. */
async function bullmqJob(redisUrl: string): Promise<number> {
  const prefix = `bench_stages_${process.pid}`;
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const queue = new Queue('ingest', { connection, prefix });
  const n = 500;
  let done = 0;
  let finished!: () => void;
  const all = new Promise<void>((r) => (finished = r));
  const worker = new Worker('ingest', async () => ({ activities: ['x'], stored: true }), {
    connection: new Redis(redisUrl, { maxRetriesPerRequest: null }),
    prefix,
    concurrency: 2,
    lockDuration: 30_000,
    stalledInterval: 30_000,
  });
  worker.on('completed', () => {
    if (++done === n) finished();
  });
  await worker.waitUntilReady();
  const t = performance.now();
  await queue.addBulk(
    Array.from({ length: n }, (_, i) => ({
      name: 'ingest',
      data: { sourceId: `s${i}` },
      opts: {
        jobId: `s${i}`,
        attempts: 3,
        backoff: { type: 'exponential', delay: 2000 },
        removeOnComplete: 1000,
        removeOnFail: 5000,
        priority: 10,
      },
    })),
  );
  await all;
  const bullMs = (performance.now() - t) / n;
  await worker.close();
  await queue.obliterate({ force: true });
  await queue.close();
  await connection.quit();
  return bullMs;
}
