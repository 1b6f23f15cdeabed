import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Mw } from './context.ts';
import type { Deps } from '../services/deps.ts';
import { TooManyRequests } from '../services/errors.ts';

/**
 * Per-credential rate limit of the token-authenticated API (rate-limiter-flexible, counters in
 * Redis so that every API process shares them): API_RATE_LIMIT requests per API_RATE_WINDOW_SECONDS
 * for each application grant, personal token or web session (the user's id otherwise). Every
 * answer says where the caller stands (IETF draft-ietf-httpapi-ratelimit-headers):
 *
 *   RateLimit-Policy: <limit>;w=<window seconds>
 *   RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset (seconds until the window restarts)
 *
 * and past the limit the answer is 429 with Retry-After. While Redis is unreachable each process
 * counts in its own memory instead (the same limit per process): the API keeps answering.
 */
interface Limiter {
  limit: number;
  window: number;
  consume(key: string): Promise<RateLimiterRes>;
}

const limiters = new WeakMap<Deps, Limiter | null>();

function limiterOf(deps: Deps): Limiter | null {
  let limiter = limiters.get(deps);
  if (limiter !== undefined) return limiter;
  const { API_RATE_LIMIT: limit, API_RATE_WINDOW_SECONDS: window, QUEUE_PREFIX: prefix } = deps.config;
  if (!limit) limiter = null;
  else {
    const store = new RateLimiterRedis({
      storeClient: deps.redis,
      keyPrefix: `${prefix}:ratelimit`,
      points: limit,
      duration: window,
      rejectIfRedisNotReady: true,
      insuranceLimiter: new RateLimiterMemory({ points: limit, duration: window }),
    });
    limiter = { limit, window, consume: (key) => store.consume(key, 1) };
  }
  limiters.set(deps, limiter);
  return limiter;
}

export const rateLimit: Mw = async function rateLimit(ctx, next) {
  const limiter = limiterOf(ctx.deps);
  const principal = ctx.state.principal;
  if (!limiter || !principal) return next();
  const key = principal.delegation
    ? `delegation:${principal.delegation.id}`
    : principal.grantId
      ? `grant:${principal.grantId}`
      : principal.sessionId
        ? `session:${principal.sessionId}`
        : `user:${principal.userId}`;
  let res: RateLimiterRes;
  let allowed = true;
  try {
    res = await limiter.consume(key);
  } catch (outcome) {
    if (!(outcome instanceof RateLimiterRes)) return next(); // the store and its insurance both failed: not the client's fault
    res = outcome;
    allowed = false;
  }
  const reset = Math.max(0, Math.ceil(res.msBeforeNext / 1000));
  const headers = {
    'RateLimit-Policy': `${limiter.limit};w=${limiter.window}`,
    'RateLimit-Limit': String(limiter.limit),
    'RateLimit-Remaining': String(Math.max(0, res.remainingPoints)),
    'RateLimit-Reset': String(reset),
  };
  if (!allowed)
    throw new TooManyRequests(
      `Rate limit: at most ${limiter.limit} requests per ${limiter.window} s for this credential; try again in ${Math.max(1, reset)} s`,
      reset,
      headers,
    );
  ctx.set(headers);
  await next();
};
