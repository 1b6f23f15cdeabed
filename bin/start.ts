import { run, migrate } from './boot.ts';
import { createApiDeps, startApi } from '../api/server.ts';
import { printLine } from '../lib/log.ts';
import { startWorkers } from '../workers/runner.ts';

/** Single-machine mode: migrations, the workers and the API in one process. */
run('start', async ({ config, log, lifecycle }) => {
  await migrate(config, log);
  const deps = await createApiDeps(config, log, lifecycle);
  await startWorkers(config, log, lifecycle, { db: deps.db, box: deps.box, engine: deps.engine });
  const { url } = await startApi(deps, lifecycle);
  printLine(`Training data service listening on ${url} (API and workers)`);
});
