import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Opaque credentials: 256 random bits, base64url, with a readable prefix so a leaked one is easy to
 * recognise (and to scan for). Stored only as SHA-256: with that much entropy a slow hash adds nothing.
 */
export function newSecret(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

export function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

export function constantTimeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export const SECRET_PREFIX = {
  clientSecret: 'tds_cs_',
  refreshToken: 'tds_rt_',
  code: 'tds_ac_',
  webhookSecret: 'tds_whs_',
  teamInvitation: 'tds_inv_',
} as const;
