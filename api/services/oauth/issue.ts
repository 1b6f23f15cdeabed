import { z } from 'zod';
import type { Db, Grant } from '../../../db/database.ts';
import { createGrant } from '../../../db/grants.ts';
import { mintAccessToken, type TokenIssuer } from '../auth/tokens.ts';
import type { Scope } from '../auth/scopes.ts';

export const TokenResponse = z
  .object({
    access_token: z.string().describe('RS256 JWT; its `scopes` claim lists the granted scopes'),
    token_type: z.literal('Bearer'),
    expires_in: z.number().int().describe('Seconds until the access token expires (900)'),
    refresh_token: z.string().optional().describe('Issued with `offline_access` (and for personal tokens); no expiry, not rotated'),
    scope: z.string().describe('Granted scopes, space-delimited'),
    id_token: z.string().optional().describe('OpenID Connect ID token, from a code exchange when `openid` was granted'),
  })
  .meta({ id: 'TokenResponse' });
export type TokenResponse = z.infer<typeof TokenResponse>;

/** An access token for `grant` (and the refresh token, when one was just made). */
export async function tokenResponse(tokens: TokenIssuer, grant: Grant, refreshToken?: string): Promise<TokenResponse> {
  const scopes = grant.scopes as Scope[];
  const { token, expiresIn } = await mintAccessToken(tokens, {
    sub: grant.user_id,
    scopes,
    aud: grant.application_id ?? undefined,
    gid: grant.id,
  });
  return {
    access_token: token,
    token_type: 'Bearer',
    expires_in: expiresIn,
    ...(refreshToken ? { refresh_token: refreshToken } : {}),
    scope: scopes.join(' '),
  };
}

/**
 * A personal token for the user's own scripts: an access token without `aud` and a refresh token
 * (exchanged at the token endpoint without a client id). Both are shown once; revoking the grant
 * ends both at once.
 */
export async function createPersonalToken(db: Db, tokens: TokenIssuer, userId: string, scopes: Scope[], label: string) {
  const { grant, refreshToken } = await createGrant(db, { user_id: userId, application_id: null, scopes, label, withRefreshToken: true });
  return { grant, response: await tokenResponse(tokens, grant, refreshToken) };
}
