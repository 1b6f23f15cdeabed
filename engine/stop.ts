/**
 * Stopping a task while it runs, without losing its thread. The pool (./pool.ts) gives each task a
 * control word in shared memory; when the request it serves is given up (its time limit, its client
 * gone), the pool sets the word, and the kernels, which call `checkStop` at coarse steps (per
 * activity or ride, per duration), throw TaskStopped at the next one. The thread then takes the next
 * task at once, warm: terminating it instead (piscina's own abort of a running task) left the pool
 * a thread short for the ~0.5 s a new one takes to load and compile, so the request after a 503
 * was queued behind that start.
 *
 * A thread runs one task at a time, so the word of the task under way is module state here. Outside
 * a pool task (the main thread, tests, benchmarks) there is no word and `checkStop` is one branch.
 *
 * The control word: Int32 [0] 1 once the task is to stop.
 */

let control: Int32Array | undefined;

/** Thrown inside a stopped task; the pool answers its caller with the abort's reason instead. */
export class TaskStopped extends Error {
  constructor() {
    super('The engine task was stopped');
    this.name = 'TaskStopped';
  }
}

/** Run `task` with `word` as the stop word its kernels check (and none again after it settles). */
export function runStoppable<T>(word: Int32Array | undefined, task: () => T | Promise<T>): T | Promise<T> {
  control = word;
  let result: T | Promise<T>;
  try {
    checkStop(); // (stopped while it waited in the queue: not started at all)
    result = task();
  } catch (error) {
    control = undefined;
    throw error;
  }
  if (result instanceof Promise) return result.finally(() => (control = undefined));
  control = undefined;
  return result;
}

/** Throw TaskStopped when the task under way was asked to stop. */
export function checkStop(): void {
  if (control !== undefined && Atomics.load(control, 0) !== 0) throw new TaskStopped();
}

/** A new control word (shared memory, so the pool can set it while the thread runs). */
export function newStopWord(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(4));
}

/** Ask the task holding `word` to stop. */
export function requestStop(word: Int32Array): void {
  Atomics.store(word, 0, 1);
}
