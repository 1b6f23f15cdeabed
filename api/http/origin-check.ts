import type { Ctx } from './context.ts';
import { Forbidden } from '../services/errors.ts';

/**
 * A state-changing request authenticated by cookie (or a web form) must come from our own pages:
 * its Origin header (or, when a browser sends none, its Referer) must be BASE_URL's origin.
 * SameSite=Lax cookies already stop most cross-site posts; this is the second lock.
 */
export function assertSameOrigin(ctx: Ctx): void {
  if (!isSameOrigin(ctx)) throw new Forbidden('Cross-origin request refused: the Origin header does not match this site');
}

export function isSameOrigin(ctx: Ctx): boolean {
  const expected = new URL(ctx.deps.config.BASE_URL).origin;
  const origin = ctx.get('origin');
  if (origin) return origin === expected;
  const referer = ctx.get('referer');
  if (!referer) return false;
  try {
    return new URL(referer).origin === expected;
  } catch {
    return false;
  }
}
