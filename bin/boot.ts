import { ConfigError, loadConfig, redactUrl, type Config } from '../lib/config.ts';
import { createLogger, type Logger } from '../lib/log.ts';
import { Lifecycle } from '../lib/lifecycle.ts';
import { createDb } from '../db/database.ts';
import { ensureDatabase, migrateToLatest } from '../db/migrate.ts';
import { countOlderIngestRules } from '../db/reprocess.ts';
import { INGEST_RULES_VERSION } from '../engine/ingest/rules.ts';
import { objectStoreProblem } from '../lib/object-store-setup.ts';

/** Shared start-up of every entry point: configuration, logger, signal handling. */
export function boot(name: string): { config: Config; log: Logger; lifecycle: Lifecycle } {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${name}: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  const log = createLogger(config.LOG_LEVEL, { process: name });
  // A step (the HTTP server, the workers) may itself wait SHUTDOWN_TIMEOUT_MS; a little more is a stuck step.
  const lifecycle = new Lifecycle(log, { stepTimeoutMs: config.SHUTDOWN_TIMEOUT_MS + 5_000 });
  lifecycle.handleSignals();
  process.on('unhandledRejection', (err) => log.error('unhandled rejection', { err }));
  return { config, log, lifecycle };
}

/** Create the database if needed and apply pending migrations. */
export async function migrate(config: Config, log: Logger): Promise<void> {
  if (await ensureDatabase(config.DATABASE_URL)) log.info('database created', { database: new URL(config.DATABASE_URL).pathname.slice(1) });
  const db = createDb(config.DATABASE_URL, 1);
  try {
    const applied = await migrateToLatest(db);
    log.info('migrations applied', { applied });
    // Never silently: activities made by older ingest rules keep their numbers until re-derived.
    const older = await countOlderIngestRules(db);
    if (older > 0) {
      log.warn(
        'activities made by older ingest rules: their details say so (ingest_version); re-derive them with `npm run cli -- reprocess`',
        {
          activities: older,
          current_ingest_version: INGEST_RULES_VERSION,
        },
      );
    }
  } finally {
    await db.destroy();
  }
}

/**
 * Run `main`; a start-up failure is logged with a clear message and exits 1. A configured object store
 * that cannot be used (lib/object-store-setup.ts) stops the start first with one line naming the setting.
 */
export function run(name: string, main: (b: ReturnType<typeof boot>) => Promise<void>): void {
  const b = boot(name);
  const start = async () => {
    const problem = await objectStoreProblem(b.config);
    if (problem) {
      process.stderr.write(`${name}: ${problem}\n`);
      process.exit(1);
    }
    await main(b);
  };
  start().catch(async (err) => {
    b.log.error(`${name} failed to start`, { err: describeStartError(err, b.config) });
    await b.lifecycle.close();
    process.exit(1);
  });
}

function describeStartError(err: unknown, config: Config): unknown {
  const code = (err as { code?: string })?.code;
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND') {
    return `cannot reach ${(err as { address?: string }).address ?? 'a server'}:${(err as { port?: number }).port ?? ''} (${code}). Is PostgreSQL running at DATABASE_URL=${redactUrl(config.DATABASE_URL)}?`;
  }
  if (code === 'EADDRINUSE') return `port ${config.PORT} is already in use (set PORT)`;
  return err;
}
