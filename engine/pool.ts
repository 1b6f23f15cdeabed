import os from 'node:os';
import { Piscina } from 'piscina';
import type {
  AfterColumnTask,
  AfterGridBuildTask,
  AfterGridNeededTask,
  AfterGridTask,
  DailyAwdTask,
  EngineTask,
  IngestTask,
  MeanMaxTask,
  TestAnalysisTask,
  ActivityLoadTask,
  WPrimeBalanceTask,
  MergeLevelsTask,
  TaskResults,
} from './tasks.ts';
import type { Channel } from './channels.ts';
import { newStopWord, requestStop } from './stop.ts';

/** How long a task asked to stop may run on before piscina stops it (./stop.ts: kernels check every few ms). */
export const STOP_GRACE_MS = 1_000;

/**
 * The engine's thread pool: CPU work never runs on the event loop. Under tsx the worker threads
 * inherit `--import tsx`, so they load `worker.ts`; a compiled build loads `worker.js`.
 *
 * Inputs are transferred to the thread, not copied: after `run`, the task's typed arrays are
 * detached (empty) in the caller; views of a SharedArrayBuffer are shared as they are. A view onto part of a larger buffer (a pooled Node Buffer, a
 * subarray), or a second view of a buffer already transferred, is copied first, so that the rest
 * of that buffer stays usable.
 */
export function createEnginePool(opts: { threads?: number } = {}) {
  const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  const threads = opts.threads && opts.threads > 0 ? opts.threads : Math.max(1, os.availableParallelism());
  let closing = false;
  const pool = new Piscina({
    filename: new URL(`./worker${ext}`, import.meta.url).href,
    // Every thread from the start and kept: a thread started on demand (or again after idling)
    // loads its modules and compiles the kernels cold, ~0.4 s added to the request that needs it.
    minThreads: threads,
    maxThreads: threads,
    // Between tasks a thread waits on its message port, not in Atomics.wait (piscina's default,
    // which stops the thread's event loop): its pending I/O goes on meanwhile. Under tsx that I/O
    // is the transform cache's writes; stopped, they left empty files, so every thread started
    // since (each service start) compiled the engine's modules again with esbuild (~1 s of CPU).
    atomics: 'disabled',
  });
  // A thread that fails outside a task (one still starting when a signal stops the process: the
  // module loader of tsx is gone by then) is reported, not thrown: a task it held fails on its own.
  pool.on('error', (error: unknown) => {
    if (!closing) process.emitWarning(`engine thread failed: ${(error as Error)?.message ?? error}`);
  });

  /**
   * Run a task; when `signal` aborts, the task is stopped and the promise rejects with the signal's
   * reason once it has. Stopped cooperatively (./stop.ts): the task's stop word is set, a queued
   * task ends as soon as a thread takes it, a running one at its kernel's next check, and the thread
   * stays. Only a task still running STOP_GRACE_MS later (a stage that does not check) is stopped by
   * piscina: dropped from its queue, or its thread terminated and replaced. A task that never checks
   * (ingest: the parsers) passes `graceMs` 0 and is stopped so at once.
   */
  function run<T extends EngineTask>(task: T, signal?: AbortSignal, graceMs = STOP_GRACE_MS): Promise<TaskResults[T['task']]> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const buffers: ArrayBuffer[] = [];
    const owned = transferable(task, buffers) as T;
    if (!signal || graceMs === 0) return pool.run(owned, { transferList: buffers, ...(signal ? { signal } : {}) });
    const stop = newStopWord();
    const hard = new AbortController();
    const done: Promise<TaskResults[T['task']]> = pool.run({ ...owned, stop }, { transferList: buffers, signal: hard.signal });
    let grace: NodeJS.Timeout | undefined;
    const onAbort = () => {
      requestStop(stop);
      grace = setTimeout(() => hard.abort(signal.reason), graceMs);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    return done.then(
      (result) => {
        signal.removeEventListener('abort', onAbort);
        clearTimeout(grace);
        return result;
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        clearTimeout(grace);
        throw signal.aborted ? signal.reason : error;
      },
    );
  }

  // Each task through a function of its own, typed by its input (./tasks.ts): a caller names what it
  // runs as a function a reader (or a tool) can follow, never as a string.
  return {
    /** The ingest task (engine/ingest/ingest.ts): one file's bytes → its activities, or a refusal. */
    runIngest: (task: Input<IngestTask>, signal?: AbortSignal) => run({ ...task, task: 'ingest' }, signal, 0),
    /** An activity's stored curves from its channels (engine/curves/activity-curves.ts). */
    runCurves: (channels: Partial<Record<Channel, Float64Array>>, signal?: AbortSignal) => run({ task: 'curves', channels }, signal),
    /** Exact mean-max of one series at ascending durations (engine/curves/mean-max.ts). */
    meanMax: (input: Input<MeanMaxTask>, signal?: AbortSignal) => run({ ...input, task: 'mean-max' }, signal),
    /** The same by the plain scan (engine/curves/mean-max-plain.ts): the reference, for tests; it does not check for a stop. */
    meanMaxPlain: (input: Input<MeanMaxTask>, signal?: AbortSignal) => run({ ...input, task: 'mean-max-plain' }, signal),
    /** The longitudinal value-indexed curve from stored level curves (engine/curves/stored-curves.ts). */
    mergeLevels: (input: Input<MergeLevelsTask>, signal?: AbortSignal) => run({ ...input, task: 'merge-levels' }, signal),
    /** Longitudinal AWD: per-day sums, then the per-level maximum and quantiles (engine/curves/stored-curves.ts). */
    dailyAwd: (input: Input<DailyAwdTask>, signal?: AbortSignal) => run({ ...input, task: 'daily-awd' }, signal),
    /** Curves after accumulated work of one chunk of activities (engine/curves/longitudinal.ts), their samples read by the thread from the user's channel column. */
    afterColumn: (input: Input<AfterColumnTask>, signal?: AbortSignal) => run({ ...input, task: 'after-column' }, signal),
    /** Fatigue-grid entries of some rides, from their power column (engine/curves/after-grid.ts). */
    afterGridBuild: (input: Input<AfterGridBuildTask>, signal?: AbortSignal) => run({ ...input, task: 'after-grid-build' }, signal),
    /** Fatigue curves at grid points and durations, merged from the rides' grid entries. */
    afterGrid: (input: Input<AfterGridTask>, signal?: AbortSignal) => run({ ...input, task: 'after-grid' }, signal),
    /** Which rides the grid cannot rule out between grid points: 1 to read from their samples. */
    afterGridNeeded: (input: Input<AfterGridNeededTask>, signal?: AbortSignal) => run({ ...input, task: 'after-grid-needed' }, signal),
    /** A lab test's analysis (engine/tests/analysis.ts). */
    testAnalysis: (input: Input<TestAnalysisTask>, signal?: AbortSignal) => run({ ...input, task: 'test-analysis' }, signal),
    /** An activity's training stress, time in zones and lowest W′ balance (engine/load/activity-load.ts). */
    activityLoad: (input: Input<ActivityLoadTask>, signal?: AbortSignal) => run({ ...input, task: 'activity-load' }, signal),
    /** W′ balance at every second of a ride (engine/load/w-prime-balance.ts). */
    wPrimeBalance: (input: Input<WPrimeBalanceTask>, signal?: AbortSignal) => run({ ...input, task: 'w-prime-balance' }, signal),
    close: () => {
      closing = true;
      return pool.destroy();
    },
    /** The most threads the pool runs at once. */
    maxThreads: threads,
    // Between tasks a thread waits on its message port, not in Atomics.wait (piscina's default,
    // which stops the thread's event loop): its pending I/O goes on meanwhile. Under tsx that I/O
    // is the transform cache's writes; stopped, they left empty files, so every thread started
    // since (each service start) compiled the engine's modules again with esbuild (~1 s of CPU).
    atomics: 'disabled',
    get threads() {
      return pool.threads.length;
    },
    /** The pool's threads by id: a thread replaced (terminated, then started anew) has a new id. */
    get threadIds() {
      return pool.threads.map((w) => w.threadId);
    },
  };
}
export type EnginePool = ReturnType<typeof createEnginePool>;

type TypedArray = Float64Array | Int32Array | Uint8Array;

/** A task's input: the task without its name. */
type Input<T extends EngineTask> = Omit<T, 'task'>;

/** The value with each typed array owning its whole buffer (copied when not), those buffers collected for transfer. */
function transferable(value: unknown, buffers: ArrayBuffer[]): unknown {
  // A view of shared memory is shared with the thread as it is: no copy, no transfer.
  if (ArrayBuffer.isView(value) && value.buffer instanceof SharedArrayBuffer) return value;
  if (ArrayBuffer.isView(value)) {
    const a = value as TypedArray;
    const whole =
      a.buffer instanceof ArrayBuffer && a.byteOffset === 0 && a.byteLength === a.buffer.byteLength && !buffers.includes(a.buffer);
    const mine = whole
      ? a
      : a instanceof Float64Array
        ? new Float64Array(a)
        : a instanceof Int32Array
          ? new Int32Array(a)
          : new Uint8Array(a);
    buffers.push(mine.buffer as ArrayBuffer);
    return mine;
  }
  if (Array.isArray(value)) return value.map((v) => transferable(v, buffers));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, transferable(v, buffers)]));
  }
  return value;
}
