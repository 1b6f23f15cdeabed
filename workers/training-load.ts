import type { Job } from 'bullmq';
import type { ActivityRow, Db } from '../db/database.ts';
import {
  activitiesNeedingLoad,
  storeActivityLoads,
  trainingContext,
  type NewActivityLoad,
  type TrainingContext,
} from '../db/training-load.ts';
import { resolveThresholds, thresholdValues, type Resolved } from '../engine/load/thresholds.ts';
import { curvesOf, packStored } from '../db/curves.ts';
import { bestEfforts, fitCriticalPower, MODEL_WINDOW_DAYS } from '../engine/curves/intensity-duration-model.ts';
import { LEVEL_STEP } from '../engine/curves/levels.ts';
import { defaultZoneModel, ZONE_METRICS, type ZoneMetric, type ZoneModel } from '../engine/load/zones.ts';
import { rootSport } from '../lib/sports.ts';
import { addDays, formatLocal } from '../lib/time.ts';
import type { EnginePool } from '../engine/pool.ts';
import type { StoredFiles } from '../lib/object-store-setup.ts';
import { readActivitySamples } from './files.ts';
import { isObjectMissing } from '../lib/object-store.ts';
import type { SampleStore } from '../engine/samples/sample-file.ts';
import type { Logger } from '../lib/log.ts';
import type { TrainingLoadJob } from './queues.ts';

/**
 * Training load rows (db/training-load.ts): computed for a new file's activities by its ingest, from
 * the channels it has in memory, and committed with them (./ingest.ts); after a re-derivation
 * (./reprocess.ts); and by this job for the activities without one (a history import's, once it
 * completes; those whose row a change of thresholds, tests, resting heart rate or zones deleted; those
 * stored before training load), from their sample files. Idempotent: a row is stored only under the
 * version its inputs were read at, and a retried job recomputes only what is still missing.
 */

/** What the load needs: the database, the engine pool, the sample store (a subset of the ingest worker's). */
export interface LoadDeps {
  db: Db;
  pool: EnginePool;
  samples: SampleStore;
  /** The object store of the sample files, and their local copies (./files.ts). */
  files: StoredFiles;
  log: Logger;
  now: () => Date;
}

type LoadActivity = Pick<
  ActivityRow,
  'id' | 'user_id' | 'sport' | 'start_time' | 'end_time' | 'utc_offset_seconds' | 'summary' | 'timer_seconds'
>;

/** The zone model of each metric for a sport: the athlete's edited zones of its root, else the default. */
export function zoneModels(context: Pick<TrainingContext, 'zones'>, sport: string): Record<ZoneMetric, ZoneModel> {
  const root = rootSport(sport) ?? sport;
  const edited = context.zones[root] ?? {};
  return Object.fromEntries(
    ZONE_METRICS.map((m) => [m, edited[m] ? { model: 'custom', zones: edited[m] } : defaultZoneModel(root, m)]),
  ) as Record<ZoneMetric, ZoneModel>;
}

/** The local date of an activity's start: the day its stress counts on. */
export const activityDay = (a: Pick<ActivityRow, 'start_time' | 'utc_offset_seconds'>) =>
  formatLocal(a.start_time, a.utc_offset_seconds).slice(0, 10);

/** Compute and store one activity's load under `context` (db/training-load.ts storeActivityLoads' outcome). */
export async function computeActivityLoad(
  deps: LoadDeps,
  context: TrainingContext,
  activity: LoadActivity,
  channels: Partial<Record<ZoneMetric, Float64Array>>,
) {
  return storeActivityLoads(deps.db, [await activityLoadRow(deps, context, activity, channels)], context.version, deps.now());
}

/** One activity's load row under `context` (the channels are handed to the pool: the caller is done with them). */
async function activityLoadRow(
  deps: LoadDeps,
  context: TrainingContext,
  activity: LoadActivity,
  channels: Partial<Record<ZoneMetric, Float64Array>>,
): Promise<NewActivityLoad> {
  const day = activityDay(activity);
  const resolved = resolveThresholds(context.entries, activity.sport, day, context.restingHr);
  const summary = (activity.summary ?? {}) as Record<string, Record<string, number> | undefined>;
  if (!resolved.critical_power && summary.power) Object.assign(resolved, await modelledThresholds(deps, activity, day));
  const seconds = activity.timer_seconds ?? (activity.end_time.getTime() - activity.start_time.getTime()) / 1000;
  const load = await deps.pool.activityLoad({
    channels,
    stress: {
      root: rootSport(activity.sport) ?? activity.sport,
      seconds,
      normalizedPower: summary.power?.normalized,
      meanSpeed: summary.speed?.mean,
      meanHeartRate: summary.heart_rate?.mean,
    },
    thresholds: thresholdValues(resolved),
    zones: zoneModels(context, activity.sport),
  });
  return { activityId: activity.id, userId: activity.user_id, sport: activity.sport, day, load, thresholds: resolved };
}

/**
 * Without a declared or test critical power, the 3-parameter critical-power model fitted to the best
 * efforts of the 90 days before the activity's day (its root sport's rides, as the profile's
 * intensity-duration model fits them): its CP and W′, origin `modelled`. Fitted from the activities
 * stored when the load is computed; none when the efforts do not determine a fit.
 */
async function modelledThresholds(deps: LoadDeps, activity: LoadActivity, day: string): Promise<Resolved> {
  const toDay = addDays(day, -1);
  const fromDay = addDays(day, -MODEL_WINDOW_DAYS);
  const rows = await curvesOf(
    deps.db,
    activity.user_id,
    { fromDay, toDay, sports: [rootSport(activity.sport) ?? activity.sport] },
    'power',
    'levels',
  );
  if (!rows.length) return {};
  const envelope = await deps.pool.mergeLevels({ duration: packStored(rows, 'buffer'), start: packStored(rows, 'second') });
  const points = bestEfforts(envelope, LEVEL_STEP.power);
  const fit = fitCriticalPower(points.durations, points.values);
  if (!fit || !(fit.cp > 0) || !(fit.wPrime > 0)) return {};
  return {
    critical_power: { value: fit.cp, origin: 'modelled', valid_from: fromDay },
    w_prime: { value: fit.wPrime, origin: 'modelled', valid_from: fromDay },
  };
}

/** An activity's load channels from its sample file; none when the file is gone (the load then has no zones). */
async function readLoadChannels(
  deps: LoadDeps,
  activity: LoadActivity & { updated_at: Date },
): Promise<Partial<Record<ZoneMetric, Float64Array>>> {
  try {
    const file = await readActivitySamples(deps, activity, ZONE_METRICS);
    return file.channels as Partial<Record<ZoneMetric, Float64Array>>;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT' && !isObjectMissing(err)) throw err;
    deps.log.warn('training load: sample file missing', { activity_id: activity.id });
    return {};
  }
}

/**
 * A new file's activities' load rows, computed before the ingest's transaction commits them (from
 * copies of the channels it is still writing), with the version they were computed under, for
 * db/training-load.ts insertActivityLoads in that transaction. Undefined when they could not be
 * computed: that is only logged, and the housekeeping's sweep queues the job that computes them.
 */
export async function loadsOfNewActivities(
  deps: LoadDeps,
  userId: string,
  activities: { row: LoadActivity; channels: Partial<Record<string, Float64Array>> }[],
): Promise<{ rows: NewActivityLoad[]; version: number } | undefined> {
  try {
    const context = await trainingContext(deps.db, userId);
    const rows: NewActivityLoad[] = [];
    for (const { row, channels } of activities) {
      const copies = Object.fromEntries(ZONE_METRICS.flatMap((m) => (channels[m] ? [[m, channels[m].slice()]] : [])));
      rows.push(await activityLoadRow(deps, context, row, copies));
    }
    return { rows, version: context.version };
  } catch (err) {
    deps.log.warn('could not compute the training load of a new file; the housekeeping will queue it', { user_id: userId, err });
    return undefined;
  }
}

/**
 * After re-deriving activities (./reprocess.ts), their load from the new channels and summaries, in
 * a transaction of its own; a failure is only logged (the housekeeping's sweep then queues the job).
 */
export async function loadAfterReprocess(
  deps: LoadDeps,
  userId: string,
  activities: { row: LoadActivity; channels: Partial<Record<string, Float64Array>> }[],
) {
  if (!activities.length) return;
  const loads = await loadsOfNewActivities(deps, userId, activities);
  if (loads) await storeActivityLoads(deps.db, loads.rows, loads.version, deps.now());
}

const PAGE = 100;

export function trainingLoadProcessor(deps: LoadDeps) {
  return async function computeTrainingLoad(job: Job<TrainingLoadJob>) {
    const context = await trainingContext(deps.db, job.data.userId);
    // An older version's job: the newer one (queued by the change that bumped it) does the work.
    if (context.version > job.data.version) return { superseded: context.version };
    let after: string | undefined;
    let computed = 0;
    for (;;) {
      const page = await activitiesNeedingLoad(deps.db, job.data.userId, { limit: PAGE, ...(after ? { after } : {}) });
      if (!page.length) break;
      for (const activity of page) {
        const outcome = await computeActivityLoad(deps, context, activity, await readLoadChannels(deps, activity));
        if (outcome === 'superseded') return { computed, superseded: true };
        if (outcome === 'stored') computed++;
      }
      after = page.at(-1)!.id;
      await job.updateProgress({ computed });
    }
    return { computed };
  };
}
