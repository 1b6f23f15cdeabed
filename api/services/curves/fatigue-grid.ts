import type { Deps } from '../../services/deps.ts';
import type { CurveActivityRow } from '../../../db/activities.ts';
import { AFTER_GRID_CHANNEL, bracket, gridDurations, gridPoint } from '../../../engine/curves/after-grid.ts';
import type { AfterOutput } from '../../../engine/curves/longitudinal.ts';
import type { ColumnActivity } from '../../../engine/samples/channel-columns.ts';
import { retryIfMoved, type ColumnPlace } from '../../../engine/samples/column-read.ts';
import { columnActivities, runInChunks } from './column-chunks.ts';
import { storedGrids, storeGrids } from '../../../db/fatigue-grids.ts';

/**
 * Fatigue curves of power from the rides' stored fatigue grids (engine/curves/after-grid.ts): when
 * every threshold is a grid point and every duration a grid duration, a request reads a few hundred
 * numbers per ride from the user's grid column instead of its samples; when some threshold lies
 * between grid points, the entries bound each ride's answer and only the rides that could hold the
 * best (or a tie) are read from their samples. Rides the column lacks (or holds for another stamp)
 * get their entries first, computed in the pool from the power column, and appended: the ingest job
 * appends a new ride's entry after its commit, so that is the first request of rides stored before
 * the grid existed, or of a lost column.
 */

/**
 * How the grid serves these thresholds (J) and durations: `merge` when every threshold is a grid point
 * (the answer is the entries' merge), `bound` when some is between points (the entries rule out the
 * rides that cannot hold the answer; the others are read), null when a duration is off the grid.
 */
export type GridPlan =
  | { kind: 'merge'; points: Int32Array; columns: Int32Array }
  | { kind: 'bound'; lo: Int32Array; hi: Int32Array; columns: Int32Array };

export function gridPlan(thresholds: Float64Array, durations: Int32Array): GridPlan | null {
  const columns = gridDurations(durations);
  if (!columns) return null;
  const points = Int32Array.from(thresholds, (t) => gridPoint(t));
  if (points.every((k) => k >= 0)) return { kind: 'merge', points, columns };
  const brackets = Array.from(thresholds, (t) => bracket(t));
  return { kind: 'bound', lo: Int32Array.from(brackets, (b) => b.lo), hi: Int32Array.from(brackets, (b) => b.hi), columns };
}

/** The curves (one per point, as longitudinalAfter by duration gives them) from the grid column. */
export async function gridCurves(
  deps: Deps,
  userId: string,
  activities: CurveActivityRow[],
  plan: Extract<GridPlan, { kind: 'merge' }>,
  signal: AbortSignal,
): Promise<AfterOutput> {
  return placeGrid(deps, userId, activities, signal, (place) =>
    deps.engine.pool.afterGrid({ place, points: plan.points.slice(), columns: plan.columns.slice() }, signal),
  );
}

/** The indices (ascending) of the activities whose samples can hold the answer between grid points. */
export async function ridesToRead(
  deps: Deps,
  userId: string,
  activities: CurveActivityRow[],
  plan: Extract<GridPlan, { kind: 'bound' }>,
  signal: AbortSignal,
): Promise<number[]> {
  const needed = await placeGrid(deps, userId, activities, signal, (place) =>
    deps.engine.pool.afterGridNeeded({ place, lo: plan.lo.slice(), hi: plan.hi.slice(), columns: plan.columns.slice() }, signal),
  );
  return activities.flatMap((_, a) => (needed[a] ? [a] : []));
}

/** `use` of the activities' grid entries, those the column lacks derived and appended first. */
function placeGrid<T>(
  deps: Deps,
  userId: string,
  activities: CurveActivityRow[],
  signal: AbortSignal,
  use: (place: ColumnPlace) => Promise<T>,
): Promise<T> {
  const derive = (batch: ColumnActivity[], s?: AbortSignal) => buildEntries(deps, userId, batch, s);
  return retryIfMoved(async () =>
    use(await deps.engine.columns.place(userId, AFTER_GRID_CHANNEL, columnActivities(deps, userId, activities), signal, derive)),
  );
}

/**
 * The rides' grid entries: those PostgreSQL holds for their stamp (computed at ingestion, or by any
 * host's request before), the others from their power (the power column, filled from the sample
 * files where it lacks them) and then stored there for every host.
 */
async function buildEntries(deps: Deps, userId: string, batch: ColumnActivity[], signal?: AbortSignal): Promise<Float64Array[]> {
  const stored = await storedGrids(deps.db, AFTER_GRID_CHANNEL, batch);
  const missing = batch.filter((a) => !stored.has(a.id));
  if (missing.length) {
    const { outputs } = await runInChunks(deps, userId, 'power', missing, signal, (place) =>
      deps.engine.pool.afterGridBuild({ place }, signal),
    );
    const entries = outputs.flatMap(({ values, length }) => {
      let at = 0;
      return Array.from(length, (n) => values.subarray(at, (at += n)));
    });
    missing.forEach((a, i) => stored.set(a.id, entries[i]!));
    await storeGrids(
      deps.db,
      AFTER_GRID_CHANNEL,
      missing.map((a, i) => ({ id: a.id, stamp: a.stamp, entry: entries[i]! })),
    ).catch((err: unknown) => deps.log.warn('could not store fatigue grids for other hosts', { user_id: userId, err }));
  }
  return batch.map((a) => stored.get(a.id)!);
}
