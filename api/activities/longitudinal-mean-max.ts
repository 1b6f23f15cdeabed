import type { Deps } from '../context.ts';
import { scanAtVersion } from '../../db/activities.ts';
import { curvesOf, packInt32 } from '../../db/curves.ts';
import type { ActivityFilter } from '../../db/filters.ts';
import type { MeanMaxMetric } from '../../engine/curves/activity-curves.ts';
import { LEVEL_STEP } from '../../engine/curves/levels.ts';
import { chunkBySamples, mergeChunks, type AfterOutput } from '../../engine/curves/longitudinal.ts';
import { durationFrame, levelFrame, type CurveActivity } from '../../engine/frames/curve-frames.ts';
import type { Frame } from '../../engine/frames/frame.ts';
import { slicesOf } from '../../engine/samples/channel-columns.ts';
import { samplePath } from '../../lib/storage.ts';
import { durationsFor } from './curve-params.ts';

/**
 * What GET /api/v1/activities/longitudinal-mean-max computes, once the route has validated the query:
 *
 * - without `after`, the value-indexed curve merged from the curves stored at ingestion (one query,
 *   one pool task);
 * - with `after`, curves after accumulated work from the samples: the activities and the user's data
 *   version in one snapshot, their samples as slices of the user's channel column (shared memory,
 *   rebuilt from the sample files only for what changed since its version: engine/samples/channel-columns.ts),
 *   the kernels in the pool (one task per chunk of about equal samples, as many chunks as the pool has
 *   threads, each reading the shared column), merged in order.
 */

/** Value-indexed, from the curves stored at ingestion. */
export async function storedLevelCurve(deps: Deps, userId: string, filter: ActivityFilter, metric: MeanMaxMetric, signal: AbortSignal): Promise<Frame> {
  const rows = await curvesOf(deps.db, userId, filter, metric, 'levels');
  const duration = packInt32(rows.map((r) => r.buffer));
  const start = packInt32(rows.map((r) => r.second!));
  const curve = await deps.engine.pool.run({ task: 'merge-levels', duration, start }, signal);
  return levelFrame(metric, [curve], rows, null);
}

/** Curves after accumulated work (`after`: kJ for power, metres for speed), by duration or by intensity, rows in the order asked. */
export async function afterWorkCurve(
  deps: Deps,
  userId: string,
  filter: ActivityFilter,
  request: { metric: MeanMaxMetric; after: number[]; by: 'duration' | 'intensity'; durations: Int32Array | 'all' | undefined },
  signal: AbortSignal,
): Promise<Frame> {
  const { engine } = deps;
  const { metric, after, by } = request;
  const { activities, samples } = await activitySamples(deps, userId, filter, metric, signal);
  const owners: CurveActivity[] = activities.map((a) => ({ id: a.id, sport: a.sport, start: a.start_time.getTime() }));
  const longest = activities.reduce((n, a) => Math.max(n, a.samples), 0);
  const durations = by === 'duration' ? durationsFor(request.durations, longest) : null;
  // The kernels take ascending thresholds; rows come out in the order asked.
  const order = [...new Set(after)].sort((a, b) => a - b);
  const thresholds = Float64Array.from(order, (x) => (metric === 'power' ? x * 1000 : x));
  let output: AfterOutput = by === 'duration' ? { kind: 'duration', curves: [] } : { kind: 'intensity', curves: [] };
  if (activities.length && (durations === null || durations.length)) {
    const offsets = new Int32Array(activities.length + 1);
    for (let a = 0; a < activities.length; a++) offsets[a + 1] = offsets[a]! + samples.length[a]!;
    const chunks = chunkBySamples(offsets, engine.pool.maxThreads);
    // The column is shared memory: every thread reads its slices where they lie.
    const outputs = await Promise.all(
      chunks.map(([from, to]) =>
        engine.pool.run(
          {
            task: 'after',
            samples: { values: samples.values, from: samples.from.slice(from, to), length: samples.length.slice(from, to) },
            thresholds: thresholds.slice(),
            durations: durations ? durations.slice() : null,
            step: LEVEL_STEP[metric],
          },
          signal,
        ),
      ),
    );
    output = mergeChunks(outputs, chunks.map(([from]) => from));
  }
  const asked = after.map((x) => order.indexOf(x));
  if (output.kind === 'intensity') {
    return levelFrame(metric, asked.map((j) => output.curves[j] ?? { duration: new Int32Array(0), start: new Int32Array(0), owner: new Int32Array(0) }), owners, after);
  }
  return durationFrame(metric, durations ?? new Int32Array(0), asked.map((j) => output.curves[j]), owners, after);
}

/**
 * The matching activities (oldest first) and their samples of `metric` as slices of the user's channel
 * column, at one data version. Should the column be of a later version lacking one of them (the data
 * changed between the two reads), both are read again.
 */
async function activitySamples(deps: Deps, userId: string, filter: ActivityFilter, metric: MeanMaxMetric, signal: AbortSignal) {
  const { db, config, engine } = deps;
  const listing = async () => {
    const all = await scanAtVersion(db, userId, {}, metric);
    return {
      version: all.version,
      activities: all.activities.map((a) => ({ id: a.id, stamp: a.updated_at.getTime(), samples: a.samples, path: samplePath(config.DATA_DIR, a.user_id, a.id) })),
    };
  };
  for (let attempt = 1; ; attempt++) {
    const { version, activities } = await scanAtVersion(db, userId, filter, metric);
    const column = await engine.columns.column(userId, metric, version, listing, signal);
    const samples = slicesOf(column, activities);
    if (samples) return { activities, samples };
    if (attempt === 3) throw new Error(`The ${metric} column of user ${userId} does not hold the activities of data version ${version}`);
  }
}
