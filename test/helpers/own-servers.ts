import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './service.ts';

/**
 * A PostgreSQL cluster and a Redis server of a test's own, on free ports, that the test may kill
 * and restart: the machine's own servers are never touched. Pass their URLs to the service through
 * DATABASE_URL and REDIS_URL (test/helpers/infra.ts uses them when both are set).
 */

export interface OwnRedis {
  url: string;
  /** SIGKILL: the data set is gone (no persistence), like a Redis restarted empty. */
  kill(): Promise<void>;
  start(): Promise<void>;
}

export async function startOwnRedis(): Promise<OwnRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    await waitFor(
      () =>
        spawnSync('redis-cli', ['-p', String(port), 'ping'])
          .stdout?.toString()
          .trim() === 'PONG',
      'redis-server to start',
    );
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    start,
    kill: () =>
      new Promise<void>((resolve) => {
        if (!child || child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
}

export interface OwnPostgres {
  /** The server's URL (database `postgres`). */
  url: string;
  /** `pg_ctl stop -m immediate`: every connection is cut, like a crash. */
  kill(): void;
  start(): void;
  remove(): void;
}

const PG_BIN = (() => {
  const root = '/usr/lib/postgresql';
  const version = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a))[0] : undefined;
  return version ? path.join(root, version, 'bin') : undefined;
})();

export const canRunOwnPostgres = !!PG_BIN && existsSync(path.join(PG_BIN, 'initdb'));

/** initdb refuses to run as root: then the cluster runs as the `postgres` system user. */
function asPostgres(cmd: string, args: string[]) {
  const isRoot = process.getuid?.() === 0;
  const result = isRoot
    ? spawnSync('runuser', ['-u', 'postgres', '--', cmd, ...args], { encoding: 'utf8' })
    : spawnSync(cmd, args, { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${result.stderr || result.stdout}`);
}

export async function startOwnPostgres(): Promise<OwnPostgres> {
  if (!PG_BIN) throw new Error('no PostgreSQL binaries under /usr/lib/postgresql');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tds-pg-'));
  if (process.getuid?.() === 0) chownSync(dir, Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim()), 0);
  const data = path.join(dir, 'data');
  asPostgres(path.join(PG_BIN, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const log = path.join(dir, 'log');
  let port = 0;
  let options = '';
  const start = () => asPostgres(path.join(PG_BIN!, 'pg_ctl'), ['-D', data, '-o', options, '-l', log, '-w', 'start']);
  // A free port can be taken between freePort() and the cluster's bind (initdb runs in between, and
  // other test files start servers too): on "Address already in use", another port.
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=100`;
    try {
      start();
      break;
    } catch (err) {
      const taken = existsSync(log) && readFileSync(log, 'utf8').includes('Address already in use');
      if (!taken || attempt === 5) throw err;
    }
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start,
    kill: () => asPostgres(path.join(PG_BIN!, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop']),
    remove() {
      try {
        asPostgres(path.join(PG_BIN!, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function waitFor(ok: () => boolean, what: string, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * A Redis server and a PostgreSQL cluster of the test file's own, made the ones the service uses
 * (DATABASE_URL and REDIS_URL of this process): for tests that kill and restart them.
 */
export async function startOwnInfrastructure(): Promise<{ redis: OwnRedis; postgres: OwnPostgres }> {
  if (!canRunOwnPostgres) throw new Error('these tests need initdb/pg_ctl under /usr/lib/postgresql');
  const redis = await startOwnRedis();
  const postgres = await startOwnPostgres();
  process.env.DATABASE_URL = postgres.url;
  process.env.REDIS_URL = redis.url;
  return { redis, postgres };
}
