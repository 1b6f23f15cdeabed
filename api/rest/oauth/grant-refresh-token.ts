import type { Ctx } from '../../http/context.ts';
import type { Grant } from '../../../db/database.ts';
import { findGrant, findGrantByRefreshToken, touchGrant } from '../../../db/grants.ts';
import { findDelegationByRefreshToken, touchDelegation } from '../../../db/delegations.ts';
import { liveCredentialVersions } from '../../../db/credentials.ts';
import { mintAccessToken } from '../../services/auth/tokens.ts';
import { parseScopes, type Scope } from '../../services/auth/scopes.ts';
import type { AuthenticatedClient, OAuthForm } from './client-auth.ts';
import { isBuiltinApp } from '../../services/oauth/builtin-clients.ts';
import { InvalidClient, InvalidGrant, InvalidRequest, InvalidScope } from '../../services/oauth/errors.ts';
import type { RunGrant } from './grant-type.ts';
import { tokenResponse, type TokenResponse } from '../../services/oauth/issue.ts';

/**
 * `grant_type=refresh_token` (RFC 6749 §6): a new access token for a grant's refresh token, narrowed
 * to `scope` when given. A personal token's refresh token is exchanged without a client.
 */
export function refreshTokenGrant(form: OAuthForm): RunGrant {
  const { refresh_token: refreshToken, scope } = form;
  if (!refreshToken) throw new InvalidRequest('refresh_token is required');
  return (ctx, client) => refresh(ctx, client, refreshToken, scope);
}

async function refresh(
  ctx: Ctx,
  client: AuthenticatedClient | undefined,
  refreshToken: string,
  scope: string | undefined,
): Promise<TokenResponse> {
  const { db, tokens } = ctx.deps;
  const grant = await findGrantByRefreshToken(db, refreshToken);
  if (!grant) return refreshDelegation(ctx, client, refreshToken, scope);
  checkClientOf(grant, client);
  const scopes = scope === undefined ? (grant.scopes as Scope[]) : narrowScopes(grant.scopes as Scope[], scope);
  await touchGrant(db, grant.id, ctx.deps.now());
  const response = await tokenResponse(tokens, { ...grant, scopes });
  // Not rotated (docs/app-developers.md, "OAuth 2.0"): existing clients keep using the refresh token they have.
  return { ...response, refresh_token: refreshToken };
}

/**
 * An application's grant is refreshed by that application only, with its client secret when the
 * code was exchanged with it (a confidential client's refresh token is worth nothing without the
 * secret, RFC 6749 §6 and §10.4); a personal token's (no application) by no client.
 */
function checkClientOf(grant: Grant, client: AuthenticatedClient | undefined): void {
  if (grant.application_id === null) {
    if (client) throw new InvalidGrant('The refresh token was issued to another client');
  } else {
    if (!client) throw new InvalidRequest('client_id is required');
    if (client.app.id !== grant.application_id) throw new InvalidGrant('The refresh token was issued to another client');
    // (one issued before built-in clients stopped getting them: ./builtin-clients.ts)
    if (isBuiltinApp(client.app)) throw new InvalidGrant('This client gets no refresh tokens; authorize again');
    if (grant.client_authenticated && !client.confidential) {
      throw new InvalidClient(
        'This refresh token was issued to the application authenticated with its client secret: authenticate with it (client_secret_basic or client_secret_post)',
      );
    }
  }
}

/** The asked scopes, all of them among the granted ones (invalid_scope otherwise, or when none is asked). */
function narrowScopes(granted: Scope[], scope: string): Scope[] {
  const asked = parseScopes(scope);
  const extra = [...asked.unknown, ...asked.scopes.filter((s) => !granted.includes(s))];
  if (extra.length) throw new InvalidScope(`Not granted: ${extra.join(' ')}`);
  if (!asked.scopes.length) throw new InvalidScope('scope is empty');
  return asked.scopes;
}

/**
 * A delegated token's refresh token (docs/coaching.md): refreshed by the client of the grant it was
 * made under, with that grant's rules, while the delegation still allows something (the same check
 * as every request's); the new token is narrowed to what the athlete grants now.
 */
async function refreshDelegation(
  ctx: Ctx,
  client: AuthenticatedClient | undefined,
  refreshToken: string,
  scope: string | undefined,
): Promise<TokenResponse> {
  const { db, tokens } = ctx.deps;
  const delegation = await findDelegationByRefreshToken(db, refreshToken);
  const grant = delegation?.grant_id ? await findGrant(db, delegation.grant_id) : undefined;
  if (!delegation || !grant) throw new InvalidGrant('The refresh token is invalid or has been revoked');
  checkClientOf(grant, client);
  const live = await liveCredentialVersions(db, {
    kind: 'delegation',
    id: delegation.id,
    userId: delegation.user_id,
    actorId: delegation.actor_id,
    applicationId: delegation.application_id,
    now: ctx.deps.now(),
  });
  if (!live) throw new InvalidGrant('The delegation has ended: the team authorisation, the membership or the managed user is gone');
  const allowed = live.delegation?.allowedScopes;
  const current = (delegation.scopes as Scope[]).filter((s) => !allowed || allowed.includes(s));
  const scopes = scope === undefined ? current : narrowScopes(current, scope);
  if (!scopes.length) throw new InvalidGrant('The delegation no longer allows any scope');
  await touchDelegation(db, delegation.id, ctx.deps.now());
  const { token, expiresIn } = await mintAccessToken(tokens, {
    sub: delegation.user_id,
    scopes,
    aud: delegation.application_id ?? undefined,
    act: delegation.actor_id,
    did: delegation.id,
  });
  return { access_token: token, token_type: 'Bearer', expires_in: expiresIn, refresh_token: refreshToken, scope: scopes.join(' ') };
}
