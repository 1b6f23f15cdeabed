import { createHash } from 'node:crypto';
import type { Ctx, Deps } from '../context.ts';
import { ServiceUnavailable } from '../errors.ts';
import { dataVersion } from '../../db/curves.ts';
import { frameToJson } from '../../engine/frames/json.ts';
import { PARQUET_MEDIA_TYPE, parquetDisposition, wantsJson } from './content-negotiation.ts';
import type { Frame } from '../../engine/frames/frame.ts';
import { tmpDir } from '../../lib/storage.ts';
import { cacheKey, storeCacheEntry } from './cache-store.ts';
import { notModified, versionTag } from '../conditional.ts';

/**
 * Computed responses (curves, frames): off the event loop, bounded in time, computed once.
 *
 * - Time limit: the computation gets an AbortSignal that fires after COMPUTE_TIMEOUT_MS (pool
 *   tasks are cancelled, DuckDB queries interrupted); the client then gets 503 with Retry-After.
 * - Identical requests (same user, same data version, same path and query, same format) that
 *   arrive while one is being computed wait for it instead of computing again.
 * - The encoded body is cached in Redis for CURVE_CACHE_SECONDS under a key holding the user's
 *   `data_version`, which every change to the user's activities bumps in the same transaction:
 *   after a change, no earlier result is found, and the earlier results are deleted when the first
 *   new one is stored (cache-store.ts, which also bounds the cache's size). Without Redis the
 *   response is computed anyway.
 * - Validators: the answer's strong ETag is derived from the same (user, data version, path and
 *   identity, which holds the representation: JSON or Parquet), so a request whose If-None-Match
 *   names it is answered 304 before the cache is read or anything computed (api/conditional.ts).
 */
export interface Computed {
  body: Buffer;
  type: string;
  headers?: Record<string, string>;
}

const inflight = new Map<string, Promise<Computed>>();

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
      running = withTimeout(deps, compute).then(async (r) => {
        await store(deps, userId, version, key, r);
        return r;
      });
      inflight.set(key, running);
      void running.catch(() => undefined).finally(() => inflight.delete(key));
    }
    result = await running;
  }
  ctx.type = result.type;
  for (const [name, value] of Object.entries(result.headers ?? {})) ctx.set(name, value);
  if (result.type === PARQUET_MEDIA_TYPE) ctx.set('Content-Disposition', parquetDisposition(ctx.path));
  ctx.body = result.body;
}

/** The caller's `data_version`: as read with the credential's check (api/auth/authenticate.ts), else read now. */
export async function userDataVersion(ctx: Ctx): Promise<string> {
  const { userId, dataVersion: checked } = ctx.state.principal!;
  return checked ?? (await dataVersion(ctx.deps.db, userId));
}

/** The ETag of a computed answer at the user's data `version`: `identity` names the representation (JSON or Parquet included). */
export function computedTag(ctx: Ctx, version: string, identity: unknown): string {
  return versionTag('computed', ctx.state.principal!.userId, version, ctx.path, identity);
}

/** Run `compute` with a signal that aborts after COMPUTE_TIMEOUT_MS; an abort becomes a 503. */
export async function withTimeout<T>(deps: Deps, compute: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const ms = deps.config.COMPUTE_TIMEOUT_MS;
  const signal = AbortSignal.timeout(ms);
  try {
    return await compute(signal);
  } catch (error) {
    if (signal.aborted) throw new ComputeTimeout(ms);
    throw error;
  }
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
export async function encodeFrame(deps: Deps, frame: Frame, json: boolean, headers?: Record<string, string>): Promise<Computed> {
  if (json)
    return { body: Buffer.from(frameToJson(frame), 'utf8'), type: 'application/json; charset=utf-8', ...(headers ? { headers } : {}) };
  const body = await deps.engine.frames.toParquetBuffer(frame, tmpDir(deps.config.DATA_DIR));
  return { body, type: PARQUET_MEDIA_TYPE, ...(headers ? { headers } : {}) };
}

/** Whether this request wants JSON (the identity of a cached response includes it). */
export function jsonRequested(ctx: Ctx, format: string | undefined): boolean {
  return wantsJson(ctx.get('accept') || undefined, format);
}
