import { createHash } from 'node:crypto';
import type { Ctx } from '../../http/context.ts';
import type { Deps } from '../../services/deps.ts';
import { HttpError, ServiceUnavailable } from '../../services/errors.ts';
import { dataVersion } from '../../../db/curves.ts';
import { frameToJson } from '../../../engine/frames/json.ts';
import { PARQUET_MEDIA_TYPE, parquetDisposition, wantsJson } from './content-negotiation.ts';
import type { Frame } from '../../../engine/frames/frame.ts';
import { tmpDir } from '../../../lib/storage.ts';
import { cacheKey, storeCacheEntry } from '../../services/activities/cache-store.ts';
import { notModified, versionTag } from '../conditional.ts';

/**
 * Computed responses (curves, frames): off the event loop, bounded in time, computed once.
 *
 * - Time limit: the computation gets an AbortSignal that fires after COMPUTE_TIMEOUT_MS, and the
 *   client gets 503 with Retry-After at that moment, whatever stage the computation is in. The
 *   signal stops the work itself: a pool task ends at its kernel's next check and its thread takes
 *   the next task (engine/stop.ts; one that does not stop within a second has its thread replaced),
 *   a DuckDB query is interrupted, a column fill stops between batches, and the stages between
 *   them check the signal before they start.
 * - Identical requests (same user, same data version, same path and query, same format) that
 *   arrive while one is being computed wait for it instead of computing again. A computation
 *   whose every waiting client has gone away (its connection closed before the answer) is
 *   stopped the same way: nobody is left to read it.
 * - The encoded body is cached in Redis for CURVE_CACHE_SECONDS under a key holding the user's
 *   `data_version`, which every change to the user's activities bumps in the same transaction:
 *   after a change, no earlier result is found, and the earlier results are deleted when the first
 *   new one is stored (cache-store.ts, which also bounds the cache's size). Without Redis the
 *   response is computed anyway.
 * - Validators: the answer's strong ETag is derived from the same (user, data version, path and
 *   identity, which holds the representation: JSON or Parquet), so a request whose If-None-Match
 *   names it is answered 304 before the cache is read or anything computed (api/rest/conditional.ts).
 */
export interface Computed {
  body: Buffer;
  type: string;
  headers?: Record<string, string>;
}

/** A computation under way: its answer, the requests waiting for it, and how to stop it. */
interface Running {
  result: Promise<Computed>;
  waiting: number;
  stop: AbortController;
}
const inflight = new Map<string, Running>();

/** The client closed its connection before the answer: logged as nginx's 499, never sent (nobody reads it). */
export class ClientGone extends HttpError {
  constructor() {
    super(499, 'The client closed the connection before the answer was ready');
  }
}

export class ComputeTimeout extends ServiceUnavailable {
  constructor(ms: number) {
    super(
      `The computation did not finish within ${ms < 10_000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`}; narrow the date range, the sports or the durations, or try again later`,
      30,
    );
  }
}

/** Answer with the computed response for this request, from the cache, a computation under way, or a new one. */
export async function sendComputed(ctx: Ctx, identity: unknown, compute: (signal: AbortSignal) => Promise<Computed>): Promise<void> {
  const { deps } = ctx;
  const userId = ctx.state.principal!.userId;
  const version = await userDataVersion(ctx);
  const digest = createHash('sha256')
    .update(JSON.stringify([ctx.path, identity]))
    .digest('base64url');
  ctx.vary('Accept'); // frames are negotiated on Accept
  if (notModified(ctx, computedTag(ctx, version, identity))) return;
  const key = cacheKey(deps, 'computed', userId, version, digest);
  let result = await cached(deps, key);
  if (!result) {
    let running = inflight.get(key);
    if (!running) {
      const stop = new AbortController();
      const started: Running = {
        stop,
        waiting: 0,
        result: withTimeout(deps, compute, stop.signal).then(async (r) => {
          await store(deps, userId, version, key, r);
          return r;
        }),
      };
      running = started;
      inflight.set(key, started);
      void started.result.catch(() => undefined).finally(() => inflight.get(key) === started && inflight.delete(key));
    }
    result = await waitFor(ctx, running, key);
  }
  ctx.type = result.type;
  for (const [name, value] of Object.entries(result.headers ?? {})) ctx.set(name, value);
  if (result.type === PARQUET_MEDIA_TYPE) ctx.set('Content-Disposition', parquetDisposition(ctx.path));
  ctx.body = result.body;
}

/** The caller's `data_version`: as read with the credential's check (api/http/authenticate.ts), else read now. */
export async function userDataVersion(ctx: Ctx): Promise<string> {
  const { userId, dataVersion: checked } = ctx.state.principal!;
  return checked ?? (await dataVersion(ctx.deps.db, userId));
}

/** The ETag of a computed answer at the user's data `version`: `identity` names the representation (JSON or Parquet included). */
export function computedTag(ctx: Ctx, version: string, identity: unknown): string {
  return versionTag('computed', ctx.state.principal!.userId, version, ctx.path, identity);
}

/**
 * This request's wait for a computation: counted among its waiters while its client is there; the
 * last waiter whose connection closes before the answer stops the computation (a retry that arrives
 * later starts a new one: the stopped one is no longer shared).
 */
async function waitFor(ctx: Ctx, running: Running, key: string): Promise<Computed> {
  running.waiting++;
  let counted = true;
  const leave = () => {
    if (!counted) return;
    counted = false;
    running.waiting--;
    if (running.waiting === 0 && !ctx.res.writableFinished) {
      if (inflight.get(key) === running) inflight.delete(key);
      running.stop.abort(new ClientGone());
    }
  };
  const onClose = () => {
    if (!ctx.res.writableFinished) leave();
  };
  ctx.res.once('close', onClose);
  try {
    return await running.result;
  } finally {
    ctx.res.off('close', onClose);
    if (counted) {
      counted = false;
      running.waiting--;
    }
  }
}

/**
 * Run `compute` with a signal that aborts after COMPUTE_TIMEOUT_MS (or when `stop` aborts). The
 * answer does not wait for a stage that is slow to notice: at the deadline this rejects at once with
 * ComputeTimeout (a 503), and with ClientGone when `stop` fired; the signal meanwhile stops the work.
 * A caller that must clean up after the work (a file it writes) does so inside `compute`.
 */
export async function withTimeout<T>(deps: Deps, compute: (signal: AbortSignal) => Promise<T>, stop?: AbortSignal): Promise<T> {
  const ms = deps.config.COMPUTE_TIMEOUT_MS;
  const deadline = AbortSignal.timeout(ms);
  const signal = stop ? AbortSignal.any([deadline, stop]) : deadline;
  let onAbort = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([compute(signal), aborted]);
  } catch (error) {
    if (deadline.aborted) throw new ComputeTimeout(ms);
    if (stop?.aborted) throw new ClientGone();
    throw error;
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/** A signal that aborts when this request's client closes its connection before the answer is complete. */
export function clientGone(ctx: Ctx): AbortSignal {
  const gone = new AbortController();
  const onClose = () => {
    if (!ctx.res.writableFinished) gone.abort(new ClientGone());
  };
  ctx.res.once('close', onClose);
  return gone.signal;
}

async function cached(deps: Deps, key: string): Promise<Computed | undefined> {
  if (!deps.config.CURVE_CACHE_SECONDS) return undefined;
  try {
    const raw = await deps.redis.getBuffer(key);
    if (!raw) return undefined;
    const headerLength = raw.readUInt32LE(0);
    const meta = JSON.parse(raw.subarray(4, 4 + headerLength).toString('utf8')) as Omit<Computed, 'body'>;
    return { ...meta, body: raw.subarray(4 + headerLength) };
  } catch {
    return undefined; // Redis down or an unreadable entry: compute
  }
}

async function store(deps: Deps, userId: string, version: string, key: string, result: Computed): Promise<void> {
  const { CURVE_CACHE_SECONDS: seconds, CURVE_CACHE_MAX_BYTES: max } = deps.config;
  if (!seconds || result.body.length > max) return;
  const meta = Buffer.from(JSON.stringify({ type: result.type, headers: result.headers }), 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32LE(meta.length);
  await storeCacheEntry(deps, 'computed', userId, version, key, Buffer.concat([length, meta, result.body]), seconds);
}

/** A frame as the client asked for it: Parquet (default) or column-oriented JSON (`format=json` or `Accept: application/json`). */
export async function encodeFrame(
  deps: Deps,
  frame: Frame,
  json: boolean,
  headers?: Record<string, string>,
  signal?: AbortSignal,
): Promise<Computed> {
  signal?.throwIfAborted(); // (a computation stopped meanwhile is not encoded)
  if (json)
    return { body: Buffer.from(frameToJson(frame), 'utf8'), type: 'application/json; charset=utf-8', ...(headers ? { headers } : {}) };
  const body = await deps.engine.frames.toParquetBuffer(frame, tmpDir(deps.config.DATA_DIR));
  return { body, type: PARQUET_MEDIA_TYPE, ...(headers ? { headers } : {}) };
}

/** Whether this request wants JSON (the identity of a cached response includes it). */
export function jsonRequested(ctx: Ctx, format: string | undefined): boolean {
  return wantsJson(ctx.get('accept') || undefined, format);
}
