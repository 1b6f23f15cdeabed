import { run, migrate } from './boot.ts';

run('migrate', async ({ config, log }) => {
  await migrate(config, log);
  process.exit(0);
});
