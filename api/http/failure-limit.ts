import type { Ctx } from './context.ts';
import type { Deps } from '../services/deps.ts';
import { TooManyRequests } from '../services/errors.ts';
import { addressKey } from '../services/auth/client-address.ts';
import { WindowCounters, type WindowStanding } from '../services/auth/throttle.ts';

/**
 * Failed credentials per client address (./client-address.ts: an IPv6 client is its /64), counted in
 * Redis over a fixed window (./throttle.ts's WindowCounters) so that every API process shares them: AUTH_FAILURE_LIMIT per
 * AUTH_FAILURE_WINDOW_SECONDS. What counts: a token-endpoint request refused (400, 401), a bearer token
 * that is malformed, not signed by us or revoked; not an expired token of ours (its client refreshes)
 * and never a success, so a platform refreshing thousands of users' tokens from one server pays
 * nothing, and nobody is locked out from another address.
 *
 * Past the limit the address gets 429 with Retry-After: at the token endpoint for every request
 * (checked in Redis first: the endpoint is not a hot path), and instead of 401 for bearer tokens that
 * fail. A request whose token checks pays nothing (no Redis round trip is added to it). The refused
 * answers carry RateLimit headers of the failure budget
 * (`RateLimit-Policy: <limit>;w=<window>`, `RateLimit-Limit`, `-Remaining`, `-Reset`). Redis
 * unreachable: nothing is counted (the credential checks themselves still run).
 */
export type FailureStanding = WindowStanding;

function counters(deps: Deps): WindowCounters {
  return new WindowCounters(deps.redis, deps.config.AUTH_FAILURE_WINDOW_SECONDS, 'Authentication');
}

function keyOf(deps: Deps, ip: string): string {
  return `${deps.config.QUEUE_PREFIX}:auth-fail:${addressKey(ip)}`;
}

export function failureHeaders(deps: Deps, s: FailureStanding): Record<string, string> {
  const { AUTH_FAILURE_LIMIT: limit, AUTH_FAILURE_WINDOW_SECONDS: window } = deps.config;
  return {
    'RateLimit-Policy': `${limit};w=${window}`,
    'RateLimit-Limit': String(limit),
    'RateLimit-Remaining': String(Math.max(0, limit - s.count)),
    'RateLimit-Reset': String(Math.max(0, s.reset)),
  };
}

/** The address's failures so far (a Redis read); undefined when there is no limit or Redis does not answer. */
export async function failureStanding(ctx: Ctx): Promise<FailureStanding | undefined> {
  if (!ctx.deps.config.AUTH_FAILURE_LIMIT) return undefined;
  return counters(ctx.deps)
    .standing(keyOf(ctx.deps, ctx.ip))
    .catch(() => undefined);
}

/** Count one failure of the address; its standing after it (undefined without a limit or Redis). */
export async function recordFailure(ctx: Ctx): Promise<FailureStanding | undefined> {
  if (!ctx.deps.config.AUTH_FAILURE_LIMIT) return undefined;
  return counters(ctx.deps)
    .count(keyOf(ctx.deps, ctx.ip))
    .catch(() => undefined);
}

/** The address is past its budget (`count` over the limit). */
export function overLimit(deps: Deps, s: FailureStanding | undefined): s is FailureStanding {
  return s !== undefined && s.count > deps.config.AUTH_FAILURE_LIMIT;
}

export function tooManyFailures(deps: Deps, s: FailureStanding): TooManyRequests {
  return new TooManyRequests(
    `Too many failed credentials from this address (${deps.config.AUTH_FAILURE_LIMIT} per ${deps.config.AUTH_FAILURE_WINDOW_SECONDS} s); try again in ${Math.max(1, s.reset)} s`,
    s.reset,
    failureHeaders(deps, s),
  );
}
