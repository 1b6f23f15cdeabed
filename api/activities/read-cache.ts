import { createHash } from 'node:crypto';
import type { Ctx } from '../context.ts';
import { readVersion } from '../../db/read-version.ts';

/** Bodies larger than this (a page of 1,000 activities with many traces) are served but not cached. */
const MAX_CACHED_BYTES = 4 * 1024 * 1024;

/**
 * JSON reads that clients poll (the activity list, the latest activity), cached in Redis for
 * READ_CACHE_SECONDS as the encoded body. The key holds the user's `read_version`, which every
 * change to what these reads show bumps in its own transaction (db/read-version.ts), the reading
 * application (each sees its own app metadata) and the validated query: after a change no earlier
 * page is found. The version is read before the page (with the check of the caller's grant or
 * session, api/auth/authenticate.ts), so a cached body is never older than the version it is filed
 * under. Without Redis the page is built anyway.
 */
export async function sendCachedJson(ctx: Ctx, query: unknown, build: () => Promise<unknown>): Promise<void> {
  const { deps } = ctx;
  const { userId, clientId, readVersion: checkedVersion } = ctx.state.principal!;
  ctx.type = 'json';
  const seconds = deps.config.READ_CACHE_SECONDS;
  if (!seconds) {
    ctx.body = Buffer.from(JSON.stringify(await build()), 'utf8');
    return;
  }
  const version = checkedVersion ?? (await readVersion(deps.db, userId));
  const digest = createHash('sha256').update(JSON.stringify([ctx.path, query])).digest('base64url');
  const key = `${deps.config.QUEUE_PREFIX}:reads:${userId}:${version}:${clientId ?? '-'}:${digest}`;
  const hit = await deps.redis.getBuffer(key).catch(() => null);
  if (hit) {
    ctx.body = hit;
    return;
  }
  const body = Buffer.from(JSON.stringify(await build()), 'utf8');
  if (body.length <= MAX_CACHED_BYTES) await deps.redis.set(key, body, 'EX', seconds).catch(() => undefined);
  ctx.body = body;
}
