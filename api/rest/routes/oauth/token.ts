import { z } from 'zod';
import { defineRoute } from '../../../http/route.ts';
import type { Ctx } from '../../../http/context.ts';
import { authenticateClientIfNamed, readOAuthForm } from '../../oauth/client-auth.ts';
import { OAuthError, OAuthErrorBody, SlowDown } from '../../../services/oauth/errors.ts';
import { failureHeaders, failureStanding, recordFailure } from '../../../http/failure-limit.ts';
import { TokenResponse } from '../../../services/oauth/issue.ts';
import { checkGrantType } from '../../oauth/supported-grants.ts';

const TokenForm = z
  .object({
    grant_type: z.enum(['authorization_code', 'refresh_token']),
    code: z.string().optional().describe('authorization_code: the code from the redirect'),
    redirect_uri: z.string().optional().describe('authorization_code: when present, must equal the one the code was issued for'),
    code_verifier: z.string().min(43).max(128).optional().describe('authorization_code with PKCE: the verifier (43–128 characters)'),
    refresh_token: z.string().optional().describe('refresh_token: the refresh token'),
    scope: z.string().optional().describe('refresh_token: narrow the new access token to these of the granted scopes'),
    client_id: z.string().optional().describe('The application id (omit only when refreshing a personal token)'),
    client_secret: z
      .string()
      .optional()
      .describe(
        'client_secret_post; an empty value counts as absent. Required (here or by Basic) for a code without PKCE, and to refresh a grant whose code was exchanged with the secret',
      ),
  })
  .meta({ id: 'TokenRequest' });

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
        '`client_secret_basic`. A code with PKCE needs no secret (SPEC); one without takes the secret. A grant whose code was exchanged with ' +
        'the secret refreshes only with the secret (401 `invalid_client` without): a stolen refresh token is worthless without it. Codes are single-use and expire after 60 s; presenting a used code fails and revokes the ' +
        'tokens issued from it. Refresh tokens do not expire and are not rotated: the response repeats the one presented. ' +
        "A personal token's refresh token is exchanged without `client_id`. Errors are RFC 6749 bodies; every response " +
        'carries `Cache-Control: no-store`. Refused requests (400, 401) are counted per client address: past AUTH_FAILURE_LIMIT in ' +
        'AUTH_FAILURE_WINDOW_SECONDS (default 60 per 60 s) the address gets 429 `slow_down` until the window ends; successes never count, ' +
        'and answers carry `RateLimit-Policy`, `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` of that budget.',
      tags: ['oauth'],
      auth: 'none',
      oauthForm: TokenForm,
      security: [{}, { basic: [] }],
      responses: {
        200: { description: 'Tokens', schema: TokenResponse },
        400: { description: 'invalid_request, invalid_grant, invalid_scope or unsupported_grant_type', schema: OAuthErrorBody },
        401: { description: 'invalid_client (with `WWW-Authenticate: Basic`)', schema: OAuthErrorBody },
        429: {
          description:
            '`slow_down`: too many refused requests (400, 401) from this address (AUTH_FAILURE_LIMIT per AUTH_FAILURE_WINDOW_SECONDS; an IPv6 client is its /64); `Retry-After` and `RateLimit-*` say when',
          schema: OAuthErrorBody,
        },
      },
    },
    // The grant type and the grant's own parameters are checked before the client is authenticated.
    async function issueTokens(ctx) {
      noStore(ctx);
      // Refused requests are counted per client address (api/http/failure-limit.ts); past the budget, every request from it waits.
      const standing = await failureStanding(ctx);
      if (standing && standing.count >= ctx.deps.config.AUTH_FAILURE_LIMIT) {
        throw new SlowDown(
          `Too many refused token requests from this address; try again in ${Math.max(1, standing.reset)} s`,
          standing.reset,
          failureHeaders(ctx.deps, standing),
        );
      }
      try {
        const form = readOAuthForm(ctx);
        const runGrant = checkGrantType(form);
        const client = await authenticateClientIfNamed(ctx, form);
        ctx.body = await runGrant(ctx, client);
        if (standing) ctx.set(failureHeaders(ctx.deps, standing));
      } catch (err) {
        if (err instanceof OAuthError && (err.status === 400 || err.status === 401)) {
          const after = await recordFailure(ctx);
          if (after) Object.assign(err.headers, failureHeaders(ctx.deps, after));
        }
        throw err;
      }
    },
  );
}

/** RFC 6749 §5.1: a token response is not to be cached (OAuthError sets the same headers on errors). */
function noStore(ctx: Ctx): void {
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Pragma', 'no-cache');
}

export const tokenRoutes = [tokenRoute('/api/v1/oauth/token', 'token'), tokenRoute('/oauth/token', 'token_root')];
