import { run, migrate } from './boot.ts';
import { startWorkers } from '../workers/runner.ts';

run('worker', async ({ config, log, lifecycle }) => {
  await migrate(config, log);
  await startWorkers(config, log, lifecycle);
  process.stdout.write('Training data service workers running\n');
});
