import os from 'node:os';
import { Piscina } from 'piscina';
import type { EngineTask, IngestResult, IngestTask, MeanMaxResult, MeanMaxTask } from './tasks.ts';

/**
 * The engine's thread pool: CPU work never runs on the event loop. Under tsx the worker threads
 * inherit `--import tsx`, so they load `worker.ts`; a compiled build loads `worker.js`.
 *
 * Inputs are transferred to the thread, not copied: after `run`, the task's typed arrays are
 * detached (empty) in the caller. A view onto part of a larger buffer (a pooled Node Buffer, a
 * subarray) is copied first, so that the rest of that buffer stays usable.
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

  function run(task: MeanMaxTask, signal?: AbortSignal): Promise<MeanMaxResult>;
  function run(task: IngestTask, signal?: AbortSignal): Promise<IngestResult>;
  function run(task: EngineTask, signal?: AbortSignal): Promise<MeanMaxResult | IngestResult> {
    const owned = transferable(task);
    return pool.run(owned.task, { transferList: owned.buffers, ...(signal ? { signal } : {}) });
  }

  return {
    run,
    /** The ingest task (engine/ingest.ts): one file's bytes → its activities, or a refusal. */
    runIngest: (task: Omit<IngestTask, 'task'>, signal?: AbortSignal) => run({ ...task, task: 'ingest' }, signal),
    close: () => pool.destroy(),
    get threads() {
      return pool.threads.length;
    },
  };
}
export type EnginePool = ReturnType<typeof createEnginePool>;

/** The task with each typed array owning its whole buffer, and those buffers to transfer. */
function transferable(task: EngineTask): { task: EngineTask; buffers: ArrayBuffer[] } {
  const buffers: ArrayBuffer[] = [];
  const own = <A extends Float64Array | Int32Array | Uint8Array>(a: A, copy: (a: A) => A): A => {
    const whole = a.buffer instanceof ArrayBuffer && a.byteOffset === 0 && a.byteLength === a.buffer.byteLength && !buffers.includes(a.buffer);
    const mine = whole ? a : copy(a);
    buffers.push(mine.buffer as ArrayBuffer);
    return mine;
  };
  switch (task.task) {
    case 'mean-max-plain':
      return { task: { ...task, samples: own(task.samples, (a) => a.slice()), durations: own(task.durations, (a) => a.slice()) }, buffers };
    case 'ingest':
      return { task: { ...task, bytes: own(task.bytes, (a) => new Uint8Array(a)) }, buffers };
  }
}
