import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * Password hashing with scrypt (RFC 7914), a random 16-byte salt per hash. The stored form records
 * its parameters so they can be raised later without invalidating existing hashes:
 *   scrypt$<log2 N>$<r>$<p>$<salt base64url>$<hash base64url>
 * crypto.scrypt runs on libuv's thread pool, not on the event loop.
 */
const PARAMS = { logN: 15, r: 8, p: 1, keylen: 32 };

function derive(password: string, salt: Buffer, logN: number, r: number, p: number, keylen: number): Promise<Buffer> {
  const N = 2 ** logN;
  const options: ScryptOptions = { N, r, p, maxmem: 256 * N * r };
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, keylen, options, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const { logN, r, p, keylen } = PARAMS;
  const key = await derive(password, salt, logN, r, p, keylen);
  return ['scrypt', logN, r, p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, logN, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !logN || !r || !p || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await derive(password, Buffer.from(salt, 'base64url'), Number(logN), Number(r), Number(p), expected.length);
  return timingSafeEqual(actual, expected);
}

/** A hash of a random password, checked when the email is unknown so both paths take as long. */
let decoy: Promise<string> | undefined;
export function decoyHash(): Promise<string> {
  decoy ??= hashPassword(randomBytes(16).toString('hex'));
  return decoy;
}

const COMMON = new Set([
  'password',
  'password1',
  'password12',
  'password123',
  'password1234',
  '1234567890',
  '12345678910',
  'qwertyuiop',
  'qwerty1234',
  'qwerty12345',
  '1q2w3e4r5t',
  'iloveyou12',
  'letmein123',
  'welcome123',
  'administrator',
  'passw0rd123',
  'football123',
  'baseball123',
  'trustno1234',
  'abcdefghij',
  'abc1234567',
  'sunshine123',
  'princess123',
  'dragon1234',
  'monkey1234',
  'changeme123',
  'zaq12wsxcde',
  'asdfghjkl1',
]);

export const PASSWORD_MIN_LENGTH = 10;

/** Why a password is too weak, or null when it is acceptable. */
/** Every rule passwordProblem checks, in one sentence for the sign-up form. */
export const PASSWORD_RULES = `At least ${PASSWORD_MIN_LENGTH} and at most 200 characters, with at least 5 different characters; not a common password, and not containing your email address or name.`;

export function passwordProblem(password: string, context: { email?: string; names?: string[] } = {}): string | null {
  if (password.length < PASSWORD_MIN_LENGTH) return `Password must be at least ${PASSWORD_MIN_LENGTH} characters long.`;
  if (password.length > 200) return 'Password must be at most 200 characters long.';
  if (new Set(password).size < 5) return 'Password must use at least 5 different characters.';
  const lower = password.toLowerCase();
  if (COMMON.has(lower)) return 'This password is too common.';
  const personal = [context.email, context.email?.split('@')[0], ...(context.names ?? [])]
    .filter((s): s is string => !!s && s.length >= 4)
    .map((s) => s.toLowerCase());
  if (personal.some((s) => lower.includes(s))) return 'Password must not contain your email address or name.';
  return null;
}
