/**
 * The operator CLI (`npm run cli -- <command>`): parses the command line, opens the database, runs one
 * command from bin/cli/ (accounts and keys, backfill, curves, reprocess, storage) and exits 2 on a usage error.
 */
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Config } from '../lib/config.ts';
import { createLogger } from '../lib/log.ts';
import { createDb } from '../db/database.ts';
import { ensureDatabase, migrateToLatest } from '../db/migrate.ts';
import path from 'node:path';
import { UsageError } from './cli/common.ts';
import { keysList, keysRotate, tokenCreate, userCreate, userList } from './cli/accounts.ts';
import { backfill } from './cli/backfill.ts';
import { curves } from './cli/curves.ts';
import { reprocess } from './cli/reprocess.ts';
import { storageMigrate } from './cli/storage.ts';

const USAGE = `Operator commands: npm run cli -- <command> [options]

  user create --email EMAIL --first-name NAME --last-name NAME [--password PASSWORD]
      Create an account. Without --password a strong random one is generated and printed once.
  user list
      List accounts, newest first.
  token create --user EMAIL [--scopes "data:read data:write profile"] [--label NAME]
      Create a personal token for the user: an access token (15 minutes, RS256 JWT without aud) and
      a refresh token, printed once; revocable in Settings.
  backfill --user EMAIL PATH [--wait]
      Import a user's history: PATH is a directory (searched recursively) or a zip archive of .fit,
      .csv, .gpx and .tcx files (optionally .gz). The files are read and stored now, then loaded newest first by
      the workers (npm start or npm run worker); files already stored are not loaded twice. With
      --wait, show progress until the backfill completes (files loaded/failed/total, rate, ETA: a bar
      on a terminal, a line every 2 s otherwise, NDJSON with --json), then each failed file with its
      error code. Exit status with --wait: 0 every file loaded, 3 some files failed, 1 the backfill
      failed, 130 interrupted (Ctrl-C stops watching; the workers go on loading).
  curves [--user EMAIL] [--all] [--wait]
      Recompute the stored activity curves (mean-max, value-indexed, accumulated work duration)
      from the sample files: those missing or computed by an older version, or with --all every
      one; of one user or of everyone. Runs as a job on the workers; --wait prints its outcome.
  reprocess [--user EMAIL] [--all]
      Re-derive stored activities from their original files under the current ingest rules: each
      one's sample file, summary, laps and other derived fields, and curves. By default the
      activities made by older rules (ingest_version below the current), of every user; --user
      limits it to one user, --all takes activities already current too. One job per source file on
      the workers (npm start or npm run worker); the command waits for them, showing progress (a bar
      on a terminal, a line every 2 s otherwise, NDJSON with --json), then prints how many activities
      were reprocessed (changed), unchanged, failed (original no longer parses) or left with their
      original missing. Activities are only updated: ids, tags and deleted activities stay as they
      are. Exit status: 0 all done, 3 some failed or lack their original, 130 interrupted (Ctrl-C
      stops watching; the workers go on).
  storage migrate --to s3|local
      Copy every object of the data directory (originals, sample files, history archives) into the
      S3 store the S3_* settings name (--to s3), or the store's objects into DATA_DIR (--to local).
      Each copy is verified by its entity tag (MD5, or MD5 of 16 MiB parts over 64 MiB); objects the
      target already holds with the same tag are skipped, so an interrupted run is resumed by
      running it again, and a second run copies nothing. Progress as a bar on a terminal (a line
      every 2 s otherwise). The source is left as it was; then set STORAGE for the service. Exit
      status: 0 all copied and verified, 3 some objects failed (listed).
  keys list
      List the token signing keys (active and recently retired).
  keys rotate
      Make a new signing key; tokens signed by the old one stay valid until they expire.

Every command accepts --json for machine-readable output.
Configuration comes from the same environment variables as the service (DATABASE_URL, BASE_URL, …).`;

/** The settings the CLI must share with the server, and which of them are defaults: a CLI run against another database would otherwise seem to work. */
const SHARED_WITH_SERVER = ['DATABASE_URL', 'DATA_DIR', 'QUEUE_PREFIX'] as const;

/** One line (stderr) on where this run reads and writes, naming the settings left at their defaults. */
function whereTo(config: Config, env: NodeJS.ProcessEnv): string {
  const url = new URL(config.DATABASE_URL);
  url.password = url.password ? '***' : '';
  const defaults = SHARED_WITH_SERVER.filter((name) => !env[name]);
  const where = `cli: database ${url.toString()}, data ${path.resolve(config.DATA_DIR)}, queue prefix ${config.QUEUE_PREFIX}`;
  return defaults.length
    ? `${where} (${defaults.join(', ')} not set: defaults; give the CLI the server's values, or it works on another store)`
    : where;
}

async function main(argv: string[]) {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      email: { type: 'string' },
      'first-name': { type: 'string' },
      'last-name': { type: 'string' },
      password: { type: 'string' },
      user: { type: 'string' },
      scopes: { type: 'string' },
      label: { type: 'string' },
      to: { type: 'string' },
      wait: { type: 'boolean', default: false },
      all: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  // `backfill PATH` takes its path as a positional; the other commands are one or two words.
  const command = positionals[0] === 'backfill' ? 'backfill' : positionals.join(' ');
  if (values.help || !command || command === 'help') {
    process.stdout.write(USAGE + '\n');
    return;
  }
  const config = loadConfig();
  process.stderr.write(`${whereTo(config, process.env)}\n`);
  await ensureDatabase(config.DATABASE_URL);
  const db = createDb(config.DATABASE_URL, 2);
  try {
    await migrateToLatest(db);
    const json = values.json === true;
    switch (command) {
      case 'user create':
        return await userCreate(db, values, json);
      case 'user list':
        return await userList(db, json);
      case 'token create':
        return await tokenCreate(db, config, values, json);
      case 'backfill':
        return await backfill(db, config, values, positionals[1], json);
      case 'curves':
        return await curves(db, config, values, json);
      case 'reprocess':
        return await reprocess(db, config, values, json);
      case 'storage migrate':
        return await storageMigrate(config, values, json);
      case 'keys list':
        return await keysList(db, config, json);
      case 'keys rotate':
        return await keysRotate(db, config, json);
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } finally {
    await db.destroy();
  }
}

main(process.argv.slice(2)).catch((err) => {
  if (err instanceof UsageError || err instanceof ConfigError || (err as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    process.stderr.write(`error: ${err.message}\n\n${err instanceof UsageError ? 'Run `npm run cli -- help` for usage.' : ''}\n`);
    process.exit(2);
  }
  createLogger('error').error('cli failed', { err });
  process.exit(1);
});
