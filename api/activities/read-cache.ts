import { createHash } from 'node:crypto';
import type { Ctx, Deps } from '../context.ts';
import { readVersion } from '../../db/read-version.ts';
import { cacheKey, storeCacheEntry } from './cache-store.ts';

/** Bodies larger than this (a page of 1,000 activities with many traces) are served but not cached. */
const MAX_CACHED_BYTES = 4 * 1024 * 1024;

/** A page ready to send: the encoded JSON and its ETag. */
interface Page {
  body: Buffer;
  etag: string;
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

const etagOf = (body: Buffer) => `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`;
/** Every ETag is this long: Redis holds a page as its ETag followed by its body. */
const ETAG_BYTES = 34;
/**
 * Part of every key's digest: pages stored in another form (before they carried their ETag) are
 * under other keys, so no process reads a value it does not understand during a rolling update.
 */
const STORED_FORM = 'etag+body';

const stored = (page: Page) => Buffer.concat([Buffer.from(page.etag, 'latin1'), page.body]);
/** The body is copied out of the reply, so that memory keeps no larger buffer alive. */
const pageOf = (value: Buffer, until: number): Page => ({ etag: value.toString('latin1', 0, ETAG_BYTES), body: Buffer.from(value.subarray(ETAG_BYTES)), until });

/**
 * JSON reads that clients poll (the activity list, the latest activity), cached for
 * READ_CACHE_SECONDS as the encoded body with its ETag: in Redis, shared by every API process, and in each
 * process's memory (READ_CACHE_MEMORY_MB), which answers a repeated poll with no round trip. The key
 * holds the user's `read_version`, which every change to what these reads show bumps in its own
 * transaction (db/read-version.ts), the reading application (each sees its own app metadata) and the
 * validated query: after a change no earlier page is found (and the earlier pages are deleted when the
 * first new one is stored, within the caches' bounds: cache-store.ts). The version is read before the page (with
 * the credential check, api/auth/authenticate.ts), so a cached body is never older than the version
 * it is filed under. Without Redis the page is built anyway.
 *
 * Every page carries a strong ETag (a hash of the body); a request whose If-None-Match names it is
 * answered 304 with no body.
 */
export async function sendCachedJson(ctx: Ctx, query: unknown, build: () => Promise<unknown>): Promise<void> {
  const { deps } = ctx;
  const { userId, clientId, readVersion: checkedVersion } = ctx.state.principal!;
  const seconds = deps.config.READ_CACHE_SECONDS;
  if (!seconds) {
    const body = Buffer.from(JSON.stringify(await build()), 'utf8');
    send(ctx, { body, etag: etagOf(body), until: 0 });
    return;
  }
  const version = checkedVersion ?? (await readVersion(deps.db, userId));
  const digest = createHash('sha256').update(JSON.stringify([STORED_FORM, ctx.path, query])).digest('base64url');
  const key = cacheKey(deps, 'reads', userId, version, `${clientId ?? '-'}:${digest}`);
  const memory = memoryOf(deps);
  const now = Date.now();
  const remembered = memory?.get(key, now);
  if (remembered) {
    send(ctx, remembered);
    return;
  }
  const until = now + seconds * 1000;
  const value = await deps.redis.getBuffer(key).catch(() => null);
  if (value && value.length >= ETAG_BYTES) {
    const page = pageOf(value, until);
    memory?.put(key, page);
    send(ctx, page);
    return;
  }
  const body = Buffer.from(JSON.stringify(await build()), 'utf8');
  const page = { body, etag: etagOf(body), until };
  if (body.length <= MAX_CACHED_BYTES) {
    await storeCacheEntry(deps, 'reads', userId, version, key, stored(page), seconds);
    memory?.put(key, page);
  }
  send(ctx, page);
}

function send(ctx: Ctx, page: Page): void {
  ctx.type = 'json';
  ctx.body = page.body;
  ctx.set('ETag', page.etag);
  const condition = ctx.get('if-none-match');
  if (condition && matchesAny(condition, page.etag)) ctx.status = 304;
}

/**
 * RFC 9110 §13.1.2, as the origin server: `*`, or any listed tag equal to ours by weak comparison.
 * (Not Koa's ctx.fresh, which, written for caches, ignores the condition when the request says
 * `Cache-Control: no-cache`, and fetch() adds that to every request with an If-None-Match.)
 */
function matchesAny(condition: string, etag: string): boolean {
  if (condition.trim() === '*') return true;
  return condition.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}
