import { z } from 'zod';
import { defineRoute } from '../route.ts';

const Jwks = z
  .object({ keys: z.array(z.object({ kty: z.literal('RSA'), kid: z.string(), n: z.string(), e: z.string(), alg: z.literal('RS256'), use: z.literal('sig') })) })
  .meta({ id: 'JWKS' });

export const jwks = defineRoute(
  {
    method: 'get',
    path: '/.well-known/jwks.json',
    operationId: 'jwks',
    summary: 'Public keys that verify access tokens',
    description: 'The active key and any retired key whose tokens may still be valid (rotation keeps old tokens verifiable until they expire).',
    tags: ['oauth'],
    auth: 'none',
    responses: { 200: { description: 'A JSON Web Key Set', schema: Jwks } },
  },
  async (ctx) => {
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = await ctx.deps.keys.jwks();
  },
);

export const wellknownRoutes = [jwks];
