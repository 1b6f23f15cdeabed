import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { InFlightRequest } from '../../../lib/event-loop.ts';
import type { Mw } from '../context.ts';

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A path as logs show it: an invitation link's secret (`/teams/join/<secret>`, docs/coaching.md) left out. */
export function loggedPath(path: string): string {
  return path.startsWith('/teams/join/') ? '/teams/join/[secret]' : path;
}

interface InFlight {
  method: string;
  path: string;
  requestId: string;
  started: number;
}

/**
 * The requests of this process in flight, oldest first (a Set keeps insertion order; keyed by entry,
 * not id, since a client's `x-request-id` may repeat). The event loop is the process's, so every app
 * in the process shares it: the event-loop monitor (lib/event-loop.ts) names them when the loop was blocked.
 */
const inFlight = new Set<InFlight>();

/** At most `limit` requests in flight, oldest first: method, path (never the query), id, how long it has run. */
export function requestsInFlight(limit: number): InFlightRequest[] {
  const now = performance.now();
  const out: InFlightRequest[] = [];
  for (const r of inFlight) {
    if (out.length >= limit) break;
    out.push({ method: r.method, path: r.path, request_id: r.requestId, running_ms: Math.round(now - r.started) });
  }
  return out;
}

/**
 * Gives every request an id (the client's `x-request-id` when it is a safe token, else a new
 * UUID), echoes it on the response, and writes one JSON log line when the response is finished:
 * method, path, status, duration and request id; a request whose connection closed before its
 * answer was complete is logged `aborted: true`, with status 499 when nothing was sent. Until then
 * the request is listed in flight (`requestsInFlight`).
 */
export const requestContext: Mw = async function requestContext(ctx, next) {
  const started = process.hrtime.bigint();
  const incoming = ctx.get('x-request-id');
  const requestId = SAFE_ID.test(incoming) ? incoming : randomUUID();
  ctx.state.requestId = requestId;
  ctx.set('x-request-id', requestId);
  const entry: InFlight = { method: ctx.method, path: loggedPath(ctx.path), requestId, started: performance.now() };
  inFlight.add(entry);
  ctx.res.once('close', () => {
    inFlight.delete(entry);
    const aborted = !ctx.res.writableFinished;
    ctx.deps.log.info('request', {
      method: ctx.method,
      path: entry.path,
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
