import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type { Job } from 'bullmq';
import type { Source, SourceMetadata, StoredLap } from '../db/database.ts';
import { findSource, markSourceFailed } from '../db/sources.ts';
import { activityId, activityStamps, storeActivities, type NewActivity } from '../db/activities.ts';
import type { ChannelColumns } from '../engine/samples/channel-columns.ts';
import { MEAN_MAX_METRICS } from '../engine/curves/activity-curves.ts';
import { AFTER_GRID_CHANNEL, afterGridEntry } from '../engine/curves/after-grid.ts';
import { storeGrids } from '../db/fatigue-grids.ts';
import type { Channel } from '../engine/channels.ts';
import { completeBackfillIfDone } from '../db/backfills.ts';
import type { SampleData } from '../engine/samples/sample-file.ts';
import type { IngestedActivity, IngestResult } from '../engine/ingest/ingested.ts';
import { isGzip } from '../engine/ingest/sniff.ts';
import { removeFiles } from '../lib/storage.ts';
import { isObjectMissing, sampleKey, sourceKey } from '../lib/object-store.ts';
import type { StoredFiles } from '../lib/object-store-setup.ts';
import { enqueueTrainingLoad, requeueIngest, type IngestJob, type Queues } from './queues.ts';
import { insertActivityLoads, loadVersion, modelledLoadStale } from '../db/training-load.ts';
import { withActor } from '../lib/actor.ts';
import { loadsOfNewActivities, type LoadDeps } from './training-load.ts';

/** The load's dependencies (./training-load.ts) and the ingest's own. */
export interface IngestDeps extends LoadDeps {
  /** The engine task's deadline (INGEST_TIMEOUT_MS): past it the thread is stopped and the source fails with `ingest_timeout`. */
  timeoutMs?: number;
  /** Where a completed backfill queues the training-load job (./training-load.ts). */
  queues?: Queues;
  /** The users' channel columns: a stored activity's power and speed are appended after the commit. */
  columns?: ChannelColumns;
}

/**
 * Ingest one source: parse it in the engine pool, then write each activity's sample file while
 * the transaction that inserts every activity and marks the source processed runs; it commits
 * once the files are in place (storeActivities' `beforeCommit`), so a committed row never points
 * at a missing file, and a failed write writes no row.
 *
 * Idempotent, so a retried or restarted job (a worker killed mid-way) changes nothing twice: a
 * source that is no longer `processing` is skipped; activity ids derive from (source, session),
 * so a second attempt overwrites the same sample files and its rows conflict with the first's.
 */
export function ingestProcessor(deps: IngestDeps) {
  return async function ingest(job: Job<IngestJob>) {
    const source = await findSource(deps.db, job.data.sourceId);
    if (!source) return { skipped: 'source deleted' };
    if (source.status !== 'processing') return { skipped: `source already ${source.status}` };
    // A source uploaded through a delegation: its events name the same actor (lib/actor.ts).
    return withActor(source.actor_id, () => ingestSource(deps, job, source));
  };
}

async function ingestSource(deps: IngestDeps, job: Job<IngestJob>, source: Source) {
  const result = await parseSource(deps, source);
  if (!result.ok) {
    await markSourceFailed(deps.db, source.id, result.code, result.message, deps.now());
    await finishBackfill(deps, source);
    return { failed: result.code };
  }

  const sessions = result.activities.length;
  const rows: NewActivity[] = result.activities.map((activity, index) =>
    activityRow(activityId(source.id, index), index, activity, { metadata: source.metadata, sessions }),
  );
  const written = writeSampleFiles(
    deps,
    source.user_id,
    result.activities.map((activity, index) => ({ id: rows[index]!.id, data: activity })),
    { leftovers: isRetry(job) || (job.data.requeues ?? 0) > 0 },
  );
  written.catch(() => {}); // awaited below; this keeps a failure before then from counting as unhandled
  // Their training load, committed with them (a history import's comes once it completes: finishBackfill).
  const loads = source.backfill_id
    ? undefined
    : await loadsOfNewActivities(
        deps,
        source.user_id,
        rows.map((r, i) => ({
          row: { ...r, user_id: source.user_id, timer_seconds: r.timer_seconds ?? null },
          channels: result.activities[i]!.channels,
        })),
      );
  const stored = await storeActivities(deps.db, source, rows, deps.now(), {
    beforeCommit: () => written,
    ...(loads ? { inTransaction: (trx) => insertActivityLoads(trx, loads.rows, loads.version, deps.now()) } : {}),
  });
  await written;
  if (stored)
    await appendToColumns(
      deps,
      source.user_id,
      rows.map((r, i) => ({ id: r.id, channels: result.activities[i]!.channels, afterGrid: result.activities[i]!.afterGrid })),
    );
  await finishBackfill(deps, source);
  return { activities: stored ? rows.map((r) => r.id) : [], stored };
}

/**
 * After the commit, the activities' power appended to the user's channel columns (one activity's
 * bytes each, stamped with the row's updated_at), so that the first curve with `after` finds them
 * there; their speed too once the user's speed column exists (a request asked for it). The columns are derived: when this fails (or the worker dies before it), the
 * first request that needs an activity reads its sample file instead, so a failure is only logged.
 */
export async function appendToColumns(
  deps: Pick<IngestDeps, 'db' | 'columns' | 'log'>,
  userId: string,
  activities: { id: string; channels: Partial<Record<Channel, Float64Array>>; afterGrid?: Float64Array | null }[],
) {
  const { columns } = deps;
  if (!columns || !activities.length) return;
  try {
    const stamps = await activityStamps(
      deps.db,
      activities.map((a) => a.id),
    );
    for (const channel of MEAN_MAX_METRICS) {
      const items = activities.flatMap((a) => {
        const values = a.channels[channel];
        const stamp = stamps.get(a.id);
        return values && stamp !== undefined ? [{ id: a.id, stamp, values, afterGrid: a.afterGrid }] : [];
      });
      // Power (fatigue curves) always, so that an athlete's first request finds it; speed once asked for.
      await columns.append(
        userId,
        channel,
        items.map(({ id, stamp, values }) => ({ id, stamp, values })),
        { ifStarted: channel !== 'power' },
      );
      // And power's fatigue grid (a few hundred numbers per ride, made by the ingest task in the pool),
      // so that fatigue curves at the usual thresholds never read samples: in this host's column, and
      // in PostgreSQL for every other host's (db/fatigue-grids.ts).
      if (channel === 'power') {
        const grids = items.map(({ id, stamp, values, afterGrid }) => ({ id, stamp, values: afterGrid ?? afterGridEntry(values) }));
        await storeGrids(
          deps.db,
          AFTER_GRID_CHANNEL,
          grids.map(({ id, stamp, values }) => ({ id, stamp, entry: values })),
        );
        await columns.append(userId, AFTER_GRID_CHANNEL, grids);
      }
    }
  } catch (err) {
    deps.log.warn('could not append to the channel columns; the first request will read the sample files', { user_id: userId, err });
  }
}

/**
 * Parse a source's original (from the object store) in the engine pool, with the source's `sport`
 * field: what ingest does, and what the reprocess job (./reprocess.ts) does again under newer rules.
 * A missing original is `file_missing`; a store out of reach throws (the job waits: ./outage.ts);
 * past `timeoutMs` the task is stopped (`ingest_timeout`).
 */
export async function parseSource(
  deps: Pick<IngestDeps, 'pool' | 'files' | 'timeoutMs'>,
  source: Pick<Source, 'id' | 'user_id' | 'type' | 'sport'>,
): Promise<IngestResult> {
  let bytes: Buffer;
  try {
    bytes = await deps.files.store.get(sourceKey(source.user_id, source.id, source.type));
  } catch (err) {
    if (isObjectMissing(err)) return { ok: false, code: 'file_missing', message: 'The uploaded file is no longer stored' };
    throw err;
  }
  // Kept as uploaded when its gzip stream was damaged (engine/ingest/check-file-on-disk.ts).
  if (isGzip(bytes)) return { ok: false, code: 'invalid_gzip', message: 'The file is gzip-compressed but its stream is corrupt' };
  const ms = deps.timeoutMs;
  const signal = ms ? AbortSignal.timeout(ms) : undefined;
  try {
    return await deps.pool.runIngest(
      { format: source.type, bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), sport: source.sport },
      signal,
    );
  } catch (err) {
    if (signal?.aborted)
      return {
        ok: false,
        code: 'ingest_timeout',
        message: `Parsing the file took longer than ${Math.round(ms! / 1000)} s (INGEST_TIMEOUT_MS) and was stopped`,
      };
    throw err;
  }
}

/**
 * An activity's row. With its source's `metadata` (a platform export's record: workers/backfill-plan.ts),
 * the row gets its name and description, and its sport replaces the file's when the file holds one
 * activity (`sessions`): the athlete's choice on the platform wins over the device's.
 */
export function activityRow(
  id: string,
  index: number,
  a: IngestedActivity,
  source?: { metadata: SourceMetadata | null; sessions: number },
): NewActivity {
  const meta = source?.metadata;
  return {
    id,
    session_index: index,
    sport: meta?.sport && source?.sessions === 1 ? meta.sport : a.sport,
    name: meta?.name ?? null,
    description: meta?.description ?? null,
    start_time: new Date(a.start),
    end_time: new Date(a.end),
    utc_offset_seconds: a.utcOffsetSeconds,
    metrics: a.metrics,
    summary: Object.keys(a.summary).length ? a.summary : null,
    laps: a.laps.length ? (a.laps as unknown as StoredLap[]) : null,
    distance: a.distance,
    devices: a.devices,
    samples: a.length,
    implausible_samples: a.implausibleSamples,
    ingest_version: a.ingestVersion,
    timer_seconds: a.timerSeconds,
    moving_seconds: a.movingSeconds,
    device_summary: a.deviceSummary,
    dropped_records: a.droppedRecords,
    device_checks: a.deviceChecks,
    curves: a.curves,
  };
}

/** Whether this run of the job follows an attempt that may have been killed mid-way (a retry, or a stalled job run again). */
export function isRetry(job: Job): boolean {
  return job.attemptsMade > 0 || job.stalledCounter > 0;
}

/**
 * Write activities' sample files (atomically, one after the other), then, with `leftovers`, remove
 * the temporary files an earlier attempt killed while writing them left behind.
 */
export async function writeSampleFiles(
  deps: Pick<IngestDeps, 'samples' | 'files'>,
  userId: string,
  files: { id: string; data: SampleData }[],
  opts: { leftovers: boolean },
): Promise<void> {
  // Written on this host's disk (DuckDB), then stored: the store's object is whole or absent.
  for (const { id, data } of files)
    await deps.files.local.create(sampleKey(userId, id), (file) => deps.samples.writeSampleFile(file, data));
  // An attempt killed while writing leaves its temporary file behind; a retry (or a requeued job) clears it.
  if (opts.leftovers)
    await removeLeftovers(
      deps.files,
      userId,
      files.map((f) => f.id),
    );
}

/** Temporary files of earlier attempts at writing these activities' sample files (`<id>.parquet.tmp-…`) on this host. */
export async function removeLeftovers(files: StoredFiles, userId: string, ids: string[]) {
  if (!ids.length) return;
  const dir = path.dirname(files.local.pathOf(sampleKey(userId, ids[0]!)));
  const names = await readdir(dir).catch(() => [] as string[]);
  const prefixes = ids.map((id) => `${path.basename(files.local.pathOf(sampleKey(userId, id)))}.tmp-`);
  await removeFiles(names.filter((n) => prefixes.some((p) => n.startsWith(p))).map((n) => path.join(dir, n)));
}

async function finishBackfill(deps: Pick<IngestDeps, 'db' | 'now' | 'log' | 'queues'>, source: Source) {
  if (source.backfill_id && (await completeBackfillIfDone(deps.db, source.backfill_id, deps.now()))) {
    deps.log.info('backfill completed', { backfill_id: source.backfill_id });
    // The imported activities' load, by the job (from their sample files); the loads whose critical
    // power was modelled before the history arrived are fitted again on all of it.
    const version = (await modelledLoadStale(deps.db, source.user_id)) ?? (await loadVersion(deps.db, source.user_id));
    if (deps.queues)
      await enqueueTrainingLoad(deps.queues, source.user_id, version).catch((err) =>
        deps.log.warn('could not queue the training-load job; the housekeeping will', { err }),
      );
  }
}

/** BullMQ's reason for failing a job whose worker died holding it more than `maxStalledCount` times. */
const STALLED_TOO_OFTEN = 'job stalled more than allowable limit';

/**
 * After the last attempt of a job failed on an unexpected error (not a bad file), the source is
 * marked failed so that clients stop waiting for it. A job that BullMQ failed because its worker
 * died holding it twice (killed, out of memory: STALLED_TOO_OFTEN, whatever attempts remain) is
 * queued again at once (requeueIngest, which marks the source failed instead once it was requeued
 * MAX_REQUEUES times), so a file whose workers were killed by a deploy or two still ends `processed`,
 * and one that kills every worker ends `failed`; neither waits for housekeeping.
 */
export async function ingestGaveUp(
  deps: Pick<IngestDeps, 'db' | 'now' | 'log'> & { queues: Queues },
  job: Job<IngestJob> | undefined,
  err: Error,
) {
  if (job && err.message === STALLED_TOO_OFTEN) {
    const source = await findSource(deps.db, job.data.sourceId);
    if (source?.status !== 'processing') return;
    const { queued, exhausted } = await requeueIngest(deps.queues, [{ id: source.id, backfill: !!source.backfill_id }]);
    if (queued.length) deps.log.warn('ingest requeued after its workers died', { source_id: source.id });
    for (const id of exhausted) await markGaveUp(deps, id);
    return;
  }
  if (!job || job.attemptsMade < (job.opts.attempts ?? 1)) return;
  deps.log.error('ingest gave up', { source_id: job.data.sourceId, err });
  // When this fails too (PostgreSQL down), housekeeping finds the source `processing` with a failed job and requeues it.
  await markGaveUp(deps, job.data.sourceId);
}

/** Mark a source failed with `internal_error` (once: only a source still `processing`), and complete its backfill if that was the last. */
export async function markGaveUp(deps: Pick<IngestDeps, 'db' | 'now' | 'log'>, sourceId: string) {
  if (await markSourceFailed(deps.db, sourceId, 'internal_error', 'The file could not be processed; upload it again later', deps.now())) {
    const source = await findSource(deps.db, sourceId);
    if (source) await finishBackfill(deps, source);
  }
}
