import { Redis, type RedisOptions } from 'ioredis';

/**
 * The one place Redis connections are made (the queues on them are made in ./queues.ts). BullMQ never
 * closes a connection it was given, so whoever calls these closes what they got (redis.quit()).
 *
 * - `producer`: API processes and queue handles. Fails fast when Redis is down, so a request gets
 *   a clear 503 instead of hanging.
 * - `worker`: blocking BullMQ worker connections; they must retry forever
 *   (`maxRetriesPerRequest: null`, as BullMQ requires).
 */
export function createRedis(url: string, role: 'producer' | 'worker'): Redis {
  const options: RedisOptions =
    role === 'worker'
      ? { maxRetriesPerRequest: null, enableReadyCheck: true }
      : { maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 5_000 };
  const redis = new Redis(url, { ...options, lazyConnect: true, retryStrategy: (n) => Math.min(n * 200, 2_000) });
  // Connection errors are reported by /readyz and by the commands that fail; do not crash on them.
  redis.on('error', () => {});
  redis.connect().catch(() => {});
  return redis;
}

/** Resolve once the connection is ready, or reject after `timeoutMs`. */
export function waitForRedis(redis: Redis, timeoutMs = 5_000): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`Redis not reachable within ${timeoutMs} ms`));
    }, timeoutMs);
    const onReady = () => {
      cleanup();
      resolve();
    };
    const cleanup = () => {
      clearTimeout(timer);
      redis.off('ready', onReady);
    };
    redis.on('ready', onReady);
  });
}
