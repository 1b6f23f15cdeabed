import type { Redis } from 'ioredis';
import { ServiceUnavailable } from '../errors.ts';

/**
 * Failed sign-ins counted in Redis per email address and per client address over a fixed window,
 * so the limit holds across every API process. Succeeding clears the email's count.
 */
export class SignInThrottle {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly maxFailures: number,
    private readonly windowSeconds: number,
  ) {}

  #keys(email: string, ip: string) {
    return { email: `${this.prefix}:signin-fail:email:${email.toLowerCase()}`, ip: `${this.prefix}:signin-fail:ip:${ip}` };
  }

  /** Seconds until another attempt is allowed, or 0 when one is allowed now. */
  async retryAfter(email: string, ip: string): Promise<number> {
    const keys = this.#keys(email, ip);
    try {
      const replies = await this.redis.multi().get(keys.email).get(keys.ip).ttl(keys.email).ttl(keys.ip).exec();
      const [e, i, eTtl, iTtl] = (replies ?? []).map(([err, value]) => {
        if (err) throw err;
        return value as string | number | null;
      });
      const waits = [
        Number(e ?? 0) >= this.maxFailures ? Number(eTtl) : 0,
        Number(i ?? 0) >= this.maxFailures * 4 ? Number(iTtl) : 0,
      ];
      return Math.max(0, ...waits);
    } catch {
      throw new ServiceUnavailable('Sign-in is temporarily unavailable', 5);
    }
  }

  async recordFailure(email: string, ip: string): Promise<void> {
    const keys = this.#keys(email, ip);
    try {
      await this.redis
        .multi()
        .incr(keys.email)
        .expire(keys.email, this.windowSeconds, 'NX')
        .incr(keys.ip)
        .expire(keys.ip, this.windowSeconds, 'NX')
        .exec();
    } catch {
      throw new ServiceUnavailable('Sign-in is temporarily unavailable', 5);
    }
  }

  async recordSuccess(email: string, ip: string): Promise<void> {
    await this.redis.del(this.#keys(email, ip).email).catch(() => {});
  }
}
