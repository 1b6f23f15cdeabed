import { ingestFile } from './ingest.ts';
import type { IngestResult, IngestTask } from './ingested.ts';
import { meanMaxPlain } from './mean-max-plain.ts';

/**
 * The engine's tasks as they run inside the piscina pool: plain functions of transferable typed
 * arrays. Each task allocates its outputs and returns them.
 */
export interface MeanMaxTask {
  task: 'mean-max-plain';
  samples: Float64Array;
  durations: Int32Array;
}
export interface MeanMaxResult {
  best: Float64Array;
  start: Int32Array;
}

export type { IngestResult, IngestTask };

export type EngineTask = MeanMaxTask | IngestTask;

export function runTask(task: MeanMaxTask): MeanMaxResult;
export function runTask(task: IngestTask): Promise<IngestResult>;
export function runTask(task: EngineTask): MeanMaxResult | Promise<IngestResult>;
export function runTask(task: EngineTask): MeanMaxResult | Promise<IngestResult> {
  switch (task.task) {
    case 'mean-max-plain': {
      const best = new Float64Array(task.durations.length);
      const start = new Int32Array(task.durations.length);
      meanMaxPlain(task.samples, task.durations, best, start);
      return { best, start };
    }
    case 'ingest':
      return ingestFile(task);
  }
}
