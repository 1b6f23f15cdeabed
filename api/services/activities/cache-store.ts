import type { Redis } from 'ioredis';
import type { Deps } from '../../services/deps.ts';

/**
 * Storing into the Redis caches (computed curves, polled pages) within bounds, in one Lua script so
 * that concurrent API processes keep the bookkeeping exact:
 *
 * - per user and cache, an index `<prefix>:<cache>-index:<user>` (sorted set: entry key → the data
 *   version it was computed at). Storing under version v first deletes the user's entries of every
 *   lower version (superseded: no request can find them again) and stores nothing when a higher
 *   version is already there (this result is superseded itself); past CACHE_MAX_ENTRIES_PER_USER
 *   entries the extra ones go;
 * - for both caches together, `<prefix>:cache-expiry` (sorted set: entry key → when it expires, ms)
 *   and `<prefix>:cache-sizes` (hash: entry key → "bytes index", and `#total`): entries past their
 *   TTL are forgotten, and past CACHE_MAX_MB the entries closest to expiry are deleted.
 *
 * BullMQ's queues live in the same Redis and need `maxmemory-policy noeviction`, so Redis itself
 * cannot evict for the caches: these bounds are what keeps their memory flat. Entry keys are read
 * by the script (not passed as KEYS): one Redis, not Redis Cluster.
 */
const SCRIPT = `
local entry, userIndex, expiries, sizes = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local value, ttl, version, now = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local maxEntries, maxBytes = tonumber(ARGV[5]), tonumber(ARGV[6])
local function drop(member)
  local info = redis.call('HGET', sizes, member)
  if info then
    local size, index = string.match(info, '^(%d+) (.+)$')
    redis.call('HDEL', sizes, member)
    redis.call('HINCRBY', sizes, '#total', -tonumber(size))
    redis.call('ZREM', index, member)
  end
  redis.call('ZREM', expiries, member)
  redis.call('DEL', member)
end
for _, m in ipairs(redis.call('ZRANGEBYSCORE', expiries, '-inf', '(' .. now, 'LIMIT', 0, 512)) do drop(m) end
local newest = redis.call('ZREVRANGE', userIndex, 0, 0, 'WITHSCORES')
if newest[2] and tonumber(newest[2]) > version then return 0 end
for _, m in ipairs(redis.call('ZRANGEBYSCORE', userIndex, '-inf', '(' .. version)) do drop(m) end
drop(entry)
local size = string.len(value)
redis.call('SET', entry, value, 'EX', ttl)
redis.call('ZADD', userIndex, version, entry)
redis.call('EXPIRE', userIndex, ttl)
redis.call('ZADD', expiries, now + ttl * 1000, entry)
redis.call('HSET', sizes, entry, size .. ' ' .. userIndex)
local total = redis.call('HINCRBY', sizes, '#total', size)
local extra = redis.call('ZCARD', userIndex) - maxEntries
if extra > 0 then
  -- The entry just stored is never the one dropped: look one further, so that exactly \`extra\` go.
  local dropped = 0
  for _, m in ipairs(redis.call('ZRANGE', userIndex, 0, extra)) do
    if dropped < extra and m ~= entry then
      drop(m)
      dropped = dropped + 1
    end
  end
end
total = tonumber(redis.call('HGET', sizes, '#total'))
while total > maxBytes do
  local first = redis.call('ZRANGE', expiries, 0, 0)
  if not first[1] then break end
  drop(first[1])
  total = tonumber(redis.call('HGET', sizes, '#total'))
end
return 1
`;

type CacheRedis = Redis & {
  storeBoundedCacheEntry(
    entry: string,
    userIndex: string,
    expiries: string,
    sizes: string,
    value: Buffer,
    ttl: number,
    version: string,
    now: number,
    maxEntries: number,
    maxBytes: number,
  ): Promise<number>;
};

const defined = new WeakSet<Redis>();
function scripted(redis: Redis): CacheRedis {
  if (!defined.has(redis)) {
    redis.defineCommand('storeBoundedCacheEntry', { numberOfKeys: 4, lua: SCRIPT });
    defined.add(redis);
  }
  return redis as CacheRedis;
}

export type CacheName = 'computed' | 'reads';

/** The key of an entry: under the user and the version, so that a change is a new key. */
export function cacheKey(deps: Deps, cache: CacheName, userId: string, version: string, rest: string): string {
  return `${deps.config.QUEUE_PREFIX}:${cache}:${userId}:${version}:${rest}`;
}

/**
 * Store `value` under `entry` (made by cacheKey for `userId` at `version`) for `ttl` seconds within the
 * bounds above. Resolves whether it was stored; a Redis failure is not an error (the cache is only
 * a cache).
 */
export async function storeCacheEntry(
  deps: Deps,
  cache: CacheName,
  userId: string,
  version: string,
  entry: string,
  value: Buffer,
  ttl: number,
): Promise<boolean> {
  const { QUEUE_PREFIX: prefix, CACHE_MAX_ENTRIES_PER_USER: maxEntries, CACHE_MAX_MB: maxMb } = deps.config;
  try {
    const stored = await scripted(deps.redis).storeBoundedCacheEntry(
      entry,
      `${prefix}:${cache}-index:${userId}`,
      `${prefix}:cache-expiry`,
      `${prefix}:cache-sizes`,
      value,
      ttl,
      version,
      Date.now(),
      maxEntries,
      maxMb * 1024 * 1024,
    );
    return stored === 1;
  } catch {
    return false;
  }
}
