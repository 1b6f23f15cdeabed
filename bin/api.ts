import { run, migrate } from './boot.ts';
import { createApiDeps, startApi } from '../api/server.ts';
import { printLine } from '../lib/log.ts';

run('api', async ({ config, log, lifecycle }) => {
  await migrate(config, log);
  const deps = await createApiDeps(config, log, lifecycle);
  const { url } = await startApi(deps, lifecycle);
  printLine(`Training data service API listening on ${url}`);
});
