import { z } from 'zod';
import type { Ctx } from '../../../http/context.ts';
import { defineRoute } from '../../../http/route.ts';
import { authenticateClient, clientCredentials, readOAuthForm } from '../../oauth/client-auth.ts';
import { InvalidClient, InvalidRequest, OAuthErrorBody } from '../../../services/oauth/errors.ts';
import { InvalidTokenError, verifyAccessToken } from '../../../services/auth/tokens.ts';
import { deleteGrant, findGrant, findGrantByRefreshToken } from '../../../../db/grants.ts';
import type { Grant } from '../../../../db/database.ts';
import { deleteDelegation, findDelegation, findDelegationByRefreshToken } from '../../../../db/delegations.ts';

const RevokeForm = z
  .object({
    token: z.string().describe('A refresh token or an access token'),
    token_type_hint: z.enum(['refresh_token', 'access_token']).optional(),
    client_id: z.string().optional().describe('The application id; omit for a personal token'),
    client_secret: z.string().optional(),
  })
  .meta({ id: 'RevocationRequest' });

function revokeRoute(path: string, operationId: string) {
  return defineRoute(
    {
      method: 'post',
      path,
      operationId,
      summary: 'Revoke a refresh token or an access token (RFC 7009)',
      description:
        'Revoking either token revokes the grant it belongs to: its refresh token and every access token issued from it ' +
        "stop working at once (a delegated token's, its delegation). The client authenticates as at the token endpoint (a public client sends `client_id`; a " +
        'token of a grant whose code was exchanged with the client secret needs the secret, else 401 `invalid_client`; a ' +
        'personal token is revoked without one). Unknown tokens, and tokens of another client, answer 200 as well and are ' +
        'left alone (RFC 7009 §2.2).',
      tags: ['oauth'],
      auth: 'none',
      oauthForm: RevokeForm,
      security: [{}, { basic: [] }],
      responses: {
        200: { description: 'Revoked, or nothing to revoke' },
        400: { description: 'invalid_request', schema: OAuthErrorBody },
        401: { description: 'invalid_client', schema: OAuthErrorBody },
      },
    },
    async (ctx) => {
      const form = readOAuthForm(ctx);
      if (!form.token) throw new InvalidRequest('token is required');
      const creds = clientCredentials(ctx, form);
      const client = creds.clientId ? await authenticateClient(ctx, creds) : undefined;
      const grant = await grantOf(ctx, form.token, form.token_type_hint);
      const mine = grant !== undefined && grant.application_id === (client?.app.id ?? null);
      // RFC 7009 §2.1: a grant made with the client secret is revoked by the client authenticated with it.
      if (mine && grant.client_authenticated && !client?.confidential) {
        throw new InvalidClient(
          'This token was issued to the application authenticated with its client secret: authenticate with it to revoke it',
        );
      }
      if (mine) await deleteGrant(ctx.deps.db, grant.id);
      if (!grant) await revokeDelegation(ctx, form.token, client);
      ctx.set('Cache-Control', 'no-store');
      ctx.status = 200;
      ctx.body = '';
    },
  );
}

/**
 * A delegated token's refresh or access token (docs/coaching.md) ends its delegation, when the client
 * is the one the delegation's grant belongs to (with its secret when that grant was made with it).
 */
async function revokeDelegation(
  ctx: Ctx,
  token: string,
  client: Awaited<ReturnType<typeof authenticateClient>> | undefined,
): Promise<void> {
  const { db, tokens } = ctx.deps;
  let delegation = await findDelegationByRefreshToken(db, token);
  if (!delegation) {
    const claims = await verifyAccessToken(tokens, token).catch((err: unknown) => {
      if (err instanceof InvalidTokenError) return undefined;
      throw err;
    });
    const found = claims?.did ? await findDelegation(db, claims.did) : undefined;
    delegation = found && found.user_id === claims?.sub ? found : undefined;
  }
  if (!delegation || delegation.application_id !== (client?.app.id ?? null)) return;
  const grant = delegation.grant_id ? await findGrant(db, delegation.grant_id) : undefined;
  if (grant?.client_authenticated && !client?.confidential)
    throw new InvalidClient(
      'This token was issued to the application authenticated with its client secret: authenticate with it to revoke it',
    );
  await deleteDelegation(db, delegation.id);
}

/** The grant a token belongs to, whichever kind it is (the hint only orders the look-ups). */
async function grantOf(ctx: Ctx, token: string, hint: string | undefined): Promise<Grant | undefined> {
  const asRefresh = () => findGrantByRefreshToken(ctx.deps.db, token);
  const asAccess = async () => {
    try {
      const claims = await verifyAccessToken(ctx.deps.tokens, token);
      const grant = claims.gid ? await findGrant(ctx.deps.db, claims.gid) : undefined;
      return grant && grant.user_id === claims.sub ? grant : undefined;
    } catch (err) {
      if (err instanceof InvalidTokenError) return undefined;
      throw err;
    }
  };
  const order = hint === 'access_token' ? [asAccess, asRefresh] : [asRefresh, asAccess];
  for (const lookUp of order) {
    const grant = await lookUp();
    if (grant) return grant;
  }
  return undefined;
}

export const revokeRoutes = [revokeRoute('/api/v1/oauth/revoke', 'revoke'), revokeRoute('/oauth/revoke', 'revoke_root')];
