import { DEPRECATED_SINCE } from '../activities/deprecation.ts';
import { z } from 'zod';
import type { Ctx } from '../../http/context.ts';
import type { Config } from '../../../lib/config.ts';
import { defineRoute, type Route } from '../../http/route.ts';

const Jwks = z
  .object({
    keys: z.array(
      z.object({ kty: z.literal('RSA'), kid: z.string(), n: z.string(), e: z.string(), alg: z.literal('RS256'), use: z.literal('sig') }),
    ),
  })
  .meta({ id: 'JWKS' });

const AuthorizationServerMetadata = z
  .object({
    issuer: z.string(),
    authorization_endpoint: z.string(),
    token_endpoint: z.string(),
    jwks_uri: z.string(),
    revocation_endpoint: z.string(),
    authorization_response_iss_parameter_supported: z.boolean().describe('RFC 9207: the authorization response carries `iss`'),
    response_types_supported: z.array(z.string()),
    grant_types_supported: z.array(z.string()),
    scopes_supported: z.array(z.string()),
    token_endpoint_auth_methods_supported: z.array(z.string()),
    revocation_endpoint_auth_methods_supported: z.array(z.string()),
    code_challenge_methods_supported: z.array(z.string()),
    registration_endpoint: z.string(),
    service_documentation: z.string(),
  })
  .meta({ id: 'AuthorizationServerMetadata', description: 'RFC 8414 metadata' });

const OpenIdConfiguration = z
  .object({
    issuer: z.string(),
    authorization_endpoint: z.string(),
    token_endpoint: z.string(),
    userinfo_endpoint: z.string(),
    jwks_uri: z.string(),
    revocation_endpoint: z.string(),
    authorization_response_iss_parameter_supported: z.boolean().describe('RFC 9207: the authorization response carries `iss`'),
    response_types_supported: z.array(z.string()),
    subject_types_supported: z.array(z.string()),
    id_token_signing_alg_values_supported: z.array(z.string()),
    scopes_supported: z.array(z.string()),
    claims_supported: z.array(z.string()),
    token_endpoint_auth_methods_supported: z.array(z.string()),
    code_challenge_methods_supported: z.array(z.string()),
    grant_types_supported: z.array(z.string()),
    prompt_values_supported: z.array(z.string()),
  })
  .meta({ id: 'OpenIdConfiguration', description: 'OpenID Connect Discovery 1.0 metadata' });

const AUTH_METHODS = ['none', 'client_secret_post', 'client_secret_basic'];

function endpoints(config: Config) {
  const base = config.BASE_URL;
  return {
    issuer: base,
    authorization_endpoint: `${base}/oauth/authorize`,
    token_endpoint: `${base}/api/v1/oauth/token`,
    jwks_uri: `${base}/.well-known/jwks.json`,
    revocation_endpoint: `${base}/api/v1/oauth/revoke`,
    authorization_response_iss_parameter_supported: true,
  };
}

export function openIdConfiguration(config: Config): z.infer<typeof OpenIdConfiguration> {
  return {
    ...endpoints(config),
    userinfo_endpoint: `${config.BASE_URL}/api/v1/oauth/userinfo`,
    response_types_supported: ['code'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['RS256'],
    scopes_supported: ['openid', 'profile', 'data:read', 'data:write', 'offline_access'],
    claims_supported: ['sub', 'exp', 'name', 'given_name', 'family_name'],
    token_endpoint_auth_methods_supported: AUTH_METHODS,
    code_challenge_methods_supported: ['S256'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    prompt_values_supported: ['none', 'login', 'consent'],
  };
}

export function authorizationServerMetadata(config: Config): z.infer<typeof AuthorizationServerMetadata> {
  return {
    ...endpoints(config),
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    scopes_supported: ['profile', 'data:read', 'data:write', 'offline_access'],
    token_endpoint_auth_methods_supported: AUTH_METHODS,
    revocation_endpoint_auth_methods_supported: AUTH_METHODS,
    code_challenge_methods_supported: ['S256'],
    registration_endpoint: `${config.BASE_URL}/api/v1/applications`,
    service_documentation: `${config.BASE_URL}/docs`,
  };
}

/** RFC 9745: the date the /api/v1/.well-known/ paths were deprecated (2026-01-01T00:00:00Z). */

function document(
  name: string,
  relative: string,
  summary: string,
  schema: z.ZodType,
  body: (ctx: Ctx) => unknown | Promise<unknown>,
  cache: string,
): Route[] {
  const current = defineRoute(
    {
      method: 'get',
      path: `/.well-known/${relative}`,
      operationId: name,
      summary,
      tags: ['oauth'],
      auth: 'none',
      responses: { 200: { description: summary, schema } },
    },
    async (ctx) => {
      ctx.set('Cache-Control', cache);
      ctx.body = await body(ctx);
    },
  );
  const old = defineRoute(
    {
      method: 'get',
      path: `/api/v1/.well-known/${relative}`,
      operationId: `${name}_deprecated`,
      summary: `${summary} (deprecated path)`,
      description: `Deprecated: use \`/.well-known/${relative}\`. Answers the same, with \`Deprecation\` and \`Link: rel="successor-version"\` headers.`,
      tags: ['oauth'],
      auth: 'none',
      deprecated: true,
      responses: { 200: { description: summary, schema, headers: { Deprecation: 'RFC 9745 deprecation date', Link: 'The current path' } } },
    },
    async (ctx) => {
      ctx.set('Deprecation', DEPRECATED_SINCE);
      ctx.set('Link', `<${ctx.deps.config.BASE_URL}/.well-known/${relative}>; rel="successor-version"`);
      ctx.set('Cache-Control', cache);
      ctx.body = await body(ctx);
    },
  );
  return [current, old];
}

export const wellknownRoutes: Route[] = [
  ...document(
    'openid_configuration',
    'openid-configuration',
    'OpenID Connect discovery document',
    OpenIdConfiguration,
    (ctx) => openIdConfiguration(ctx.deps.config),
    'public, max-age=3600',
  ),
  ...document(
    'oauth_authorization_server',
    'oauth-authorization-server',
    'OAuth 2.0 authorization server metadata (RFC 8414)',
    AuthorizationServerMetadata,
    (ctx) => authorizationServerMetadata(ctx.deps.config),
    'public, max-age=3600',
  ),
  ...document('jwks', 'jwks.json', 'Public keys that verify access tokens', Jwks, (ctx) => ctx.deps.keys.jwks(), 'public, max-age=300'),
];
