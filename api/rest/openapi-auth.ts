import type { AuthRequirement } from '../http/authenticate.ts';
import { SCOPE_DESCRIPTIONS, type Scope } from '../services/auth/scopes.ts';
import type { RouteSpec } from '../http/route.ts';

/**
 * The OpenAPI document's authentication parts (api/rest/openapi.ts): the oauth2 scheme, each operation's
 * security requirements, the `refreshed-token` response header, and the declared tags.
 */

/** The scopes an application may ask for (`admin` is reserved, never granted through OAuth). */
const OAUTH_SCOPES: Scope[] = ['data:read', 'data:write', 'profile', 'offline_access', 'openid'];

export function oauth2Scheme(baseUrl: string) {
  return {
    type: 'oauth2',
    description:
      'The authorization code flow with PKCE (S256), or a client secret for confidential clients. Access tokens last 15 minutes; ' +
      "`offline_access` adds a refresh token. In this page's Authorize dialog, the built-in client `api-docs` needs no secret; it always shows the " +
      "consent screen, accepts only this page's own redirect URI and gets no refresh token (`offline_access` is left out of what it is granted).",
    flows: {
      authorizationCode: {
        authorizationUrl: `${baseUrl}/oauth/authorize`,
        tokenUrl: `${baseUrl}/api/v1/oauth/token`,
        refreshUrl: `${baseUrl}/api/v1/oauth/token`,
        scopes: Object.fromEntries(OAUTH_SCOPES.map((s) => [s, SCOPE_DESCRIPTIONS[s]])),
      },
    },
  };
}

/**
 * Who may call an operation: a bearer token (an application's or a personal one), an application's
 * token obtained through the oauth2 flow, or the web session's cookie. First-party operations
 * (application management) refuse application tokens; app-only ones (app metadata) refuse the others.
 */
export function operationSecurity(auth: AuthRequirement): Record<string, string[]>[] {
  if (auth === 'none') return [];
  const scopes = [...auth.scopes];
  return [{ bearer: scopes }, ...(auth.firstParty ? [] : [{ oauth2: scopes }]), ...(auth.appOnly ? [] : [{ cookie: scopes }])];
}

export const REFRESHED_TOKEN_HEADER = 'refreshed-token';

/** The web session's refreshed access token: on the answers of every operation the cookie may authenticate. */
export const sessionHeaders = {
  component: {
    description:
      "Present when the request was authenticated by the web session's cookie `token` and its access token had expired: the new access " +
      'token (also set in the cookie). Error answers never carry it.',
    schema: { type: 'string' },
  },
  ref: { $ref: `#/components/headers/${REFRESHED_TOKEN_HEADER}` },
  appliesTo(spec: RouteSpec): boolean {
    return spec.auth !== 'none' && !spec.auth.appOnly && !spec.security;
  },
};

export const TAGS = [
  {
    name: 'activities',
    description: 'Recorded sessions: upload, history import, sources, reads, time series and curves (Parquet or JSON)',
  },
  { name: 'traces', description: 'Single timestamped measurements (lactate, power, heart rate, RPE, notes…)' },
  { name: 'tests', description: 'Lab and field tests (lactate steps, ramps, critical-power efforts): their window, results and traces' },
  { name: 'dailies', description: 'One value per calendar day for a named measure (body mass, resting heart rate, HRV…)' },
  { name: 'profile', description: "Tags, sports, template week, intensity-duration model and the profile's app metadata" },
  {
    name: 'users',
    description: 'Yourself, your managed users (accounts without a login you manage) and the athletes who shared with a team of yours',
  },
  { name: 'teams', description: 'Teams of coaches, their invitations, and the athletes’ authorisations of them' },
  { name: 'applications', description: 'OAuth applications of the signed-in user (first-party credentials only)' },
  { name: 'oauth', description: 'The OAuth 2.0 authorization server: authorization, tokens, revocation, userinfo, discovery, JWKS' },
  { name: 'operations', description: 'Health and readiness probes' },
  { name: 'webhooks', description: "What an application's webhook endpoints receive" },
];
