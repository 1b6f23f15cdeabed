import { createHash } from 'node:crypto';
import type { Ctx } from '../../http/context.ts';
import type { Deps } from '../../services/deps.ts';
import { readVersion } from '../../../db/read-version.ts';
import { cacheKey, storeCacheEntry } from '../../services/activities/cache-store.ts';
import { notModified, versionTag } from '../conditional.ts';
import { setPageLinks } from '../pagination.ts';

/** Bodies larger than this (a page of 1,000 activities with many traces) are served but not cached. */
const MAX_CACHED_BYTES = 4 * 1024 * 1024;

/** A page ready to send: the encoded JSON and whether rows follow it (its `Link: rel="next"`). */
interface Page {
  body: Buffer;
  more: boolean;
  /** Date.now() after which the process's memory no longer serves it. */
  until: number;
}

/**
 * The pages one API process keeps in memory, least recently used dropped first past
 * READ_CACHE_MEMORY_MB. Keys are the Redis keys (they hold the read version), so a page found here
 * is exactly the one Redis would give: memory only saves the round trip and the copy of the body.
 */
class PageMemory {
  readonly #pages = new Map<string, Page>();
  #bytes = 0;

  constructor(readonly limitBytes: number) {}

  get(key: string, now: number): Page | undefined {
    const page = this.#pages.get(key);
    if (!page) return undefined;
    this.#pages.delete(key);
    if (page.until <= now) {
      this.#bytes -= page.body.length;
      return undefined;
    }
    this.#pages.set(key, page);
    return page;
  }

  put(key: string, page: Page): void {
    if (page.body.length > this.limitBytes) return;
    const old = this.#pages.get(key);
    if (old) {
      this.#pages.delete(key);
      this.#bytes -= old.body.length;
    }
    this.#pages.set(key, page);
    this.#bytes += page.body.length;
    for (const [oldest, { body }] of this.#pages) {
      if (this.#bytes <= this.limitBytes) break;
      this.#pages.delete(oldest);
      this.#bytes -= body.length;
    }
  }
}

const memories = new WeakMap<Deps, PageMemory>();

function memoryOf(deps: Deps): PageMemory | undefined {
  const limit = deps.config.READ_CACHE_MEMORY_MB * 1024 * 1024;
  if (!limit) return undefined;
  let memory = memories.get(deps);
  if (!memory) memories.set(deps, (memory = new PageMemory(limit)));
  return memory;
}

/**
 * Part of every key's digest: pages stored in another form (before, their ETag then their body) are
 * under other keys, so no process reads a value it does not understand during a rolling update.
 */
const STORED_FORM = 'more+body';

/** Redis holds a page as one byte (`1` when rows follow it, else `0`) followed by its body. */
const stored = (page: Page) => Buffer.concat([Buffer.from(page.more ? '1' : '0', 'latin1'), page.body]);
/** The body is copied out of the reply, so that memory keeps no larger buffer alive. */
const pageOf = (value: Buffer, until: number): Page => ({ more: value[0] === 0x31, body: Buffer.from(value.subarray(1)), until });

/** What a read builds: the value sent as JSON and, on a paginated list, whether rows follow it. */
export interface Built {
  value: unknown;
  more?: boolean;
}

/**
 * JSON reads that clients poll (the activity list, the latest activity), cached for
 * READ_CACHE_SECONDS as the encoded body: in Redis, shared by every API process, and in each
 * process's memory (READ_CACHE_MEMORY_MB), which answers a repeated poll with no round trip. The key
 * holds the user's `read_version`, which every change to what these reads show bumps in its own
 * transaction (db/read-version.ts), the reading application (each sees its own app metadata) and the
 * validated query: after a change no earlier page is found (and the earlier pages are deleted when the
 * first new one is stored, within the caches' bounds: cache-store.ts). The version is read before the page (with
 * the credential check, api/http/authenticate.ts), so a cached body is never older than the version
 * it is filed under. Without Redis the page is built anyway.
 *
 * Every page carries a strong ETag derived from the same things as its key (api/rest/conditional.ts): a
 * request whose If-None-Match names it is answered 304 with no body before any cache is read. With
 * `paging`, the page's `Link` header (api/rest/pagination.ts) says whether rows follow it.
 */
export async function sendCachedJson(
  ctx: Ctx,
  query: unknown,
  build: () => Promise<Built>,
  paging?: { limit: number; offset: number },
): Promise<void> {
  const { deps } = ctx;
  const { userId, clientId, readVersion: checkedVersion } = ctx.state.principal!;
  const version = checkedVersion ?? (await readVersion(deps.db, userId));
  if (notModified(ctx, versionTag('reads', userId, version, clientId ?? null, ctx.path, query))) return;
  const seconds = deps.config.READ_CACHE_SECONDS;
  if (!seconds) {
    send(ctx, built(await build(), 0), paging);
    return;
  }
  const digest = createHash('sha256')
    .update(JSON.stringify([STORED_FORM, ctx.path, query]))
    .digest('base64url');
  const key = cacheKey(deps, 'reads', userId, version, `${clientId ?? '-'}:${digest}`);
  const memory = memoryOf(deps);
  const now = Date.now();
  const remembered = memory?.get(key, now);
  if (remembered) {
    send(ctx, remembered, paging);
    return;
  }
  const until = now + seconds * 1000;
  const value = await deps.redis.getBuffer(key).catch(() => null);
  if (value && value.length >= 1) {
    const page = pageOf(value, until);
    memory?.put(key, page);
    send(ctx, page, paging);
    return;
  }
  const page = built(await build(), until);
  if (page.body.length <= MAX_CACHED_BYTES) {
    await storeCacheEntry(deps, 'reads', userId, version, key, stored(page), seconds);
    memory?.put(key, page);
  }
  send(ctx, page, paging);
}

const built = ({ value, more }: Built, until: number): Page => ({
  body: Buffer.from(JSON.stringify(value), 'utf8'),
  more: more ?? false,
  until,
});

function send(ctx: Ctx, page: Page, paging: { limit: number; offset: number } | undefined): void {
  ctx.type = 'json';
  ctx.body = page.body;
  if (paging) setPageLinks(ctx, { ...paging, more: page.more });
}
