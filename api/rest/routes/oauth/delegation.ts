import { z } from 'zod';
import { defineRoute, type Route } from '../../../http/route.ts';
import { DelegatedTokenRequest } from '../../../services/coaching/model.ts';
import { issueDelegatedToken, issuePrincipalToken } from '../../../services/coaching/delegation.ts';

/** Acting for another user, and back (docs/coaching.md, "Delegation"). */

const DelegatedToken = z
  .object({
    access_token: z.string().describe('RS256 JWT: `sub` the user acted as, `act.sub` you (RFC 8693), `scopes` what it may do'),
    token_type: z.literal('Bearer'),
    expires_in: z.number().int(),
    refresh_token: z
      .string()
      .nullable()
      .describe(
        'Only when your own grant has `offline_access` (never for a web session); refreshed at the token endpoint by the same client',
      ),
    scope: z.string().describe('The scopes granted, space-delimited: those asked ∩ your token’s ∩ what the user allows'),
    sub: z.uuid(),
    team_id: z.uuid().nullable().describe('The team it goes through; null for your managed user'),
  })
  .meta({ id: 'DelegatedTokenResponse' });

export const delegatedTokenRoute = defineRoute(
  {
    method: 'post',
    path: '/api/v1/oauth/delegated-token',
    operationId: 'delegated_token',
    summary: 'A token to act as your managed user, or as an athlete who authorised a team of yours',
    description:
      'With your own token (a delegated one is 403). `sub`: one of your managed users, or an athlete who authorised a team ' +
      'you belong to (`team_id` names the team; without it, your managed user, else the team of yours that grants the ' +
      'most). Anyone else is 403 with the same answer whether or not the user exists. The scopes are those asked (all ' +
      'when left out) ∩ your token’s ∩ what the user allows: a managed user data:read, data:write and profile; an ' +
      'athlete what they granted the team, and scopes beyond it are dropped, not refused (`scope` says what was granted). ' +
      'The token fails from the next request once the athlete withdraws the team’s access, you leave the team or the ' +
      'managed user is deleted; what you write with it is the athlete’s.',
    tags: ['oauth'],
    auth: { scopes: [] },
    body: DelegatedTokenRequest,
    responses: {
      200: { description: 'The delegated token', schema: DelegatedToken },
      403: { description: 'Not a user you may act as, or a delegated token used to ask' },
    },
  },
  async (ctx, { body }) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await issueDelegatedToken(ctx.deps, ctx.state.principal!, body);
  },
);

export const principalTokenRoute = defineRoute(
  {
    method: 'get',
    path: '/api/v1/oauth/principal-token',
    operationId: 'principal_token',
    summary: 'Your own token back, from a delegated one (or a fresh one of your own)',
    description:
      'With a delegated token: a new access token of the credential the delegation was made under (your grant or web ' +
      'session), as `sub` yourself. With any other token: a new access token of the same credential. `refresh_token` is ' +
      'null: the one you hold keeps working.',
    tags: ['oauth'],
    auth: { scopes: [] },
    responses: {
      200: {
        description: 'Your token',
        schema: z
          .object({
            access_token: z.string(),
            token_type: z.literal('Bearer'),
            expires_in: z.number().int(),
            refresh_token: z.null(),
            scope: z.string(),
            sub: z.uuid(),
          })
          .meta({ id: 'PrincipalTokenResponse' }),
      },
    },
  },
  async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await issuePrincipalToken(ctx.deps, ctx.state.principal!);
  },
);

export const delegationRoutes: Route[] = [delegatedTokenRoute, principalTokenRoute];
