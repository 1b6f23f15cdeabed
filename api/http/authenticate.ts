import type { Ctx, Mw, Principal } from './context.ts';
import { withActor } from '../../lib/actor.ts';
import { Forbidden, InsufficientScope, Unauthorized } from '../services/errors.ts';
import { findLiveSession } from '../../db/sessions.ts';
import { liveCredentialVersions, type UserVersions } from '../../db/credentials.ts';
import { findDelegation } from '../../db/delegations.ts';
import { InvalidTokenError, mintAccessToken, verifyAccessToken, type AccessTokenClaims } from '../services/auth/tokens.ts';
import type { Scope } from '../services/auth/scopes.ts';
import { assertSameOrigin } from './origin-check.ts';
import { failureHeaders, overLimit, recordFailure, tooManyFailures } from './failure-limit.ts';

/**
 * What an endpoint requires of its caller:
 * - `none`: public.
 * - `scopes`: every listed scope must be granted.
 * - `firstParty`: the web session or a personal token (no `aud`); third-party app tokens get 403.
 * - `appOnly`: an application's token (with `aud`); first-party credentials get 403.
 * - `noDelegation`: a delegated token (docs/coaching.md) gets 403: the endpoint manages an account
 *   (teams, managed users, delegation itself), which nobody does for another. `firstParty` implies it.
 */
export type AuthRequirement = 'none' | { scopes: readonly Scope[]; firstParty?: boolean; appOnly?: boolean; noDelegation?: boolean };

export const SESSION_COOKIE = 'token';
/** The web app's "act as" (docs/coaching.md): a delegated access token made under the web session, beside the session's own cookie. */
export const ACTING_COOKIE = 'acting';
const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export function authenticate(requirement: AuthRequirement): Mw {
  return async function authenticateRequest(ctx, next) {
    if (requirement === 'none') return next();
    const principal = await resolvePrincipal(ctx);
    if (!principal) throw new Unauthorized('Not authenticated');
    if (principal.via === 'cookie' && UNSAFE_METHODS.has(ctx.method)) assertSameOrigin(ctx);
    const missing = requirement.scopes.filter((s) => !principal.scopes.includes(s));
    if (missing.length) throw new InsufficientScope(requirement.scopes);
    if (requirement.firstParty && principal.clientId) throw new Forbidden('This endpoint is not available to third-party applications');
    if (requirement.appOnly && !principal.clientId) throw new Forbidden('This endpoint needs an application token');
    if (principal.delegation && (requirement.noDelegation || requirement.firstParty))
      throw new Forbidden('This endpoint does not accept a delegated token: use your own (GET /api/v1/oauth/principal-token)');
    ctx.state.principal = principal;
    // What a delegated token changes is recorded with who acted (lib/actor.ts).
    await withActor(principal.delegation?.actorId, next);
  };
}

/**
 * The caller's identity from `Authorization: Bearer` or, failing that, the `token` cookie of the
 * web session. A web-session token is checked against its session row (sign-out ends it); an
 * expired cookie token of a live session is replaced, and the new token returned in the
 * `refreshed-token` header and the cookie. Throws Unauthorized for a bad credential; returns
 * undefined when there is none.
 */
export async function resolvePrincipal(ctx: Ctx, opts: { acting?: boolean } = {}): Promise<Principal | undefined> {
  const { deps } = ctx;
  const header = ctx.get('authorization');
  let token: string | undefined;
  let via: Principal['via'] = 'bearer';
  if (header) {
    const match = /^Bearer\s+([A-Za-z0-9\-_.~+/]+=*)\s*$/i.exec(header);
    if (!match) await refuseFailedBearer(ctx, 'The Authorization header must be "Bearer <token>"');
    token = match![1];
  } else {
    // While the web session acts as someone, the browser's API calls are theirs (the session itself still checked).
    if (opts.acting !== false && ctx.cookies.get(ACTING_COOKIE)) {
      const session = await resolvePrincipal(ctx, { acting: false });
      const acting = session?.sessionId ? await actingPrincipal(ctx, session) : undefined;
      if (acting) return acting;
      if (session) return session;
    }
    token = ctx.cookies.get(SESSION_COOKIE) || undefined;
    via = 'cookie';
  }
  if (!token) return undefined;

  let claims: AccessTokenClaims;
  try {
    claims = await verifyAccessToken(deps.tokens, token);
  } catch (err) {
    if (!(err instanceof InvalidTokenError)) throw err;
    // (an expired token of ours is a client that should refresh: not counted)
    if (!err.expired && via === 'bearer') await refuseFailedBearer(ctx, err.message);
    if (!(err.expired && via === 'cookie')) throw new Unauthorized(err.message);
    // The refresh has just checked the session: no second look-up.
    claims = await refreshWebSession(ctx, token);
    return principalOf(claims, via);
  }
  // Per request, never remembered: a revoked grant or an ended session is refused on its next use.
  let versions: UserVersions | undefined;
  if (claims.sid) {
    versions = await liveCredentialVersions(deps.db, { kind: 'session', id: claims.sid, userId: claims.sub, now: deps.now() });
    if (versions === undefined) await refuseFailedBearer(ctx, 'The session has ended; sign in again', via);
  } else if (claims.gid) {
    versions = await liveCredentialVersions(deps.db, {
      kind: 'grant',
      id: claims.gid,
      userId: claims.sub,
      applicationId: claims.aud ?? null,
    });
    if (versions === undefined) await refuseFailedBearer(ctx, 'The access token has been revoked', via);
  } else if (claims.did && claims.act) {
    versions = await liveCredentialVersions(deps.db, {
      kind: 'delegation',
      id: claims.did,
      userId: claims.sub,
      actorId: claims.act.sub,
      applicationId: claims.aud ?? null,
      now: deps.now(),
    });
    if (versions === undefined)
      await refuseFailedBearer(ctx, 'The delegation has ended: the team authorisation, the membership or the managed user is gone', via);
  } else {
    await refuseFailedBearer(ctx, 'the access token is invalid', via);
  }
  return principalOf(claims, via, versions);
}

/**
 * A credential that failed: 401, or 429 once its client address is past its budget of failures
 * (./failure-limit.ts: bearer tokens only; the session cookie is the browser's, signed in through the
 * sign-in throttle). The refusal carries the budget's RateLimit headers.
 */
async function refuseFailedBearer(ctx: Ctx, message: string, via: Principal['via'] = 'bearer'): Promise<never> {
  if (via !== 'bearer') throw new Unauthorized(message);
  const standing = await recordFailure(ctx);
  if (overLimit(ctx.deps, standing)) throw tooManyFailures(ctx.deps, standing);
  throw new Unauthorized(message, standing ? failureHeaders(ctx.deps, standing) : {});
}

function principalOf(claims: AccessTokenClaims, via: Principal['via'], versions?: UserVersions): Principal {
  const delegation = versions?.delegation;
  // A delegated token may do what the athlete grants the team now, whatever it was minted with.
  const allowed = delegation?.allowedScopes;
  return {
    userId: claims.sub,
    scopes: allowed ? claims.scopes.filter((s) => allowed.includes(s)) : claims.scopes,
    ...(delegation && claims.did && claims.act
      ? { delegation: { id: claims.did, actorId: claims.act.sub, teamId: delegation.teamId } }
      : {}),
    clientId: claims.aud,
    sessionId: claims.sid,
    grantId: claims.gid,
    via,
    readVersion: versions?.readVersion,
    dataVersion: versions?.dataVersion,
  };
}

/**
 * The principal of the web session's "act as" cookie (docs/coaching.md, "The web app"), for the
 * session `session`: a delegated token whose actor is the session's user and whose delegation was
 * made under this very session and still allows something (the same check as any delegated token);
 * an expired one is minted again for the same delegation. Anything else clears the cookie: undefined.
 */
export async function actingPrincipal(
  ctx: Ctx,
  session: { userId: string; sessionId?: string | undefined },
): Promise<Principal | undefined> {
  const { deps } = ctx;
  const token = ctx.cookies.get(ACTING_COOKIE);
  if (!token || !session.sessionId) return undefined;
  const drop = () => {
    clearActingCookie(ctx);
    return undefined;
  };
  let claims: AccessTokenClaims;
  let expired = false;
  try {
    claims = await verifyAccessToken(deps.tokens, token);
  } catch (err) {
    if (!(err instanceof InvalidTokenError)) throw err;
    if (!err.expired) return drop();
    try {
      claims = await verifyAccessToken(deps.tokens, token, { expiredTolerance: deps.config.SESSION_TTL_HOURS * 3600 });
    } catch {
      return drop();
    }
    expired = true;
  }
  if (!claims.did || claims.act?.sub !== session.userId || claims.aud) return drop();
  const delegation = await findDelegation(deps.db, claims.did);
  if (!delegation || delegation.session_id !== session.sessionId || delegation.user_id !== claims.sub) return drop();
  const versions = await liveCredentialVersions(deps.db, {
    kind: 'delegation',
    id: delegation.id,
    userId: delegation.user_id,
    actorId: session.userId,
    applicationId: null,
    now: deps.now(),
  });
  if (!versions) return drop();
  if (expired) {
    const minted = await mintAccessToken(deps.tokens, {
      sub: delegation.user_id,
      scopes: claims.scopes,
      act: session.userId,
      did: delegation.id,
    });
    setActingCookie(ctx, minted.token);
    claims = minted.claims;
  }
  return principalOf(claims, 'cookie', versions);
}

/** The "act as" cookie: HttpOnly, SameSite=Lax, Secure when BASE_URL is https; a browser-session cookie (its token is minted again while the session lives). */
export function setActingCookie(ctx: Ctx, token: string): void {
  ctx.cookies.set(ACTING_COOKIE, token, {
    httpOnly: true,
    sameSite: 'lax',
    secure: ctx.deps.config.BASE_URL.startsWith('https:'),
    path: '/',
    overwrite: true,
  });
}

export function clearActingCookie(ctx: Ctx): void {
  ctx.cookies.set(ACTING_COOKIE, '', {
    httpOnly: true,
    sameSite: 'lax',
    secure: ctx.deps.config.BASE_URL.startsWith('https:'),
    path: '/',
    expires: new Date(0),
    overwrite: true,
  });
}

async function refreshWebSession(ctx: Ctx, expiredToken: string): Promise<AccessTokenClaims> {
  const { deps } = ctx;
  let old: AccessTokenClaims;
  try {
    old = await verifyAccessToken(deps.tokens, expiredToken, { expiredTolerance: deps.config.SESSION_TTL_HOURS * 3600 });
  } catch {
    throw new Unauthorized('the access token has expired');
  }
  const session = old.sid ? await findLiveSession(deps.db, old.sid, deps.now()) : undefined;
  if (!session || session.user_id !== old.sub) throw new Unauthorized('The session has ended; sign in again');
  const { token, claims } = await mintAccessToken(deps.tokens, { sub: old.sub, scopes: old.scopes, sid: session.id });
  setSessionCookie(ctx, token, session.expires_at);
  ctx.set('refreshed-token', token);
  return claims;
}

/** The session cookie: HttpOnly, SameSite=Lax, Secure when BASE_URL is https. */
export function setSessionCookie(ctx: Ctx, token: string, expires: Date): void {
  ctx.cookies.set(SESSION_COOKIE, token, {
    httpOnly: true,
    sameSite: 'lax',
    secure: ctx.deps.config.BASE_URL.startsWith('https:'),
    path: '/',
    expires,
    overwrite: true,
  });
}

export function clearSessionCookie(ctx: Ctx): void {
  setSessionCookie(ctx, '', new Date(0));
}
