import { existsSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/**
 * Where the tests' PostgreSQL and Redis are, in this order:
 *   1. DATABASE_URL and REDIS_URL when both are set (test databases are created on that server);
 *   2. containers started by testcontainers when a container runtime answers;
 *   3. the local servers on 127.0.0.1:5432 (user postgres) and 127.0.0.1:6379.
 * Fails with a message saying what was tried when none is reachable.
 */
export interface Infrastructure {
  /** A URL of the PostgreSQL server; its database part is replaced per test file. */
  postgresUrl: string;
  redisUrl: string;
  source: 'environment' | 'testcontainers' | 'local';
}

let cached: Promise<Infrastructure> | undefined;
export function infrastructure(): Promise<Infrastructure> {
  cached ??= resolve();
  return cached;
}

async function resolve(): Promise<Infrastructure> {
  const { DATABASE_URL, REDIS_URL } = process.env;
  if (DATABASE_URL && REDIS_URL) return { postgresUrl: DATABASE_URL, redisUrl: REDIS_URL, source: 'environment' };

  const containers = await fromContainers();
  if (containers) return containers;

  const pgUp = await reachable('127.0.0.1', 5432);
  const redisUp = await reachable('127.0.0.1', 6379);
  if (pgUp && redisUp) {
    return { postgresUrl: 'postgres://postgres@127.0.0.1:5432/postgres', redisUrl: 'redis://127.0.0.1:6379', source: 'local' };
  }
  throw new Error(
    'No PostgreSQL/Redis for the tests. Tried: DATABASE_URL+REDIS_URL (not set), a container runtime for testcontainers ' +
      `(none answered), local servers (PostgreSQL 127.0.0.1:5432 ${pgUp ? 'up' : 'DOWN'}, Redis 127.0.0.1:6379 ${redisUp ? 'up' : 'DOWN'}). ` +
      'Start them (see .ci/run) or set DATABASE_URL and REDIS_URL.',
  );
}

/**
 * Whether any of testcontainers' ways to a container runtime could apply: its settings file or
 * DOCKER_HOST, a Docker socket where it looks for one (/var/run, rootless: XDG_RUNTIME_DIR, ~/.docker,
 * /run/user/UID), or Windows' named pipe. Without one no runtime can answer, and the package (about
 * 0.4 s of CPU to load, in every test file's process) is not loaded.
 */
function containerRuntimeMayAnswer(): boolean {
  if (process.platform === 'win32' || process.env.DOCKER_HOST !== undefined) return true;
  const home = os.homedir();
  const places = [
    path.join(home, '.testcontainers.properties'),
    '/var/run/docker.sock',
    ...(process.env.XDG_RUNTIME_DIR !== undefined ? [path.join(process.env.XDG_RUNTIME_DIR, 'docker.sock')] : []),
    path.join(home, '.docker', 'run', 'docker.sock'),
    path.join(home, '.docker', 'desktop', 'docker.sock'),
    path.join('/run', 'user', String(os.userInfo().uid), 'docker.sock'),
  ];
  return places.some((file) => existsSync(file));
}

async function fromContainers(): Promise<Infrastructure | undefined> {
  if (!containerRuntimeMayAnswer()) return undefined;
  const tc = await import('testcontainers');
  try {
    await tc.getContainerRuntimeClient();
  } catch {
    return undefined; // no runtime: fails in milliseconds
  }
  // Reused across test files (and runs) so each file does not start its own servers.
  const pg = await new tc.GenericContainer('postgres:15-alpine')
    .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: 'trust' })
    .withExposedPorts(5432)
    .withWaitStrategy(tc.Wait.forLogMessage(/database system is ready to accept connections/, 2))
    .withReuse()
    .start();
  const redis = await new tc.GenericContainer('redis:7-alpine').withExposedPorts(6379).withReuse().start();
  return {
    postgresUrl: `postgres://postgres@${pg.getHost()}:${pg.getMappedPort(5432)}/postgres`,
    redisUrl: `redis://${redis.getHost()}:${redis.getMappedPort(6379)}`,
    source: 'testcontainers',
  };
}

function reachable(host: string, port: number, timeoutMs = 1_000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}
