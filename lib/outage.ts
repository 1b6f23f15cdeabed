/**
 * Whether an error means PostgreSQL, Redis or the object store is unreachable or going away (a
 * transient outage the client should retry), as opposed to a bug. The object store's are already
 * classified (lib/object-store.ts StoreUnavailable, code `store_unavailable`). Connection failures (refused, reset, timed out), a
 * server shutting down or not yet accepting connections (SQLSTATE class 08, 57P01–57P03, 53300),
 * a pg client whose connection died, and ioredis refusing a command while it is disconnected.
 */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNABORTED',
]);
const SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);
const MESSAGES = [
  /^Connection terminated/, // pg: the server went away
  /timeout exceeded when trying to connect/, // pg-pool
  /not queryable/, // pg: a client whose connection failed or was closed
  /Stream isn't writeable/, // ioredis without its offline queue while disconnected
  /^Connection is closed/, // ioredis
  /max retries per request/i, // ioredis MaxRetriesPerRequestError
  /Redis not reachable/, // workers/connections.ts waitForRedis
];

export function isOutage(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== 'object' || depth > 3) return false;
  const e = err as { code?: unknown; message?: unknown; name?: unknown; cause?: unknown; errors?: unknown };
  if (typeof e.code === 'string' && (NETWORK_CODES.has(e.code) || SQLSTATES.has(e.code) || e.code.startsWith('08'))) return true;
  if (e.name === 'MaxRetriesPerRequestError' || e.code === 'store_unavailable') return true;
  if (typeof e.message === 'string' && MESSAGES.some((m) => m.test(e.message as string))) return true;
  if (Array.isArray(e.errors) && e.errors.some((x) => isOutage(x, depth + 1))) return true;
  return isOutage(e.cause, depth + 1);
}
