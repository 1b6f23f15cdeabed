import { ingestFile } from './ingest/ingest.ts';
import type { IngestResult, IngestTask } from './ingest/ingested.ts';
import { meanMaxPlain } from './curves/mean-max-plain.ts';
import { meanMax } from './curves/mean-max.ts';
import { computeCurves, type MetricCurves } from './curves/activity-curves.ts';
import type { AwdPercentiles } from './curves/awd.ts';
import type { Channel } from './channels.ts';
import { longitudinalAfter, type AfterInput, type AfterOutput, type LevelCurve } from './curves/longitudinal.ts';
import { dailyAwdPercentiles, mergeStoredLevels } from './curves/stored-curves.ts';
import type { EncodedArrays } from './curves/curve-codec.ts';
import { readColumnSlices, type ColumnPlace } from './samples/column-read.ts';
import { afterGridEntry, mergeAfterGrid, ridesThatCanMatter } from './curves/after-grid.ts';
import { checkStop } from './stop.ts';
import { activityLoad, rideTau, type ActivityLoad, type ActivityLoadInput } from './load/activity-load.ts';
import { wPrimeBalance } from './load/w-prime-balance.ts';
import { analyseTest, type TestAnalysisInput, type TestAnalysisOutput } from './tests/analysis.ts';

/**
 * The engine's tasks as they run inside the piscina pool: plain functions of transferable typed
 * arrays, each named by its `task` field. Each task allocates its outputs and returns them.
 */
export interface MeanMaxTask {
  task: 'mean-max-plain' | 'mean-max';
  /** The work series (gaps already 0). */
  samples: Float64Array;
  /** Ascending, distinct, ≥ 1 (the exact kernel requires it; the plain one takes any). */
  durations: Int32Array;
}
export interface MeanMaxResult {
  best: Float64Array;
  start: Int32Array;
}
/** An activity's stored curves from its channels (the recompute job; ingestion computes them inside the ingest task). */
export interface CurvesTask {
  task: 'curves';
  channels: Partial<Record<Channel, Float64Array>>;
}
/** The longitudinal value-indexed curve from stored level curves (as stored: engine/curves/curve-codec.ts), oldest activity first. */
export interface MergeLevelsTask {
  task: 'merge-levels';
  duration: EncodedArrays;
  start: EncodedArrays;
}
/** Longitudinal AWD: stored per-activity AWD summed per day, then per-level maximum and quantiles over the days. */
export interface DailyAwdTask {
  task: 'daily-awd';
  /** As stored (engine/curves/curve-codec.ts). */
  awd: EncodedArrays;
  /** The training day (any number per distinct day) of each activity. */
  day: Int32Array;
  quantiles: Float64Array;
}
/** Longitudinal curves after accumulated work, for one chunk of activities, its samples read by the thread from the user's channel column (engine/samples/column-read.ts). */
export interface AfterColumnTask extends Omit<AfterInput, 'samples'> {
  task: 'after-column';
  place: ColumnPlace;
}
/** Fatigue-grid entries (engine/curves/after-grid.ts) of some rides, their power read from the user's power column. */
export interface AfterGridBuildTask {
  task: 'after-grid-build';
  place: ColumnPlace;
}
/** Entries back to back, ride by ride. */
export interface AfterGridEntries {
  values: Float64Array;
  length: Int32Array;
}
/** Fatigue curves at grid points (`points`) and grid durations (`columns`: indices) from the rides' grid entries, read from their column. */
export interface AfterGridTask {
  task: 'after-grid';
  place: ColumnPlace;
  points: Int32Array;
  columns: Int32Array;
}
/** Which rides the grid cannot rule out for thresholds between grid points (`lo`, `hi` per threshold): 1 to read, 0 not. */
export interface AfterGridNeededTask {
  task: 'after-grid-needed';
  place: ColumnPlace;
  lo: Int32Array;
  hi: Int32Array;
  columns: Int32Array;
}
/** A lab test's analysis (engine/tests/analysis.ts): lactate thresholds, efforts, critical-power models. */
export interface TestAnalysisTask extends TestAnalysisInput {
  task: 'test-analysis';
}

/** What an activity's thresholds make of it (engine/load/activity-load.ts). */
export interface ActivityLoadTask extends ActivityLoadInput {
  task: 'activity-load';
}

/** W′ balance at every second of a ride (engine/load/w-prime-balance.ts, τ as GoldenCheetah sets it). */
export interface WPrimeBalanceTask {
  task: 'w-prime-balance';
  power: Float64Array;
  cp: number;
  wPrime: number;
}

export type { IngestResult, IngestTask };

export type EngineTask =
  | MeanMaxTask
  | IngestTask
  | CurvesTask
  | MergeLevelsTask
  | AfterColumnTask
  | AfterGridBuildTask
  | AfterGridTask
  | AfterGridNeededTask
  | DailyAwdTask
  | TestAnalysisTask
  | ActivityLoadTask
  | WPrimeBalanceTask;

/** What each task returns. */
export interface TaskResults {
  'mean-max-plain': MeanMaxResult;
  'mean-max': MeanMaxResult;
  ingest: IngestResult;
  curves: MetricCurves[];
  'merge-levels': LevelCurve;
  'after-column': AfterOutput;
  'after-grid-build': AfterGridEntries;
  'after-grid': AfterOutput;
  'after-grid-needed': Uint8Array;
  'daily-awd': AwdPercentiles;
  'test-analysis': TestAnalysisOutput;
  'activity-load': ActivityLoad;
  'w-prime-balance': Float64Array;
}

export function runTask(task: EngineTask): TaskResults[EngineTask['task']] | Promise<IngestResult> {
  switch (task.task) {
    case 'mean-max-plain':
    case 'mean-max': {
      const best = new Float64Array(task.durations.length);
      const start = new Int32Array(task.durations.length);
      (task.task === 'mean-max' ? meanMax : meanMaxPlain)(task.samples, task.durations, best, start);
      return { best, start };
    }
    case 'ingest':
      return ingestFile(task);
    case 'curves':
      return computeCurves(task.channels);
    case 'merge-levels':
      return mergeStoredLevels(task.duration, task.start);
    case 'after-column':
      return longitudinalAfter({ ...task, samples: readColumnSlices(task.place) });
    case 'after-grid-build': {
      const power = readColumnSlices(task.place);
      const entries = Array.from(power.from, (from, a) => {
        checkStop();
        return afterGridEntry(power.values.subarray(from, from + power.length[a]!));
      });
      const values = new Float64Array(entries.reduce((n, e) => n + e.length, 0));
      let at = 0;
      for (const e of entries) values.set(e, (at += e.length) - e.length);
      return { values, length: Int32Array.from(entries, (e) => e.length) };
    }
    case 'after-grid':
      return { kind: 'duration', curves: mergeAfterGrid(readColumnSlices(task.place), task.points, task.columns) };
    case 'after-grid-needed':
      return ridesThatCanMatter(readColumnSlices(task.place), task.lo, task.hi, task.columns);
    case 'test-analysis':
      return analyseTest(task);
    case 'activity-load':
      return activityLoad(task);
    case 'w-prime-balance':
      return wPrimeBalance(task.power, task.cp, task.wPrime, rideTau(task.power, task.cp));
    case 'daily-awd':
      return dailyAwdPercentiles(task.awd, task.day, task.quantiles);
  }
}
