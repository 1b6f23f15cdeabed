import os from 'node:os';
import { Piscina } from 'piscina';
import type { EngineTask, MeanMaxResult } from './tasks.ts';

/**
 * The engine's thread pool: CPU work never runs on the event loop. Under tsx the worker threads
 * inherit `--import tsx`, so they load `worker.ts`; a compiled build loads `worker.js`.
 */
export function createEnginePool(opts: { threads?: number; taskTimeoutMs?: number } = {}) {
  const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  const threads = opts.threads && opts.threads > 0 ? opts.threads : Math.max(1, os.availableParallelism());
  const pool = new Piscina({
    filename: new URL(`./worker${ext}`, import.meta.url).href,
    minThreads: 1,
    maxThreads: threads,
    idleTimeout: 30_000,
  });
  return {
    run(task: EngineTask, signal?: AbortSignal): Promise<MeanMaxResult> {
      const transferList = [task.samples.buffer, task.durations.buffer] as ArrayBuffer[];
      return pool.run(task, { transferList, ...(signal ? { signal } : {}) });
    },
    close: () => pool.destroy(),
    get threads() {
      return pool.threads.length;
    },
  };
}
export type EnginePool = ReturnType<typeof createEnginePool>;
