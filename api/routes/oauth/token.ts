import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { Ctx } from '../../context.ts';
import { defineRoute } from '../../route.ts';
import type { Scope as ScopeName } from '../../auth/scopes.ts';
import { authenticateClient, clientCredentials, readOAuthForm, type OAuthForm } from '../../oauth/client-auth.ts';
import { OAuthErrorBody, InvalidClient, InvalidGrant, InvalidRequest, InvalidScope, UnsupportedGrantType } from '../../oauth/errors.ts';
import { TokenResponse, tokenResponse } from '../../oauth/issue.ts';
import { mintIdToken } from '../../auth/tokens.ts';
import { findUserById } from '../../../db/users.ts';
import { parseScopes } from '../../auth/scopes.ts';
import { constantTimeEqual } from '../../../lib/secrets.ts';
import {
  claimAuthorizationCode,
  createGrant,
  deleteGrant,
  findAuthorizationCode,
  findGrantByRefreshToken,
  linkCodeToGrant,
  touchGrant,
} from '../../../db/grants.ts';

const TokenForm = z
  .object({
    grant_type: z.enum(['authorization_code', 'refresh_token']),
    code: z.string().optional().describe('authorization_code: the code from the redirect'),
    redirect_uri: z.string().optional().describe('authorization_code: when present, must equal the one the code was issued for'),
    code_verifier: z.string().min(43).max(128).optional().describe('authorization_code with PKCE: the verifier (43–128 characters)'),
    refresh_token: z.string().optional().describe('refresh_token: the refresh token'),
    scope: z.string().optional().describe('refresh_token: narrow the new access token to these of the granted scopes'),
    client_id: z.string().optional().describe('The application id (omit only when refreshing a personal token)'),
    client_secret: z.string().optional().describe('client_secret_post; an empty value counts as absent'),
  })
  .meta({ id: 'TokenRequest' });

const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;

function tokenRoute(path: string, operationId: string) {
  return defineRoute(
    {
      method: 'post',
      path,
      operationId,
      summary: 'Exchange an authorization code or a refresh token for an access token',
      description:
        'OAuth 2.0 token endpoint (RFC 6749 §3.2), served at `/api/v1/oauth/token` and `/oauth/token`. ' +
        'Client authentication: `none` (public client with PKCE, `client_id` in the form), `client_secret_post` or ' +
        '`client_secret_basic`. Codes are single-use and expire after 60 s; presenting a used code fails and revokes the ' +
        'tokens issued from it. Refresh tokens do not expire and are not rotated: the response repeats the one presented. ' +
        'A personal token\'s refresh token is exchanged without `client_id`. Errors are RFC 6749 bodies; every response ' +
        'carries `Cache-Control: no-store`.',
      tags: ['oauth'],
      auth: 'none',
      oauthForm: TokenForm,
      security: [{}, { basic: [] }],
      responses: {
        200: { description: 'Tokens', schema: TokenResponse },
        400: { description: 'invalid_request, invalid_grant, invalid_scope or unsupported_grant_type', schema: OAuthErrorBody },
        401: { description: 'invalid_client (with `WWW-Authenticate: Basic`)', schema: OAuthErrorBody },
      },
    },
    async (ctx) => {
      const form = readOAuthForm(ctx);
      let body: TokenResponse;
      if (form.grant_type === 'authorization_code') body = await exchangeCode(ctx, form);
      else if (form.grant_type === 'refresh_token') body = await exchangeRefreshToken(ctx, form);
      else if (!form.grant_type) throw new InvalidRequest('grant_type is required');
      else throw new UnsupportedGrantType(`grant_type ${form.grant_type} is not supported (authorization_code, refresh_token)`);
      ctx.set('Cache-Control', 'no-store');
      ctx.set('Pragma', 'no-cache');
      ctx.body = body;
    },
  );
}

async function exchangeCode(ctx: Ctx, form: OAuthForm): Promise<TokenResponse> {
  const { db, tokens } = ctx.deps;
  const now = ctx.deps.now();
  if (!form.code) throw new InvalidRequest('code is required');
  const client = await authenticateClient(ctx, clientCredentials(ctx, form));
  const code = await findAuthorizationCode(db, form.code);
  if (!code) throw new InvalidGrant('The authorization code is invalid');
  if (code.used_at) return refuseReplay(ctx, code.grant_id);
  if (code.application_id !== client.app.id) throw new InvalidGrant('The authorization code was issued to another client');
  if (code.expires_at <= now) throw new InvalidGrant('The authorization code has expired');
  // API.md: redirect_uri is optional in the exchange (existing clients omit it); when present it must match.
  if (form.redirect_uri !== undefined && form.redirect_uri !== code.redirect_uri) {
    throw new InvalidGrant('redirect_uri does not match the authorization request');
  }
  if (code.code_challenge) {
    if (!form.code_verifier) throw new InvalidGrant('code_verifier is required (the authorization request used PKCE)');
    if (!VERIFIER.test(form.code_verifier)) throw new InvalidGrant('code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~');
    const challenge = createHash('sha256').update(form.code_verifier).digest('base64url');
    if (!constantTimeEqual(challenge, code.code_challenge)) throw new InvalidGrant('code_verifier does not match the code_challenge');
  } else {
    if (form.code_verifier) throw new InvalidGrant('code_verifier was given but the authorization request had no code_challenge');
    if (!client.confidential) throw new InvalidClient('Client authentication is required: a client secret, or PKCE');
  }

  const scopes = code.scopes as ScopeName[];
  const issued = await db.transaction().execute(async (tx) => {
    // The row lock makes concurrent exchanges wait: exactly one wins, the others see a used code.
    if (!(await claimAuthorizationCode(tx, code.code_hash, now))) return undefined;
    const made = await createGrant(tx, {
      user_id: code.user_id,
      application_id: code.application_id,
      scopes,
      withRefreshToken: scopes.includes('offline_access'),
    });
    await linkCodeToGrant(tx, code.code_hash, made.grant.id);
    return made;
  });
  // Another exchange won the row lock; its grant is committed by now.
  if (!issued) return refuseReplay(ctx, (await findAuthorizationCode(db, form.code))?.grant_id ?? null);
  const response = await tokenResponse(tokens, issued.grant, issued.refreshToken);
  if (!scopes.includes('openid')) return response;
  const user = await findUserById(db, code.user_id);
  if (!user) throw new InvalidGrant('The user no longer exists');
  const idToken = await mintIdToken(tokens, {
    sub: user.id,
    aud: code.application_id,
    nonce: code.nonce,
    ...(scopes.includes('profile')
      ? { profile: { name: `${user.first_name} ${user.last_name}`, given_name: user.first_name, family_name: user.last_name, email: user.email } }
      : {}),
  });
  return { ...response, id_token: idToken };
}

/** RFC 6749 §4.1.2: a code presented twice may have leaked, so what it issued is revoked. */
async function refuseReplay(ctx: Ctx, grantId: string | null): Promise<never> {
  if (grantId) await deleteGrant(ctx.deps.db, grantId);
  throw new InvalidGrant('The authorization code has already been used; the tokens issued from it are revoked');
}

async function exchangeRefreshToken(ctx: Ctx, form: OAuthForm): Promise<TokenResponse> {
  const { db, tokens } = ctx.deps;
  if (!form.refresh_token) throw new InvalidRequest('refresh_token is required');
  const creds = clientCredentials(ctx, form);
  const client = creds.clientId ? await authenticateClient(ctx, creds) : undefined;
  const grant = await findGrantByRefreshToken(db, form.refresh_token);
  if (!grant) throw new InvalidGrant('The refresh token is invalid or has been revoked');
  if (grant.application_id === null) {
    if (client) throw new InvalidGrant('The refresh token was issued to another client');
  } else {
    if (!client) throw new InvalidRequest('client_id is required');
    if (client.app.id !== grant.application_id) throw new InvalidGrant('The refresh token was issued to another client');
  }
  let scopes = grant.scopes as ScopeName[];
  if (form.scope !== undefined) {
    const asked = parseScopes(form.scope);
    const extra = [...asked.unknown, ...asked.scopes.filter((s) => !scopes.includes(s))];
    if (extra.length) throw new InvalidScope(`Not granted: ${extra.join(' ')}`);
    if (!asked.scopes.length) throw new InvalidScope('scope is empty');
    scopes = asked.scopes;
  }
  await touchGrant(db, grant.id, ctx.deps.now());
  const response = await tokenResponse(tokens, { ...grant, scopes });
  // Not rotated (API.md): existing clients keep using the refresh token they have.
  return { ...response, refresh_token: form.refresh_token };
}

export const tokenRoutes = [tokenRoute('/api/v1/oauth/token', 'token'), tokenRoute('/oauth/token', 'token_root')];

