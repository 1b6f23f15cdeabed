import type { Ctx, Mw } from '../context.ts';

/** How long a connection closed for a too-long body still discards what arrives. */
const LINGER_MS = 2_000;

export interface DrainBounds {
  maxBytes: number;
  maxMs: number;
}

/**
 * A request answered before its body was read to the end (a 413 or 422 from a body parser, a 401 on
 * an upload) leaves the rest of the body on the connection, and a parser that gave up leaves the
 * request paused: Node then never reaches the next request on that keep-alive connection (it sat
 * until the keep-alive timeout reset it). Registered first, this reads the rest and discards it, so
 * the answer arrives and the connection stays usable — within bounds: a body that declares more than
 * `maxBytes`, or goes on past `maxBytes` or `maxMs`, is not read; the answer says `Connection: close`
 * (when it is still to be written) and the socket is closed.
 */
export function drainUnread(bounds: DrainBounds): Mw {
  return async function drainUnread(ctx, next) {
    try {
      await next();
    } finally {
      if (!ctx.req.complete && !ctx.req.destroyed) drain(ctx, bounds);
    }
  };
}

function drain(ctx: Ctx, { maxBytes, maxMs }: DrainBounds) {
  const req = ctx.req;
  const socket = req.socket;
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    // Too much to read: answer with `Connection: close`. Node ends the socket once the answer is
    // written and closes it at once, which resets a client still sending before it read the answer;
    // closing lingers instead (nginx's lingering close): what still arrives is discarded for a moment.
    if (ctx.res.headersSent) return void socket.destroy();
    ctx.set('Connection', 'close');
    socket.destroySoon = function lingeringClose() {
      socket.end();
      setTimeout(() => socket.destroy(), Math.min(maxMs, LINGER_MS)).unref();
    };
    req.unpipe();
    req.resume();
    return;
  }
  // Whatever a parser had piped the body into (a gunzip stream) no longer reads it.
  req.unpipe();
  let bytes = 0;
  const close = () => {
    clearTimeout(timer);
    if (!req.complete) socket.destroy();
  };
  const timer = setTimeout(close, maxMs);
  timer.unref();
  req.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
    if (bytes > maxBytes) close();
  });
  req.once('end', () => clearTimeout(timer));
  req.once('close', () => clearTimeout(timer));
  req.resume();
}
