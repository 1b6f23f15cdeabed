import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { redactUrl, type Config } from '../lib/config.ts';
import type { Logger } from '../lib/log.ts';
import { POOL_CLOSE_TIMEOUT_MS, type Lifecycle } from '../lib/lifecycle.ts';
import { createDb } from '../db/database.ts';
import { createRedis, waitForRedis } from '../workers/connections.ts';
import { closeQueues, createQueues } from '../workers/queues.ts';
import { KeyStore } from './services/auth/keys.ts';
import { loadSecretBox } from '../lib/secret-box.ts';
import { sealWebhookSecrets } from '../db/applications.ts';
import type { Deps } from './services/deps.ts';
import { createApp } from './app.ts';
import { answerClientError } from './http/client-error.ts';
import { ensureDocsClient } from './rest/docs-client.ts';
import { createEnginePool } from '../engine/pool.ts';
import { createSampleStore } from '../engine/samples/sample-file.ts';
import { createFilesAndColumns } from '../workers/files.ts';
import { createFrameWriter } from '../engine/frames/parquet-writer.ts';
import { createLoopMonitor } from '../lib/event-loop.ts';
import { requestsInFlight } from './http/middleware/request-context.ts';

/** Build the API's dependencies; every connection it opens is registered for shutdown. */
export async function createApiDeps(config: Config, log: Logger, lifecycle: Lifecycle, now: () => Date = () => new Date()): Promise<Deps> {
  const db = createDb(config.DATABASE_URL, config.DATABASE_POOL_SIZE);
  lifecycle.add('postgres', () => db.destroy(), { timeoutMs: POOL_CLOSE_TIMEOUT_MS });
  const redis = createRedis(config.REDIS_URL, 'producer');
  lifecycle.add('redis', async () => void (await redis.quit().catch(() => redis.disconnect())));
  const queues = createQueues(redis, config.QUEUE_PREFIX);
  lifecycle.add('queues', () => closeQueues(queues));
  // Serve even while Redis is down (/readyz says so), but give it a moment to connect first.
  await waitForRedis(redis, 5_000).catch(() => log.warn('Redis is not reachable yet', { redis_url: redactUrl(config.REDIS_URL) }));
  const box = await loadSecretBox(config);
  const keys = new KeyStore(db, box, now);
  await keys.init();
  await sealWebhookSecrets(db, box);
  await ensureDocsClient(db, config);
  const pool = createEnginePool({ threads: config.ENGINE_THREADS });
  lifecycle.add('engine pool', () => pool.close());
  const samples = await createSampleStore();
  lifecycle.add('sample store', () => samples.close());
  const { files, columns } = createFilesAndColumns(config, samples, db, lifecycle);
  const engine = { pool, samples, frames: createFrameWriter(samples), columns, files };
  // Started by startApi once it listens; closed after the server (registered before it).
  const loop = createLoopMonitor({
    thresholdMs: config.EVENT_LOOP_BLOCKED_MS,
    windowMs: config.EVENT_LOOP_WINDOW_MS,
    log,
    inFlight: requestsInFlight,
  });
  lifecycle.add('event loop monitor', () => loop.close());
  return { config, db, redis, queues, box, keys, tokens: { issuer: config.BASE_URL, keys, now }, log, now, engine, loop };
}

/**
 * Listen and serve. On shutdown: stop accepting, let in-flight requests finish (idle keep-alive
 * connections are closed at once), and after SHUTDOWN_TIMEOUT_MS close whatever is left.
 */
export async function startApi(deps: Deps, lifecycle: Lifecycle): Promise<{ server: http.Server; url: string }> {
  const { config, log } = deps;
  const app = createApp(deps);
  const server = http.createServer(app.callback());
  trackUnflushed(server);
  server.keepAliveTimeout = 65_000;
  server.on('clientError', answerClientError);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.PORT, config.HOST, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  lifecycle.add('http', () => closeServer(server, config.SHUTDOWN_TIMEOUT_MS));
  // Measured from here: building the app (its OpenAPI document) keeps the loop busy for a few hundred
  // milliseconds at start-up, before any request could wait on it.
  deps.loop.start();
  const url = config.PORT === 0 ? `http://${config.HOST}:${port}` : config.BASE_URL;
  log.info('api listening', { url, host: config.HOST, port });
  return { server, url };
}

/**
 * Responses not yet handed to the operating system, per server (from trackUnflushed): Node counts a
 * connection idle once its response has ended, and closing it then (a destroy) could drop an answer
 * still being written.
 */
const UNFLUSHED = new WeakMap<http.Server, Set<http.ServerResponse>>();

export function trackUnflushed(server: http.Server): void {
  const unflushed = new Set<http.ServerResponse>();
  UNFLUSHED.set(server, unflushed);
  server.on('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
    unflushed.add(res);
    const done = () => unflushed.delete(res);
    res.once('finish', done);
    res.once('close', done);
  });
}

export function closeServer(server: http.Server, timeoutMs: number): Promise<void> {
  const unflushed = UNFLUSHED.get(server) ?? new Set();
  return new Promise((resolve) => {
    const force = setTimeout(() => server.closeAllConnections(), timeoutMs);
    force.unref();
    server.close(() => {
      clearTimeout(force);
      resolve();
    });
    server.closeIdleConnections();
    // Connections that become idle after their in-flight request finishes are closed too, once no
    // answer is still being written.
    const sweep = setInterval(() => {
      if (unflushed.size === 0) server.closeIdleConnections();
    }, 100);
    sweep.unref();
    server.once('close', () => clearInterval(sweep));
  });
}
