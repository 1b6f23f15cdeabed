import type { Mw, Ctx } from '../context.ts';
import { DependencyUnavailable, HttpError, InsufficientStorage, isDiskFull, PayloadTooLarge } from '../../services/errors.ts';
import { isOutage } from '../../../lib/outage.ts';
import { describeMissing, isObjectMissing } from '../../../lib/object-store.ts';
import { OAuthError } from '../../services/oauth/errors.ts';
import { loggedPath } from './request-context.ts';

/** The HTML page of an error for a browser (api/web/error-page.ts), given to the handler by the app: middleware renders no page itself. */
export type ErrorPageRenderer = (ctx: Ctx, status: number, detail: string, dependencyDown: boolean) => Promise<string>;

/**
 * The only place errors become responses. HttpErrors (status < 500) show their detail; anything
 * else is logged with its stack and answered with a bare 500: no stack trace or message leaks.
 * Errors raised by the body parser (malformed JSON, too large, a body that is not what its
 * Content-Encoding says: 400, an unsupported encoding: 415) are mapped to our statuses. An error
 * that means PostgreSQL or Redis is unreachable (lib/outage.ts) is a 503 with Retry-After: the
 * client retries, /readyz says which dependency is down. A full disk is a 507, logged as an error.
 * An object missing from the object store (removed outside the service) is a 409 naming the activity.
 */
export const errorHandler = (renderPage: ErrorPageRenderer): Mw =>
  async function errorHandler(ctx, next) {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw new HttpError(404, 'Not Found');
      if (ctx.status === 405 && ctx.body === undefined) throw new HttpError(405, 'Method Not Allowed');
    } catch (err) {
      let httpError = toHttpError(err);
      const where = { request_id: ctx.state.requestId, method: ctx.method, path: loggedPath(ctx.path) };
      if (!httpError && isOutage(err)) {
        ctx.deps.log.warn('dependency unavailable', { ...where, err: (err as Error).message });
        httpError = new DependencyUnavailable();
      }
      if (!httpError && isObjectMissing(err)) {
        // A file removed behind the service's back: said as such, not a crash.
        ctx.deps.log.error('an object is missing from the object store', { ...where, key: err.key });
        httpError = new HttpError(409, describeMissing(err.key));
      }
      if (!httpError && isDiskFull(err)) {
        ctx.deps.log.error('disk full', { ...where, err: (err as Error).message });
        httpError = new InsufficientStorage();
      }
      if (!httpError) ctx.deps.log.error('unhandled error', { ...where, err });
      const error = httpError ?? new HttpError(500, 'Internal Server Error');
      await respond(ctx, error, renderPage);
    }
  };

async function respond(ctx: Ctx, error: HttpError, renderPage: ErrorPageRenderer) {
  // Headers set by earlier middleware (cookies, refreshed-token) would be wrong on an error; CORS's
  // stay, so that a browser app on another origin can read the error (middleware/cors.ts).
  const keep = [
    'x-request-id',
    'allow',
    'content-security-policy',
    'x-content-type-options',
    'referrer-policy',
    'x-frame-options',
    'vary',
    'access-control-allow-origin',
    'access-control-expose-headers',
  ];
  for (const name of Object.keys(ctx.response.headers)) if (!keep.includes(name)) ctx.remove(name);
  ctx.status = error.status;
  ctx.set(error.headers);
  const wantsHtml = !ctx.path.startsWith('/api/') && ctx.accepts('json', 'html') === 'html';
  if (error instanceof OAuthError) {
    ctx.body = error.body;
  } else if (wantsHtml) {
    ctx.type = 'html';
    ctx.body = await renderPage(
      ctx,
      error.status,
      typeof error.detail === 'string' ? error.detail : 'The request is not valid.',
      error instanceof DependencyUnavailable || error.status >= 500,
    );
  } else {
    ctx.body = { detail: error.detail };
  }
}

/** zlib's codes for a body that is not what its Content-Encoding says (koa-body inflates gzip, deflate and br). */
const ZLIB_INVALID = /^(Z_DATA_ERROR|Z_BUF_ERROR|Z_STREAM_ERROR|Z_NEED_DICT|ERR__ERROR_)/;

function toHttpError(err: unknown): HttpError | undefined {
  if (err instanceof HttpError) return err;
  const e = err as { status?: number; statusCode?: number; type?: string; expose?: boolean; message?: string; code?: string };
  if (typeof e?.code === 'string' && ZLIB_INVALID.test(e.code)) {
    // (our words: zlib's own, "incorrect header check" and the like, mean nothing to a client)
    return new HttpError(
      400,
      'The body does not decode as its Content-Encoding says: it is not gzip, deflate or br data as sent, or it was cut short',
    );
  }
  if (e?.status === 415 && /Content-Encoding/i.test(e.message ?? '')) {
    return new HttpError(415, `${e.message}; supported: gzip, deflate, br, identity`);
  }
  const status = e?.status ?? e?.statusCode;
  if (typeof status !== 'number' || status >= 500) return undefined;
  if (e.type === 'entity.parse.failed' || (status === 400 && /JSON|Unexpected token/i.test(e.message ?? ''))) {
    return new HttpError(422, [{ loc: ['body'], msg: 'The body is not valid JSON', type: 'json_invalid' }]);
  }
  if (status === 413) return new PayloadTooLarge();
  if (status === 415) return new HttpError(415, 'Unsupported media type');
  return new HttpError(status, e.expose && e.message ? e.message : httpReason(status));
}

function httpReason(status: number): string {
  return (
    { 400: 'Bad Request', 401: 'Not authenticated', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed' }[status] ??
    'Request failed'
  );
}
