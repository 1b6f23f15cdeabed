import type { Mw } from '../context.ts';

/**
 * Every answer to a request that carries a credential (a bearer token, a cookie: the session's) depends
 * on who asks, errors included (another user's resource is a 404 only to them): when the route set
 * no `Cache-Control` of its own, it gets `private, no-cache` if it has a validator (an ETag: a cache
 * may keep it for this user and must revalidate it) and `no-store` otherwise (pages and downloads
 * that hold account data: a browser's back button after sign-out, or a shared cache in front, must
 * not show them). Outside the error handler, so that it sees the answer as sent.
 */
export const privateCaching: Mw = async function privateCaching(ctx, next) {
  try {
    await next();
  } finally {
    if (!ctx.response.get('Cache-Control') && (ctx.get('authorization') || ctx.get('cookie') || ctx.state.principal)) {
      ctx.set('Cache-Control', ctx.response.get('ETag') ? 'private, no-cache' : 'no-store');
    }
  }
};
