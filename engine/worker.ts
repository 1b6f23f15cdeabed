import { runTask, type EngineTask } from './tasks.ts';

/** Piscina entry point: run one task (its inputs arrive transferred, not copied). */
export default function engineWorker(task: EngineTask) {
  return runTask(task);
}
