import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { loadConfig, type Config } from '../../lib/config.ts';
import { createLogger, type Logger, type LogLevel } from '../../lib/log.ts';
import { Lifecycle } from '../../lib/lifecycle.ts';
import { createApiDeps, startApi } from '../../api/server.ts';
import type { Deps } from '../../api/services/deps.ts';
import { startWorkers } from '../../workers/runner.ts';
import { infrastructure } from './infra.ts';
import { createTestDatabase } from './database.ts';

/** A clock the test can move: every component of the service reads time through it. */
export class TestClock {
  #offsetMs = 0;
  now = (): Date => new Date(Date.now() + this.#offsetMs);
  advance(ms: number): void {
    this.#offsetMs += ms;
  }
}

export interface TestService {
  url: string;
  config: Config;
  deps: Deps;
  clock: TestClock;
  close(): Promise<void>;
}

/** The environment a test file runs the service with: its own database and BullMQ prefix. */
export async function testEnvironment(overrides: Record<string, string> = {}) {
  const infra = await infrastructure();
  const database = await createTestDatabase(infra.postgresUrl);
  const prefix = `test_${randomBytes(5).toString('hex')}`;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tds-test-'));
  const env: Record<string, string> = {
    DATABASE_URL: database.url,
    REDIS_URL: infra.redisUrl,
    QUEUE_PREFIX: prefix,
    DATA_DIR: dataDir,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    DATABASE_POOL_SIZE: '5',
    SHUTDOWN_TIMEOUT_MS: '2000',
    ENGINE_THREADS: '2',
    ...overrides,
  };
  return {
    env,
    async cleanup() {
      await database.drop();
      await deleteKeys(infra.redisUrl, prefix);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Start the API (and, with `workers: true`, the workers) in this process on a free port; `log`
 * replaces the logger made from LOG_LEVEL (a test that reads what the service logged). The test's
 * own work (its fixtures, its HTTP client) runs on the service's event loop here, so the loop counts
 * as blocked only past a minute unless the test sets EVENT_LOOP_BLOCKED_MS (test/event-loop.test.ts).
 */
export async function startTestService(opts: { workers?: boolean; env?: Record<string, string>; log?: Logger } = {}): Promise<TestService> {
  const port = await freePort();
  const environment = await testEnvironment({
    PORT: String(port),
    HOST: '127.0.0.1',
    BASE_URL: `http://127.0.0.1:${port}`,
    EVENT_LOOP_BLOCKED_MS: '60000',
    ...opts.env,
  });
  const config = loadConfig(environment.env);
  const log = opts.log ?? createLogger(config.LOG_LEVEL as LogLevel);
  const lifecycle = new Lifecycle(log);
  const clock = new TestClock();
  const deps = await createApiDeps(config, log, lifecycle, clock.now);
  if (opts.workers) await startWorkers(config, log, lifecycle, { db: deps.db, box: deps.box, engine: deps.engine, now: clock.now });
  const { url } = await startApi(deps, lifecycle);
  return {
    url,
    config,
    deps,
    clock,
    async close() {
      await lifecycle.close();
      await environment.cleanup();
    },
  };
}

/**
 * A port free now for a server a test starts: taken at random below the kernel's ephemeral range
 * (32768–60999 here), because a port the kernel hands out for `listen(0)` is also one it may hand any
 * outgoing connection (a PostgreSQL or Redis client, a fetch) as its local port in the seconds before
 * the server binds it ("port already in use" seen in CI). Checked free by binding it; tried again when not.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await new Promise<boolean>((resolve) => {
      const server = net.createServer();
      server.unref();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error('no free port found below the ephemeral range');
}

async function deleteKeys(redisUrl: string, prefix: string) {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
