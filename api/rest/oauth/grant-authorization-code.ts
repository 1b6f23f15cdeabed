import type { Ctx } from '../../http/context.ts';
import type { AuthorizationCode, Db } from '../../../db/database.ts';
import { claimAuthorizationCode, createGrant, deleteGrant, findAuthorizationCode, linkCodeToGrant } from '../../../db/grants.ts';
import { findUserById } from '../../../db/users.ts';
import { mintIdToken } from '../../services/auth/tokens.ts';
import type { Scope } from '../../services/auth/scopes.ts';
import type { AuthenticatedClient, OAuthForm } from './client-auth.ts';
import { InvalidGrant, InvalidRequest } from '../../services/oauth/errors.ts';
import { isBuiltinApp } from '../../services/oauth/builtin-clients.ts';
import type { RunGrant } from './grant-type.ts';
import { tokenResponse, type TokenResponse } from '../../services/oauth/issue.ts';
import { checkCodeVerifier } from './pkce.ts';

interface PresentedCode {
  code: string;
  redirectUri: string | undefined;
  codeVerifier: string | undefined;
}

/** `grant_type=authorization_code` (RFC 6749 §4.1.3): the code from the redirect for tokens. */
export function authorizationCodeGrant(form: OAuthForm): RunGrant {
  if (!form.code) throw new InvalidRequest('code is required');
  const presented = { code: form.code, redirectUri: form.redirect_uri, codeVerifier: form.code_verifier };
  return (ctx, client) => exchangeCode(ctx, client, presented);
}

async function exchangeCode(ctx: Ctx, client: AuthenticatedClient | undefined, presented: PresentedCode): Promise<TokenResponse> {
  if (!client) throw new InvalidRequest('client_id is required');
  const { db, tokens } = ctx.deps;
  const now = ctx.deps.now();
  const code = await findAuthorizationCode(db, presented.code);
  if (!code) throw new InvalidGrant('The authorization code is invalid');
  if (code.used_at) return refuseReplay(ctx, code.grant_id);
  if (code.application_id !== client.app.id) throw new InvalidGrant('The authorization code was issued to another client');
  if (code.expires_at <= now) throw new InvalidGrant('The authorization code has expired');
  // docs/app-developers.md, "OAuth 2.0": redirect_uri is optional in the exchange (existing clients omit it); when present it must match.
  if (presented.redirectUri !== undefined && presented.redirectUri !== code.redirect_uri) {
    throw new InvalidGrant('redirect_uri does not match the authorization request');
  }
  checkCodeVerifier(code.code_challenge, presented.codeVerifier, client);

  const issued = await redeemCode(db, code, now, client.confidential, isBuiltinApp(client.app));
  // Another exchange won the row lock; its grant is committed by now.
  if (!issued) return refuseReplay(ctx, (await findAuthorizationCode(db, presented.code))?.grant_id ?? null);
  const response = await tokenResponse(tokens, issued.grant, issued.refreshToken);
  if (!code.scopes.includes('openid')) return response;
  return { ...response, id_token: await idTokenFor(ctx, code) };
}

/** Mark the code used and create its grant, in one transaction; undefined when another exchange used it first. */
function redeemCode(db: Db, code: AuthorizationCode, now: Date, clientAuthenticated: boolean, builtin: boolean) {
  // A built-in client never holds offline_access (./builtin-clients.ts), whatever a code from before said.
  const scopes = (code.scopes as Scope[]).filter((s) => !builtin || s !== 'offline_access');
  return db.transaction().execute(async (tx) => {
    // The row lock makes concurrent exchanges wait: exactly one wins, the others see a used code.
    if (!(await claimAuthorizationCode(tx, code.code_hash, now))) return undefined;
    const made = await createGrant(tx, {
      user_id: code.user_id,
      application_id: code.application_id,
      scopes,
      withRefreshToken: scopes.includes('offline_access'),
      clientAuthenticated,
    });
    await linkCodeToGrant(tx, code.code_hash, made.grant.id);
    return made;
  });
}

/** RFC 6749 §4.1.2: a code presented twice may have leaked, so what it issued is revoked. */
async function refuseReplay(ctx: Ctx, grantId: string | null): Promise<never> {
  if (grantId) await deleteGrant(ctx.deps.db, grantId);
  throw new InvalidGrant('The authorization code has already been used; the tokens issued from it are revoked');
}

/** The OpenID Connect ID token of a code granted `openid`, with the name and email when `profile` was granted too. */
async function idTokenFor(ctx: Ctx, code: AuthorizationCode): Promise<string> {
  const user = await findUserById(ctx.deps.db, code.user_id);
  if (!user) throw new InvalidGrant('The user no longer exists');
  return mintIdToken(ctx.deps.tokens, {
    sub: user.id,
    aud: code.application_id,
    nonce: code.nonce,
    ...(code.scopes.includes('profile')
      ? {
          profile: {
            name: `${user.first_name} ${user.last_name}`,
            given_name: user.first_name,
            family_name: user.last_name,
            email: user.email,
          },
        }
      : {}),
  });
}
