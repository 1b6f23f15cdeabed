import { move, transferableSymbol, valueSymbol } from 'piscina';
import { runTask, type EngineTask } from './tasks.ts';
import { runStoppable } from './stop.ts';

/**
 * Piscina entry point: run one task (its inputs arrive transferred, not copied) and hand back its
 * result with the buffers of its typed arrays transferred too, not structured-cloned: a movable
 * (Piscina.move of a {transferable, value} pair) tells piscina which buffers to put in the
 * transfer list. A task given a stop word runs stoppable (./stop.ts).
 */
export default async function engineWorker(task: EngineTask & { stop?: Int32Array }) {
  const result = await runStoppable(task.stop, () => runTask(task));
  const buffers = new Set<ArrayBuffer>();
  collectBuffers(result, buffers);
  return move({ [transferableSymbol]: [...buffers], [valueSymbol]: result });
}

/** The distinct ArrayBuffers under the typed arrays anywhere in a result (plain objects and arrays). */
function collectBuffers(value: unknown, into: Set<ArrayBuffer>): void {
  if (ArrayBuffer.isView(value)) {
    if (value.buffer instanceof ArrayBuffer) into.add(value.buffer);
  } else if (value !== null && typeof value === 'object') {
    for (const item of Object.values(value)) collectBuffers(item, into);
  }
}
