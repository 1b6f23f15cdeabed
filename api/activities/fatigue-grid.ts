import type { Deps } from '../context.ts';
import type { activitiesForScan } from '../../db/activities.ts';
import { AFTER_GRID_CHANNEL, gridDurations, gridPoint } from '../../engine/curves/after-grid.ts';
import { chunkBySamples, type AfterOutput } from '../../engine/curves/longitudinal.ts';
import type { ColumnActivity } from '../../engine/samples/channel-columns.ts';
import { isColumnMoved, type ColumnPlace } from '../../engine/samples/column-read.ts';
import { samplePath } from '../../lib/storage.ts';

/**
 * Fatigue curves of power from the rides' stored fatigue grids (engine/curves/after-grid.ts): when
 * every threshold is a grid point and every duration a grid duration, a request reads a few hundred
 * numbers per ride from the user's grid column instead of its samples. Rides the column lacks (or
 * holds for another stamp) get their entries first, computed in the pool from the power column, and
 * appended: the ingest job appends a new ride's entry after its commit, so that is the first request
 * of rides stored before the grid existed, or of a lost column.
 */

type ScanRow = Awaited<ReturnType<typeof activitiesForScan>>[number];

/** Grid points and grid-duration indices for these thresholds (J) and durations, or null when off the grid. */
export function onTheGrid(thresholds: Float64Array, durations: Int32Array): { points: Int32Array; columns: Int32Array } | null {
  const points = Int32Array.from(thresholds, (t) => gridPoint(t));
  if (points.some((k) => k < 0)) return null;
  const columns = gridDurations(durations);
  return columns ? { points, columns } : null;
}

/** The curves (one per point, as longitudinalAfter by duration gives them) from the grid column. */
export async function gridCurves(deps: Deps, userId: string, activities: ScanRow[], grid: { points: Int32Array; columns: Int32Array }, signal: AbortSignal): Promise<AfterOutput> {
  const { engine } = deps;
  const listed = columnActivities(deps, activities);
  const derive = (batch: ColumnActivity[], s?: AbortSignal) => buildEntries(deps, userId, batch, s);
  const merge = (place: ColumnPlace) => engine.pool.run({ task: 'after-grid', place, points: grid.points.slice(), columns: grid.columns.slice() }, signal);
  return retryMoved(async () => merge(await engine.columns.place(userId, AFTER_GRID_CHANNEL, listed, signal, derive)));
}

/** The rides' grid entries, from their power (the power column, filled from the sample files where it lacks them). */
async function buildEntries(deps: Deps, userId: string, batch: ColumnActivity[], signal?: AbortSignal): Promise<Float64Array[]> {
  const { engine } = deps;
  const offsets = new Int32Array(batch.length + 1);
  batch.forEach((a, i) => (offsets[i + 1] = offsets[i]! + a.samples));
  const chunks = chunkBySamples(offsets, engine.pool.maxThreads);
  const build = (place: ColumnPlace) =>
    Promise.all(
      chunks.map(([from, to]) =>
        engine.pool.run({ task: 'after-grid-build', place: { file: place.file, offset: place.offset.slice(from, to), length: place.length.slice(from, to), width: place.width.slice(from, to) } }, signal),
      ),
    );
  const built = await retryMoved(async () => build(await engine.columns.place(userId, 'power', batch, signal)));
  return built.flatMap(({ values, length }) => {
    let at = 0;
    return Array.from(length, (n) => values.subarray(at, (at += n)));
  });
}

/** The activities as a channel column checks them (id, stamp, sample count, sample file). */
export function columnActivities(deps: Deps, activities: ScanRow[]): ColumnActivity[] {
  return activities.map((a) => ({ id: a.id, stamp: a.updated_at.getTime(), samples: a.samples, path: samplePath(deps.config.DATA_DIR, a.user_id, a.id) }));
}

/** Once more when a compaction replaced the column file between placing and reading. */
export async function retryMoved<T>(fn: () => Promise<T>): Promise<T> {
  return fn().catch((err: unknown) => {
    if (!isColumnMoved(err)) throw err;
    return fn();
  });
}
