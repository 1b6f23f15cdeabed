/**
 * A secret made by a form (a personal token, a client secret) shown once, after a redirect: the POST
 * stores it here and answers 303 to a page whose URL carries only a random id; that GET takes it
 * (read, opened for this user, deleted: the load whose delete removes it is the only one to show it)
 * and renders it. Reloading the page, or going back to it,
 * shows no secret and creates nothing: POST → redirect → GET, without a second token on reload.
 *
 * The secret never appears in a URL. It waits in Redis at most SHOWN_ONCE_TTL_SECONDS, sealed with
 * the server's secret box (lib/secret-box.ts) and bound to the user and the page it is for, so the
 * id alone opens nothing, for another user or on another page.
 */
import { randomBytes } from 'node:crypto';
import type { Ctx } from '../http/context.ts';

export const SHOWN_ONCE_TTL_SECONDS = 300;

/** The query parameter of the page that shows a stashed secret. */
export const SHOWN_ONCE_PARAM = 'created';

function redisKey(ctx: Ctx, id: string): string {
  return `${ctx.deps.config.QUEUE_PREFIX}:shown-once:${id}`;
}

function context(userId: string, page: string, id: string): string {
  return `shown-once:${userId}:${page}:${id}`;
}

/**
 * Stores `value` for `page` (the path it is shown on) and returns the page's URL with the id; or
 * undefined when Redis cannot take it, and the caller renders the secret in its own answer instead.
 */
export async function stashShownOnce(ctx: Ctx, userId: string, page: string, value: unknown): Promise<string | undefined> {
  const id = randomBytes(16).toString('base64url');
  try {
    const sealed = ctx.deps.box.seal(JSON.stringify(value), context(userId, page, id));
    await ctx.deps.redis.set(redisKey(ctx, id), sealed, 'EX', SHOWN_ONCE_TTL_SECONDS);
  } catch (err) {
    ctx.deps.log.warn('a secret could not be stashed to show after a redirect; shown in the POST answer', {
      request_id: ctx.state.requestId,
      err: (err as Error).message,
    });
    return undefined;
  }
  return `${page}?${SHOWN_ONCE_PARAM}=${id}`;
}

/** The stashed value for this user and page, once; undefined when absent, already taken, expired or not theirs. */
export async function takeShownOnce<T>(ctx: Ctx, userId: string, page: string): Promise<T | undefined> {
  const id = ctx.query[SHOWN_ONCE_PARAM];
  if (typeof id !== 'string' || !/^[\w-]{22}$/.test(id)) return undefined;
  const key = redisKey(ctx, id);
  const sealed = await ctx.deps.redis.get(key);
  if (!sealed) return undefined;
  let value: T;
  try {
    value = JSON.parse(ctx.deps.box.open(sealed, context(userId, page, id))) as T;
  } catch {
    return undefined; // another user's, or another page's: as absent, and left for its owner
  }
  // Of two loads at once, only the one whose DEL removes it shows it.
  return (await ctx.deps.redis.del(key)) === 1 ? value : undefined;
}
