import type { Deps } from '../deps.ts';
import { Forbidden, Unauthorized } from '../errors.ts';
import { mintAccessToken } from '../auth/tokens.ts';
import { SCOPES, WEB_SESSION_SCOPES, type Scope } from '../auth/scopes.ts';
import { tokenResponse } from '../oauth/issue.ts';
import { createDelegation, findDelegation } from '../../../db/delegations.ts';
import { findGrant } from '../../../db/grants.ts';
import { findLiveSession } from '../../../db/sessions.ts';
import { findManagedUser } from '../../../db/managed-users.ts';
import { teamGrantsFor } from '../../../db/teams.ts';
import { isUuid } from '../../../lib/ids.ts';
import { MANAGED_SCOPES } from './model.ts';

/**
 * Delegated tokens (docs/coaching.md, "Delegation"): the caller acts as one of their managed users,
 * or as an athlete who authorised a team the caller belongs to. The token's scopes are those asked ∩
 * the caller's token's ∩ what the athlete granted; `offline_access` in the caller's grant gives it a
 * refresh token (never a web session). The token is bound to a delegation row, checked on every
 * request (db/credentials.ts), so revoking the team authorisation, leaving the team or deleting the
 * managed user ends it on the next request.
 */

/** Who asks: the caller's credential, as the authentication read it. */
export interface Caller {
  userId: string;
  scopes: Scope[];
  clientId: string | undefined;
  grantId: string | undefined;
  sessionId: string | undefined;
  delegation?: { id: string } | undefined;
}

export interface DelegatedTokenAnswer {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  /** Null without `offline_access` (the key is always there: clients read it). */
  refresh_token: string | null;
  scope: string;
  sub: string;
  team_id: string | null;
}

/** The same refusal whether the user does not exist, is someone else's or never shared: nothing is learnt from it. */
const NOT_YOURS = 'You may not act as this user (not your managed user, nor an athlete who authorised this team for you)';

export async function issueDelegatedToken(
  deps: Deps,
  caller: Caller,
  request: { sub: string; team_id?: string | null | undefined; scopes?: string[] | null | undefined },
): Promise<DelegatedTokenAnswer> {
  if (caller.delegation)
    throw new Forbidden('A delegated token cannot make another: use your own token (GET /api/v1/oauth/principal-token)');
  const route = await delegationRoute(deps, caller.userId, request.sub, request.team_id ?? undefined);
  if (!route) throw new Forbidden(NOT_YOURS);
  const asked = request.scopes ?? undefined;
  const scopes = SCOPES.filter(
    (s) => route.allowed.includes(s) && caller.scopes.includes(s) && (asked === undefined || asked.includes(s)),
  ) as Scope[];
  if (!scopes.length)
    throw new Forbidden(
      `No scope left to grant: the user allows ${route.allowed.join(' ')}, your token holds ${caller.scopes.join(' ') || 'none'}`,
    );
  const withRefreshToken = caller.grantId !== undefined && caller.scopes.includes('offline_access');
  const { delegation, refreshToken } = await createDelegation(deps.db, {
    actorId: caller.userId,
    userId: request.sub,
    teamId: route.teamId,
    grantId: caller.grantId ?? null,
    sessionId: caller.grantId ? null : (caller.sessionId ?? null),
    applicationId: caller.clientId ?? null,
    scopes,
    withRefreshToken,
  });
  const { token, expiresIn } = await mintAccessToken(deps.tokens, {
    sub: request.sub,
    scopes,
    aud: caller.clientId,
    act: caller.userId,
    did: delegation.id,
  });
  return {
    access_token: token,
    token_type: 'Bearer',
    expires_in: expiresIn,
    refresh_token: refreshToken ?? null,
    scope: scopes.join(' '),
    sub: request.sub,
    team_id: route.teamId,
  };
}

/**
 * How `actorId` may act as `sub`: as its manager (no team), or through `teamId` (the actor a member,
 * `sub` authorising it), or without a team named, through the actor's team that grants the most.
 */
async function delegationRoute(
  deps: Deps,
  actorId: string,
  sub: string,
  teamId: string | undefined,
): Promise<{ teamId: string | null; allowed: string[] } | undefined> {
  if (!isUuid(sub) || sub === actorId || (teamId !== undefined && !isUuid(teamId))) return undefined;
  if (teamId === undefined && (await findManagedUser(deps.db, actorId, sub))) return { teamId: null, allowed: [...MANAGED_SCOPES] };
  const rows = await teamGrantsFor(deps.db, actorId, sub, teamId);
  const best = rows.find((r) => r.scopes.includes('data:write')) ?? rows[0];
  return best ? { teamId: best.team_id, allowed: best.scopes } : undefined;
}

export interface PrincipalTokenAnswer {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: null;
  scope: string;
  sub: string;
}

/**
 * The caller's own token back: for a delegated token, a new access token of the credential the
 * delegation was made under (the actor's grant or web session); for any other, a new one of the
 * same credential. No refresh token (the one the caller holds keeps working; it is stored hashed).
 */
export async function issuePrincipalToken(deps: Deps, caller: Caller): Promise<PrincipalTokenAnswer> {
  let grantId = caller.grantId;
  let sessionId = caller.sessionId;
  if (caller.delegation) {
    const delegation = await findDelegation(deps.db, caller.delegation.id);
    if (!delegation) throw new Unauthorized('The delegation has ended');
    grantId = delegation.grant_id ?? undefined;
    sessionId = delegation.session_id ?? undefined;
  }
  if (grantId) {
    const grant = await findGrant(deps.db, grantId);
    if (!grant) throw new Unauthorized('The access token has been revoked');
    const response = await tokenResponse(deps.tokens, grant);
    return { ...response, refresh_token: null, sub: grant.user_id };
  }
  const session = sessionId ? await findLiveSession(deps.db, sessionId, deps.now()) : undefined;
  if (!session) throw new Unauthorized('The session has ended; sign in again');
  const { token, expiresIn, claims } = await mintAccessToken(deps.tokens, {
    sub: session.user_id,
    scopes: WEB_SESSION_SCOPES,
    sid: session.id,
  });
  return {
    access_token: token,
    token_type: 'Bearer',
    expires_in: expiresIn,
    refresh_token: null,
    scope: claims.scopes.join(' '),
    sub: session.user_id,
  };
}
