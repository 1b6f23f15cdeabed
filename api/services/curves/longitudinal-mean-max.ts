import type { Deps } from '../../services/deps.ts';
import { activitiesForCurves, type CurveActivityRow } from '../../../db/activities.ts';
import { curvesOf, packStored } from '../../../db/curves.ts';
import type { ActivityFilter } from '../../../db/filters.ts';
import type { MeanMaxMetric } from '../../../engine/curves/activity-curves.ts';
import { LEVEL_STEP } from '../../../engine/curves/levels.ts';
import { mergeChunks, type AfterOutput } from '../../../engine/curves/longitudinal.ts';
import { durationFrame, levelFrame, type CurveActivity } from '../../../engine/frames/curve-frames.ts';
import type { Frame } from '../../../engine/frames/frame.ts';
import { durationsFor } from '../activities/curve-params.ts';
import { gridCurves, gridPlan, ridesToRead } from './fatigue-grid.ts';
import { columnActivities, runInChunks } from './column-chunks.ts';

/**
 * What GET /api/v1/activities/longitudinal-mean-max computes, once the route has validated the query:
 *
 * - without `after`, the value-indexed curve merged from the curves stored at ingestion (one query,
 *   one pool task);
 * - with `after`, power by duration, every `after` a multiple of 250 kJ (to 10,000) and every duration
 *   a default one: merged from the rides' fatigue grids (./fatigue-grid.ts), a few hundred numbers
 *   per ride, the same answer as from the samples; with other `after` values (default durations) the
 *   grids rule out the rides that cannot hold the answer, and the rest are read as below;
 * - otherwise with `after`, curves after accumulated work from the samples: the activities of the range (one
 *   query), where their samples lie in the user's channel column (engine/samples/channel-columns.ts:
 *   those it lacks are read from their sample files and appended first), the kernels in the pool (one
 *   task per chunk of about equal samples, as many chunks as the pool has threads, each thread
 *   reading its chunk's bytes from the column file), merged in order. Should a compaction replace the
 *   column file between the two, the activities are placed again.
 *
 * Cost, and what a client's numbers can drive: `after` is at most 5 values, each at most AFTER_MAX
 * (./curve-params.ts), refused before this runs. On the event loop the work is bounded by those 5 and
 * by the rows of the range: sorting the values, the grid plan (gridPoint and bracket answer in O(1)
 * whatever the value: bracket searches the grid's 41 points, not the number's multiples of 250 kJ)
 * and the frame's assembly, proportional to the rows the kernels return. Everything proportional to
 * samples (the work cuts, the kernels, the merges) runs in the engine pool under the request's
 * signal: O(samples of the range × durations), never O(after).
 */

/** Value-indexed, from the curves stored at ingestion. */
export async function storedLevelCurve(
  deps: Deps,
  userId: string,
  filter: ActivityFilter,
  metric: MeanMaxMetric,
  signal: AbortSignal,
): Promise<Frame> {
  const rows = await curvesOf(deps.db, userId, filter, metric, 'levels');
  const duration = packStored(rows, 'buffer');
  const start = packStored(rows, 'second');
  const curve = await deps.engine.pool.mergeLevels({ duration, start }, signal);
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
  const { metric, after, by } = request;
  const activities = await activitiesForCurves(deps.db, userId, filter, metric);
  const owners: CurveActivity[] = activities.map((a) => ({ id: a.id, sport: a.sport, start: a.start_ms }));
  const longest = activities.reduce((n, a) => Math.max(n, a.samples), 0);
  const durations = by === 'duration' ? durationsFor(request.durations, longest) : null;
  // The kernels take ascending thresholds; rows come out in the order asked.
  const order = [...new Set(after)].sort((a, b) => a - b);
  const thresholds = Float64Array.from(order, (x) => (metric === 'power' ? x * 1000 : x));
  let output: AfterOutput = by === 'duration' ? { kind: 'duration', curves: [] } : { kind: 'intensity', curves: [] };
  const plan = metric === 'power' && durations?.length ? gridPlan(thresholds, durations) : null;
  if (!activities.length || durations?.length === 0) {
    // nothing to compute
  } else if (plan?.kind === 'merge') {
    output = await gridCurves(deps, userId, activities, plan, signal);
  } else {
    const keep = plan ? await ridesToRead(deps, userId, activities, plan, signal) : null;
    const read = keep ? keep.map((a) => activities[a]!) : activities;
    if (read.length) {
      output = await sampleCurves(deps, userId, read, { metric, thresholds, durations }, signal);
      if (keep) output = renumberOwners(output, keep);
    }
  }
  const asked = after.map((x) => order.indexOf(x));
  if (output.kind === 'intensity') {
    return levelFrame(
      metric,
      asked.map((j) => output.curves[j] ?? { duration: new Int32Array(0), start: new Int32Array(0), owner: new Int32Array(0) }),
      owners,
      after,
    );
  }
  return durationFrame(
    metric,
    durations ?? new Int32Array(0),
    asked.map((j) => output.curves[j]),
    owners,
    after,
  );
}

/** From the activities' samples (their channel column), in chunks of about equal samples, one pool task each, merged in order. */
async function sampleCurves(
  deps: Deps,
  userId: string,
  activities: CurveActivityRow[],
  request: { metric: MeanMaxMetric; thresholds: Float64Array; durations: Int32Array | null },
  signal: AbortSignal,
): Promise<AfterOutput> {
  const { metric, thresholds, durations } = request;
  const { outputs, firsts } = await runInChunks(deps, userId, metric, columnActivities(deps, userId, activities), signal, (place) =>
    deps.engine.pool.afterColumn(
      {
        place,
        thresholds: thresholds.slice(),
        durations: durations ? durations.slice() : null,
        step: LEVEL_STEP[metric],
      },
      signal,
    ),
  );
  return mergeChunks(outputs, firsts);
}

/** Owners numbered within a subset of the activities (`keep`: their indices, ascending) renumbered as indices of all. */
function renumberOwners(output: AfterOutput, keep: number[]): AfterOutput {
  const renumber = (owner: Int32Array) => owner.map((o) => (o < 0 ? o : keep[o]!));
  return output.kind === 'duration'
    ? { kind: 'duration', curves: output.curves.map((c) => ({ ...c, owner: renumber(c.owner) })) }
    : { kind: 'intensity', curves: output.curves.map((c) => ({ ...c, owner: renumber(c.owner) })) };
}
