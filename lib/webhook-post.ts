import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { WebhookTarget } from './webhook-target.ts';

/** What one delivery attempt gave; see `postWebhook`. */
export type WebhookPostResult = { status: number | null; excerpt: string; error: string | null; durationMs: number };

export const WEBHOOK_USER_AGENT = 'training-data-service-webhooks';

/** Time as `postWebhook` reads it: the deadline and the measured duration. Tests pass their own. */
export interface WebhookClock {
  /** Monotonic milliseconds. */
  now(): number;
  /** Call `fn` once after `ms`; returns what cancels it. */
  after(ms: number, fn: () => void): () => void;
}

/** The real clock: performance.now() and setTimeout. */
export const systemWebhookClock: WebhookClock = {
  now: () => performance.now(),
  after(ms, fn) {
    const timer = setTimeout(fn, ms);
    return () => clearTimeout(timer);
  },
};

/**
 * One webhook HTTP request (docs/app-developers.md, "Webhooks"): POST `body` to a target that `resolveWebhookTarget`
 * has checked, and report what happened. Never throws for network problems.
 *
 * - The connection goes to `target.address`, the address that was checked, whatever DNS says now;
 *   the URL's host name is still used for the Host header and for TLS (SNI and certificate check).
 * - Redirects are not followed: a 3xx is returned as its status.
 * - One deadline (`timeoutMs`, default 5 s) covers connecting, sending and reading the response.
 * - At most `excerptBytes` (default 512) of the response body are read, then the connection is
 *   closed: a large or endless response costs nothing.
 * - No connection is reused (`agent: false`).
 *
 * `status` is null when no response arrived (timeout, refused, TLS failure…), with `error` saying
 * why. When the status line arrived but reading the body then failed, `status` is kept and `error`
 * is set as well.
 */
export function postWebhook(
  target: WebhookTarget,
  body: string,
  headers: Record<string, string>,
  opts: { timeoutMs?: number; excerptBytes?: number; clock?: WebhookClock } = {},
): Promise<WebhookPostResult> {
  const timeoutMs = opts.timeoutMs ?? 5000;
  const excerptBytes = opts.excerptBytes ?? 512;
  const clock = opts.clock ?? systemWebhookClock;
  const started = clock.now();
  const elapsed = () => Math.round(clock.now() - started);

  const { url } = target;
  const secure = url.protocol === 'https:';
  if (!secure && url.protocol !== 'http:') {
    return Promise.resolve({ status: null, excerpt: '', error: `unsupported scheme ${url.protocol}`, durationMs: 0 });
  }
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;

  // Every name lookup answers the checked address (net asks with `all: true` when it tries
  // several address families, with a single answer otherwise). IP-literal hosts skip lookup.
  const lookup: LookupFunction = (_name, options, callback) => {
    if (options.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };

  const options: https.RequestOptions = {
    method: 'POST',
    protocol: url.protocol,
    host: hostname,
    port: url.port || (secure ? 443 : 80),
    path: `${url.pathname}${url.search}`,
    headers: {
      'Content-Type': 'application/json',
      'User-Agent': WEBHOOK_USER_AGENT,
      ...headers,
      'Content-Length': String(Buffer.byteLength(body)),
    },
    lookup,
    agent: false,
  };
  if (secure && isIP(hostname) === 0) options.servername = hostname;

  return new Promise<WebhookPostResult>((resolve) => {
    let status: number | null = null;
    const chunks: Buffer[] = [];
    let received = 0;
    let done = false;
    let res: http.IncomingMessage | undefined;
    let req: http.ClientRequest | undefined;

    const finish = (error: string | null, keepStatus = true) => {
      if (done) return;
      done = true;
      cancelDeadline();
      const bytes = Buffer.concat(chunks, received).subarray(0, excerptBytes);
      // stream: true leaves a multi-byte character cut by the byte limit out instead of turning it into U+FFFD.
      const excerpt = new TextDecoder('utf-8').decode(bytes, { stream: true });
      res?.destroy();
      req?.destroy();
      resolve({ status: keepStatus ? status : null, excerpt, error, durationMs: elapsed() });
    };

    const cancelDeadline = clock.after(timeoutMs, () => finish(`timed out after ${timeoutMs} ms`, false));

    try {
      req = (secure ? https : http).request(options, (response) => {
        res = response;
        status = response.statusCode ?? null;
        if (excerptBytes <= 0) return finish(null);
        response.on('data', (chunk: Buffer) => {
          if (done) return;
          chunks.push(chunk);
          received += chunk.length;
          if (received >= excerptBytes) finish(null);
        });
        response.on('end', () => finish(null));
        response.on('error', (err) => finish(message(err)));
        response.on('close', () => {
          if (!response.complete) finish('the connection closed before the response ended');
        });
      });
      req.on('error', (err) => finish(message(err)));
      req.end(body);
    } catch (err) {
      // Only a bad header value or option gets here; reported like a network error, never thrown.
      finish(message(err));
    }
  });
}

function message(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as NodeJS.ErrnoException).code;
    return code && !err.message.includes(code) ? `${code}: ${err.message}` : err.message;
  }
  return String(err);
}
