import { randomUUID } from 'node:crypto';
import type { Mw } from '../context.ts';

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Gives every request an id (the client's `x-request-id` when it is a safe token, else a new
 * UUID), echoes it on the response, and writes one JSON log line when the response is finished:
 * method, path, status, duration and request id; a request whose connection closed before its
 * answer was complete is logged `aborted: true`, with status 499 when nothing was sent.
 */
export const requestContext: Mw = async function requestContext(ctx, next) {
  const started = process.hrtime.bigint();
  const incoming = ctx.get('x-request-id');
  const requestId = SAFE_ID.test(incoming) ? incoming : randomUUID();
  ctx.state.requestId = requestId;
  ctx.set('x-request-id', requestId);
  ctx.res.once('close', () => {
    const aborted = !ctx.res.writableFinished;
    ctx.deps.log.info('request', {
      method: ctx.method,
      path: ctx.path,
      // A connection closed before any answer was sent (the client gave up, or the shutdown's
      // deadline cut it) is 499, nginx's "client closed request": Koa's status would still be its
      // default, 404, which names nothing that happened.
      status: aborted && !ctx.res.headersSent ? 499 : ctx.status,
      duration_ms: Number(process.hrtime.bigint() - started) / 1e6,
      request_id: requestId,
      ...(aborted ? { aborted: true } : {}),
    });
  });
  await next();
};
