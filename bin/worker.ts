import { run, migrate } from './boot.ts';
import { startWorkers } from '../workers/runner.ts';
import { printLine } from '../lib/log.ts';

run('worker', async ({ config, log, lifecycle }) => {
  await migrate(config, log);
  await startWorkers(config, log, lifecycle);
  printLine('Training data service workers running');
});
