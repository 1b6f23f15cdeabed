import koaCors from '@koa/cors';
import type { Mw } from '../context.ts';

/**
 * Where a page on another origin may call us: the token-authenticated API (`/api/v1/…`, with the
 * token, revocation and userinfo endpoints), their `/oauth/token` and `/oauth/revoke` aliases, discovery
 * and the JWKS (`/.well-known/…`), and the OpenAPI document. Everything else — the cookie-based web
 * pages and forms, `/oauth/authorize` and its consent form — stays same-origin: no CORS headers.
 */
const CORS_PREFIXES = ['/api/v1/', '/.well-known/'];
const CORS_PATHS = new Set(['/api/v1', '/oauth/token', '/oauth/revoke', '/openapi.json']);

export function isCorsPath(path: string): boolean {
  return CORS_PATHS.has(path) || CORS_PREFIXES.some((prefix) => path.startsWith(prefix));
}

/** Request headers a browser app may send (beyond the CORS-safelisted ones). */
export const CORS_ALLOW_HEADERS = [
  'Authorization',
  'Content-Type',
  'Content-Encoding',
  'Accept',
  'If-None-Match',
  'If-Modified-Since',
  'X-Request-Id',
];

/** Response headers a browser app may read (beyond the CORS-safelisted ones). */
export const CORS_EXPOSE_HEADERS = [
  'refreshed-token',
  'ETag',
  'Link',
  'Location',
  'Retry-After',
  'RateLimit-Policy',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'Content-Disposition',
  'WWW-Authenticate',
  'Deprecation',
  'X-Request-Id',
];

/** How long a browser may reuse a preflight's answer: 2 hours (Chromium's ceiling). */
export const CORS_MAX_AGE_SECONDS = 7200;

/**
 * Any origin, never with credentials: `Access-Control-Allow-Origin: *` on every request that carries
 * an Origin (with `Vary: Origin`), and `Access-Control-Allow-Credentials` is never sent. The API is
 * token-authenticated; the first-party session cookie must not work from another origin. A
 * cross-origin fetch with `credentials: 'include'` (which would carry the cookie, SameSite=Lax
 * allowing it between ports of one host) gets no readable answer, since `*` without
 * Allow-Credentials fails the browser's check; a write it makes with the cookie is refused by the
 * Origin check (`api/http/origin-check.ts`) before anything happens.
 *
 * Registered before the error handler, which keeps these headers on error answers (a 401, 429 or 5xx
 * must stay readable by the browser app). Preflights (OPTIONS with Access-Control-Request-Method) are
 * answered here with 204, before authentication, rate limiting or routing.
 */
export function corsForApi(): Mw {
  const cors = koaCors({
    origin: (ctx) => (ctx.get('Origin') ? '*' : ''),
    credentials: false,
    allowMethods: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'],
    allowHeaders: CORS_ALLOW_HEADERS,
    exposeHeaders: CORS_EXPOSE_HEADERS,
    maxAge: CORS_MAX_AGE_SECONDS,
  }) as Mw;
  return async function corsForApi(ctx, next) {
    if (!isCorsPath(ctx.path)) return next();
    return cors(ctx, next);
  };
}
