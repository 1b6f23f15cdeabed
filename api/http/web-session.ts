import type { Ctx } from './context.ts';
import type { User } from '../../db/database.ts';
import { createSession, deleteSession } from '../../db/sessions.ts';
import { findUserById } from '../../db/users.ts';
import { HttpError } from '../services/errors.ts';
import {
  ACTING_COOKIE,
  actingPrincipal,
  clearActingCookie,
  clearSessionCookie,
  resolvePrincipal,
  SESSION_COOKIE,
  setSessionCookie,
} from './authenticate.ts';
import { mintAccessToken } from '../services/auth/tokens.ts';
import { WEB_SESSION_SCOPES } from '../services/auth/scopes.ts';

/** Sign `user` in: a session row and an access token bound to it in the `token` cookie. */
export async function startWebSession(ctx: Ctx, user: User): Promise<void> {
  const { deps } = ctx;
  const expires = new Date(deps.now().getTime() + deps.config.SESSION_TTL_HOURS * 3600_000);
  const session = await createSession(deps.db, {
    user_id: user.id,
    expires_at: expires,
    user_agent: ctx.get('user-agent').slice(0, 300) || null,
  });
  const { token } = await mintAccessToken(deps.tokens, { sub: user.id, scopes: WEB_SESSION_SCOPES, sid: session.id });
  setSessionCookie(ctx, token, expires);
}

export async function endWebSession(ctx: Ctx): Promise<void> {
  const user = await currentWebUser(ctx);
  if (user) await deleteSession(ctx.deps.db, user.sessionId);
  clearSessionCookie(ctx);
  clearActingCookie(ctx);
}

/** Whom the web session acts as (docs/coaching.md, "The web app"): their id and name, and whether it may change their data. */
export interface ActingAs {
  id: string;
  first_name: string;
  last_name: string;
  canWrite: boolean;
}

/**
 * The signed-in user of a web page request (cookie session only), or undefined; with `acting` while
 * the session acts as someone (the "act as" cookie, checked as any delegated token).
 */
export async function currentWebUser(ctx: Ctx): Promise<(User & { sessionId: string; acting?: ActingAs }) | undefined> {
  if (!ctx.cookies.get(SESSION_COOKIE)) return undefined;
  try {
    const p = await resolvePrincipal(ctx, { acting: false });
    if (!p?.sessionId || p.via !== 'cookie') return undefined;
    const user = await findUserById(ctx.deps.db, p.userId);
    if (!user) return undefined;
    const delegated = ctx.cookies.get(ACTING_COOKIE) ? await actingPrincipal(ctx, p) : undefined;
    const subject = delegated
      ? await ctx.deps.db
          .selectFrom('users')
          .select(['id', 'first_name', 'last_name'])
          .where('id', '=', delegated.userId)
          .executeTakeFirst()
      : undefined;
    const acting = subject && delegated ? { ...subject, canWrite: delegated.scopes.includes('data:write') } : undefined;
    return { ...user, sessionId: p.sessionId, ...(acting ? { acting } : {}) };
  } catch (err) {
    if (err instanceof HttpError && err.status === 401) {
      clearSessionCookie(ctx);
      return undefined;
    }
    throw err;
  }
}

/**
 * Where to go after signing in or up: only a path on this site (`/x`, not `//host` or `/\host`), so
 * the `next` parameter cannot become an open redirect; without one, home (its "Get started" list,
 * then the latest activities and curves).
 */
export function safeNext(next: unknown, fallback = '/'): string {
  if (typeof next !== 'string' || next.length > 8000) return fallback;
  if (!next.startsWith('/') || next.startsWith('//') || next.includes('\\') || /[\u0000-\u001f]/.test(next)) return fallback;
  return next;
}
