import type { Job } from 'bullmq';
import { activitiesNeedingCurves } from '../db/curves.ts';
import { replaceActivityCurves } from '../db/activities.ts';
import { AWD_METRICS } from '../engine/curves/activity-curves.ts';
import { isObjectMissing } from '../lib/object-store.ts';
import { readActivitySamples } from './files.ts';
import type { CurvesJob } from './queues.ts';
import type { IngestDeps } from './ingest.ts';

/** The ingest worker's dependencies: the same pool, sample store and database. */
export type CurvesDeps = IngestDeps;

const PAGE = 50;

/**
 * Recompute stored curves from the sample files: the activities whose curves are missing or
 * older than CURVES_VERSION (or, with `all`, every one), of one user or of everyone, in pages by
 * id. Idempotent: each activity's curves are replaced in one transaction, so a retried job only
 * redoes what it had not finished (with `all`, it starts over, which changes nothing).
 */
export function curvesProcessor(deps: CurvesDeps) {
  return async function recomputeCurves(job: Job<CurvesJob>) {
    let after: string | undefined;
    let done = 0;
    let missingSamples = 0;
    for (;;) {
      const page = await activitiesNeedingCurves(deps.db, { ...job.data, limit: PAGE, ...(after ? { after } : {}) });
      if (!page.length) break;
      for (const activity of page) {
        let file: Awaited<ReturnType<typeof deps.samples.readSampleFile>>;
        try {
          file = await readActivitySamples(deps, activity, AWD_METRICS);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOENT' && !isObjectMissing(err)) throw err;
          missingSamples++;
          deps.log.warn('curves: sample file missing', { activity_id: activity.id });
          continue;
        }
        const curves = await deps.pool.runCurves(file.channels);
        if (await replaceActivityCurves(deps.db, activity.id, curves, deps.now())) done++;
      }
      after = page.at(-1)!.id;
      await job.updateProgress({ done });
    }
    return { recomputed: done, missing_samples: missingSamples };
  };
}
