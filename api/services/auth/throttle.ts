import type { Redis } from 'ioredis';
import { ServiceUnavailable } from '../errors.ts';
import { addressKey } from './client-address.ts';

/** A counter's count in its window, and the seconds until the window ends (0: no window running). */
export interface WindowStanding {
  count: number;
  reset: number;
}

/**
 * Counters in Redis over a fixed window (the first count starts it), so that a limit holds across
 * every API process. Redis being unreachable is a 503: the limit is never skipped (a caller that
 * would rather skip it catches the ServiceUnavailable: ./failure-limit.ts).
 */
export class WindowCounters {
  constructor(
    private readonly redis: Redis,
    private readonly windowSeconds: number,
    private readonly what: string,
  ) {}

  /** Seconds until none of the counters is at its limit, or 0 when none is now. */
  async wait(limits: readonly (readonly [key: string, max: number])[]): Promise<number> {
    const tx = this.redis.multi();
    for (const [key] of limits) tx.get(key).ttl(key);
    const values = await this.#run(async () => unwrap(await tx.exec()));
    const waits = limits.map(([, max], i) => (Number(values[2 * i] ?? 0) >= max ? Number(values[2 * i + 1]) : 0));
    return Math.max(0, ...waits);
  }

  async add(keys: readonly string[]): Promise<void> {
    const tx = this.redis.multi();
    for (const key of keys) tx.incr(key).expire(key, this.windowSeconds, 'NX');
    await this.#run(async () => unwrap(await tx.exec()));
  }

  /** One counter's standing. */
  async standing(key: string): Promise<WindowStanding> {
    const [count, ttl] = await this.#run(async () => unwrap(await this.redis.multi().get(key).ttl(key).exec()));
    return { count: Number(count ?? 0), reset: Math.max(0, Number(ttl)) };
  }

  /** Count one more on `key`; its standing after. */
  async count(key: string): Promise<WindowStanding> {
    const [count, , ttl] = await this.#run(async () =>
      unwrap(await this.redis.multi().incr(key).expire(key, this.windowSeconds, 'NX').ttl(key).exec()),
    );
    return { count: Number(count), reset: Number(ttl) > 0 ? Number(ttl) : this.windowSeconds };
  }

  async clear(key: string): Promise<void> {
    await this.redis.del(key).catch(() => {});
  }

  async #run<T>(f: () => Promise<T>): Promise<T> {
    try {
      return await f();
    } catch {
      throw new ServiceUnavailable(`${this.what} is temporarily unavailable`, 5);
    }
  }
}

function unwrap(replies: [Error | null, unknown][] | null): unknown[] {
  return (replies ?? []).map(([err, value]) => {
    if (err) throw err;
    return value;
  });
}

/**
 * Failed sign-ins, counted so that nobody can lock an account's owner out:
 * - per (client address, account): `maxFailures` failures lock that pair for the window (guessing
 *   one account's password from one address), even with the right password;
 * - per client address, whatever the accounts: 4 × `maxFailures` failures throttle that address
 *   (spraying passwords over many accounts).
 * The account itself is never locked: its owner signs in from another address. A success clears
 * its pair's count (not the address's). An IPv6 client is its /64 (./client-address.ts).
 */
export class SignInThrottle {
  readonly #counters: WindowCounters;
  constructor(
    redis: Redis,
    private readonly prefix: string,
    private readonly maxFailures: number,
    windowSeconds: number,
  ) {
    this.#counters = new WindowCounters(redis, windowSeconds, 'Sign-in');
  }

  #keys(email: string, ip: string) {
    const client = addressKey(ip);
    return {
      pair: `${this.prefix}:signin-fail:pair:${client}:${email.toLowerCase()}`,
      ip: `${this.prefix}:signin-fail:ip:${client}`,
    };
  }

  /** Seconds until another attempt is allowed, or 0 when one is allowed now. */
  retryAfter(email: string, ip: string): Promise<number> {
    const keys = this.#keys(email, ip);
    return this.#counters.wait([
      [keys.pair, this.maxFailures],
      [keys.ip, this.maxFailures * 4],
    ]);
  }

  recordFailure(email: string, ip: string): Promise<void> {
    const keys = this.#keys(email, ip);
    return this.#counters.add([keys.pair, keys.ip]);
  }

  recordSuccess(email: string, ip: string): Promise<void> {
    return this.#counters.clear(this.#keys(email, ip).pair);
  }
}

/**
 * Sign-up attempts per client address that reach the account check (an account created, or the
 * answer that the email already has one): at most `max` in the window, so the sign-up form cannot be
 * used to test many addresses for accounts.
 */
export class SignUpThrottle {
  readonly #counters: WindowCounters;
  constructor(
    redis: Redis,
    private readonly prefix: string,
    private readonly max: number,
    windowSeconds: number,
  ) {
    this.#counters = new WindowCounters(redis, windowSeconds, 'Sign-up');
  }

  #key(ip: string) {
    return `${this.prefix}:signup:ip:${addressKey(ip)}`;
  }

  /** Seconds until another sign-up is allowed from this address, or 0 when one is allowed now. */
  retryAfter(ip: string): Promise<number> {
    return this.#counters.wait([[this.#key(ip), this.max]]);
  }

  recordAttempt(ip: string): Promise<void> {
    return this.#counters.add([this.#key(ip)]);
  }
}
