import { loadAfterReprocess } from './training-load.ts';
import type { Job } from 'bullmq';
import { findSource } from '../db/sources.ts';
import { activitiesOfSource, replaceDerivedActivities } from '../db/reprocess.ts';
import type { NewActivity } from '../db/activities.ts';
import type { IngestedActivity } from '../engine/ingest/ingested.ts';
import { CHANNELS } from '../engine/channels.ts';
import { INGEST_RULES_VERSION } from '../engine/ingest/rules.ts';
import type { SampleFile } from '../engine/samples/sample-file.ts';
import { isObjectMissing, isStoreUnavailable } from '../lib/object-store.ts';
import { readActivitySamples } from './files.ts';
import { activityRow, isRetry, parseSource, removeLeftovers, writeSampleFiles, type IngestDeps } from './ingest.ts';
import type { ReprocessJob } from './queues.ts';

/** The ingest worker's dependencies: the same pool, sample store and database. */
export type ReprocessDeps = IngestDeps;

/** What one job reports, in activities (bin/cli.ts adds them up). */
export interface ReprocessResult {
  source_id: string;
  /** Re-derived with a visible change (row, curves or sample file): one `activity_updated` each. */
  reprocessed: number;
  /** Re-derived to exactly what was stored (or, without `all`, already at the current rules). */
  unchanged: number;
  /** The original no longer parses (or no longer holds the activity's session): left as it was. */
  failed: number;
  /** The original file is gone: left as it was. */
  missing_original: number;
  /** Deleted while the job ran: not written. */
  gone: number;
  /** Why nothing was done (the source was deleted, is not processed). */
  skipped?: string;
  /** The parse's refusal, for `failed` and `missing_original`. */
  error?: { code: string; message: string };
}

/**
 * Re-derive one source's activities from its original file under the current ingest rules
 * (engine/ingest/rules.ts): parse it in the engine pool as ingest does (the source's `sport` field
 * applied), then, per activity still stored (matched by session), replace its sample file, its
 * row's derived columns and its curves where they differ (db/reprocess.ts replaceDerivedActivities:
 * one transaction per source, committed once the new sample files are in place).
 *
 * Idempotent and restartable: ids are the stored ones (derived from source and session), rows are
 * only updated, and what equals the new parse is left alone, so a retried job, a job run again
 * after its worker was killed, or the command run twice changes nothing twice and sends no second
 * event. Without `all`, a source whose activities are all at the current version is skipped
 * without parsing (what a retry after a commit finds).
 */
export function reprocessProcessor(deps: ReprocessDeps) {
  return async function reprocess(job: Job<ReprocessJob>): Promise<ReprocessResult> {
    const result: ReprocessResult = { source_id: job.data.sourceId, reprocessed: 0, unchanged: 0, failed: 0, missing_original: 0, gone: 0 };
    const source = await findSource(deps.db, job.data.sourceId);
    if (!source) return { ...result, skipped: 'source deleted' };
    if (source.status !== 'processed') return { ...result, skipped: `source ${source.status}` };
    const stored = await activitiesOfSource(deps.db, source.id);
    if (!stored.length) return { ...result, skipped: 'no activity left' };
    if (!job.data.all && stored.every((a) => a.ingest_version >= INGEST_RULES_VERSION))
      return { ...result, unchanged: stored.length, skipped: 'already current' };

    const parsed = await parseSource(deps, source);
    if (!parsed.ok) {
      const missing = parsed.code === 'file_missing';
      deps.log.warn(
        missing
          ? 'reprocess: original file missing; activities left as they are'
          : 'reprocess: original no longer parses; activities left as they are',
        {
          source_id: source.id,
          activities: stored.length,
          code: parsed.code,
          message: parsed.message,
        },
      );
      return { ...result, [missing ? 'missing_original' : 'failed']: stored.length, error: { code: parsed.code, message: parsed.message } };
    }

    const fresh = new Map<string, IngestedActivity>();
    const rows: NewActivity[] = [];
    for (const a of stored) {
      const activity = parsed.activities[a.session_index];
      if (!activity) {
        result.failed++;
        deps.log.warn('reprocess: the original no longer holds this session; activity left as it is', {
          source_id: source.id,
          activity_id: a.id,
          session_index: a.session_index,
          sessions: parsed.activities.length,
        });
        continue;
      }
      rows.push(activityRow(a.id, a.session_index, activity, { metadata: source.metadata, sessions: parsed.activities.length }));
      fresh.set(a.id, activity);
    }
    if (!rows.length) return { ...result, error: { code: 'session_missing', message: 'The original no longer holds these sessions' } };

    const retried = isRetry(job);
    // A killed attempt may have left temporary files of any of them, whether or not they are written again now.
    if (retried)
      await removeLeftovers(
        deps.files,
        source.user_id,
        rows.map((r) => r.id),
      );
    const stamps = new Map(stored.map((a) => [a.id, a.updated_at]));
    const outcome = await replaceDerivedActivities(deps.db, source, rows, deps.now(), {
      retried,
      samplesDiffer: async (ids) => {
        const differ = new Set<string>();
        for (const id of ids)
          if (await sampleFileDiffers(deps, { id, user_id: source.user_id, updated_at: stamps.get(id)! }, fresh.get(id)!)) differ.add(id);
        return differ;
      },
      writeSamples: (ids) =>
        writeSampleFiles(
          deps,
          source.user_id,
          ids.map((id) => ({ id, data: fresh.get(id)! })),
          { leftovers: false },
        ),
    });
    if (outcome.gone.length)
      deps.log.info('reprocess: activities deleted meanwhile were not written', { source_id: source.id, activity_ids: outcome.gone });
    // Their training load, from the new samples and summaries (the row is replaced).
    const changed = new Set(outcome.changed);
    await loadAfterReprocess(
      deps,
      source.user_id,
      rows
        .filter((r) => changed.has(r.id))
        .map((r) => ({
          row: { ...r, user_id: source.user_id, timer_seconds: r.timer_seconds ?? null },
          channels: fresh.get(r.id)!.channels,
        })),
    );
    return { ...result, reprocessed: outcome.changed.length, unchanged: outcome.unchanged.length, gone: outcome.gone.length };
  };
}

/** Whether the stored sample file differs from the new parse's samples (a file that cannot be read does). */
async function sampleFileDiffers(
  deps: ReprocessDeps,
  activity: { id: string; user_id: string; updated_at: Date },
  next: IngestedActivity,
): Promise<boolean> {
  let file: SampleFile;
  try {
    file = await readActivitySamples(deps, activity);
  } catch (err) {
    if (isStoreUnavailable(err)) throw err;
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT' && !isObjectMissing(err))
      deps.log.warn('reprocess: sample file unreadable; written again', { activity_id: activity.id, err: (err as Error).message });
    return true;
  }
  return !sameSamples(file, next);
}

/** Same start, length and values of every channel (NaN equal to NaN; a channel the activity lacks is all NaN in the file). */
export function sameSamples(file: SampleFile, next: Pick<IngestedActivity, 'start' | 'length' | 'channels'>): boolean {
  if (file.start !== next.start || file.length !== next.length) return false;
  for (const channel of CHANNELS) {
    const stored = file.channels[channel];
    const fresh = next.channels[channel];
    for (let i = 0; i < next.length; i++) {
      const a = stored ? stored[i]! : NaN;
      const b = fresh ? fresh[i]! : NaN;
      if (a !== b && !(Number.isNaN(a) && Number.isNaN(b))) return false;
    }
  }
  return true;
}
