import type { Mw } from '../context.ts';

/**
 * Baseline headers on every response; HTML pages get a strict Content-Security-Policy: scripts, styles
 * and fetches from our own origin only (the pages' scripts call the public API with the session cookie).
 */
export const securityHeaders: Mw = async function securityHeaders(ctx, next) {
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'same-origin');
  ctx.set('X-Frame-Options', 'DENY');
  await next();
  if (ctx.response.is('html') && !ctx.response.get('content-security-policy')) {
    ctx.set(
      'Content-Security-Policy',
      "default-src 'none'; style-src 'self'; img-src 'self' https: data:; script-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
  }
};
