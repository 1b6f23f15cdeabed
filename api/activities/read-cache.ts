import { createHash } from 'node:crypto';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import type { Ctx, Deps } from '../context.ts';
import { readVersion } from '../../db/read-version.ts';
import { cacheKey, storeCacheEntry } from './cache-store.ts';
import { notModified, versionTag } from '../conditional.ts';
import { setPageLinks } from '../pagination.ts';
import { BR_QUALITY, GZIP_LEVEL, THRESHOLD } from '../middleware/compression.ts';

/** Bodies larger than this (a page of 1,000 activities with many traces) are served but not cached. */
const MAX_CACHED_BYTES = 4 * 1024 * 1024;

/** A page ready to send: the encoded JSON and whether rows follow it (its `Link: rel="next"`). */
interface Page {
  body: Buffer;
  more: boolean;
  /** Date.now() after which the process's memory no longer serves it. */
  until: number;
  /** The body compressed, made at the first request that accepts each coding and kept with the page in memory. */
  coded?: Partial<Record<Coding, Buffer>>;
}

type Coding = 'br' | 'gzip';
/** The levels of api/middleware/compression.ts, so that a cached answer is the one it would make. */
const CODERS: Record<Coding, (body: Buffer) => Buffer> = {
  br: (body) => brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: BR_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } }),
  gzip: (body) => gzipSync(body, { level: GZIP_LEVEL }),
};

const sizeOf = (page: Page) => page.body.length + (page.coded?.br?.length ?? 0) + (page.coded?.gzip?.length ?? 0);

/**
 * The pages one API process keeps in memory, least recently used dropped first past
 * READ_CACHE_MEMORY_MB. Keys are the Redis keys (they hold the read version), so a page found here
 * is exactly the one Redis would give: memory only saves the round trip and the copy of the body.
 */
class PageMemory {
  /** Each page with the bytes it was counted at (its body and the codings made so far). */
  readonly #pages = new Map<string, { page: Page; size: number }>();
  #bytes = 0;

  constructor(readonly limitBytes: number) {}

  get(key: string, now: number): Page | undefined {
    const entry = this.#pages.get(key);
    if (!entry) return undefined;
    this.#pages.delete(key);
    if (entry.page.until <= now) {
      this.#bytes -= entry.size;
      return undefined;
    }
    this.#pages.set(key, entry);
    return entry.page;
  }

  /** Keep `page` (again, when a coding was added to it: counted at its new size). */
  put(key: string, page: Page): void {
    const old = this.#pages.get(key);
    if (old) {
      this.#pages.delete(key);
      this.#bytes -= old.size;
    }
    const size = sizeOf(page);
    if (size > this.limitBytes) return;
    this.#pages.set(key, { page, size });
    this.#bytes += size;
    for (const [oldest, entry] of this.#pages) {
      if (this.#bytes <= this.limitBytes) break;
      this.#pages.delete(oldest);
      this.#bytes -= entry.size;
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
 * the credential check, api/auth/authenticate.ts), so a cached body is never older than the version
 * it is filed under. Without Redis the page is built anyway.
 *
 * Every page carries a strong ETag derived from the same things as its key (api/conditional.ts): a
 * request whose If-None-Match names it is answered 304 with no body before any cache is read. With
 * `paging`, the page's `Link` header (api/pagination.ts) says whether rows follow it.
 */
export async function sendCachedJson(ctx: Ctx, query: unknown, build: () => Promise<Built>, paging?: { limit: number; offset: number }): Promise<void> {
  const { deps } = ctx;
  const { userId, clientId, readVersion: checkedVersion } = ctx.state.principal!;
  const version = checkedVersion ?? (await readVersion(deps.db, userId));
  if (notModified(ctx, versionTag('reads', userId, version, clientId ?? null, ctx.path, query))) return;
  const seconds = deps.config.READ_CACHE_SECONDS;
  if (!seconds) {
    send(ctx, built(await build(), 0), paging);
    return;
  }
  const digest = createHash('sha256').update(JSON.stringify([STORED_FORM, ctx.path, query])).digest('base64url');
  const key = cacheKey(deps, 'reads', userId, version, `${clientId ?? '-'}:${digest}`);
  const memory = memoryOf(deps);
  const now = Date.now();
  const remembered = memory?.get(key, now);
  if (remembered) {
    if (send(ctx, remembered, paging)) memory!.put(key, remembered);
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

const built = ({ value, more }: Built, until: number): Page => ({ body: Buffer.from(JSON.stringify(value), 'utf8'), more: more ?? false, until });

/**
 * Send the page, compressed as the client accepts (br or gzip, past the compression threshold): the
 * coding is made once per page and kept with it, so a polled page costs no compression after the
 * first poll (compressing an 86 KB page each time cost 60 % of the polled throughput). Whether a
 * coding was made (the memory then counts the page again).
 */
function send(ctx: Ctx, page: Page, paging: { limit: number; offset: number } | undefined): boolean {
  ctx.type = 'json';
  if (paging) setPageLinks(ctx, { ...paging, more: page.more });
  const coding = page.body.length >= THRESHOLD ? codingFor(ctx.get('accept-encoding')) : undefined;
  if (!coding) {
    ctx.body = page.body;
    return false;
  }
  const made = !page.coded?.[coding];
  const coded = (page.coded ??= {})[coding] ??= CODERS[coding](page.body);
  ctx.set('Content-Encoding', coding);
  ctx.body = coded;
  return made;
}

/**
 * The coding api/middleware/compression.ts would choose (koa-compress: the highest q, br on a tie;
 * nothing when no Accept-Encoding is sent or identity is preferred).
 */
export function codingFor(acceptEncoding: string): Coding | undefined {
  if (!acceptEncoding) return undefined;
  const q = new Map<string, number>();
  for (const part of acceptEncoding.split(',')) {
    const [name = '', ...params] = part.trim().toLowerCase().split(';').map((p) => p.trim());
    const weight = params.find((p) => p.startsWith('q='));
    const value = weight ? Number(weight.slice(2)) : 1;
    if (name) q.set(name, Number.isFinite(value) ? value : 0);
  }
  const of = (coding: string) => q.get(coding) ?? q.get('*') ?? 0;
  const best = Math.max(of('br'), of('gzip'));
  if (best <= 0 || (q.get('identity') ?? 0) > best) return undefined;
  return of('br') >= of('gzip') ? 'br' : 'gzip';
}
