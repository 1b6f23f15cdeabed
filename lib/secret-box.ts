import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** Stored values sealed by a SecretBox start with this; anything else is a value stored before sealing. */
export const SEALED_PREFIX = 'tds-sealed:v1:';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class SecretUnreadable extends Error {
  constructor(context: string) {
    super(`${context} cannot be decrypted with this server's secrets key (SECRETS_KEY, or secrets.key in DATA_DIR)`);
    this.name = 'SecretUnreadable';
  }
}

/**
 * Secrets the server must read back (token signing keys, webhook secrets) are kept in PostgreSQL
 * sealed with AES-256-GCM under a key that lives outside the database, so a leaked dump or backup
 * does not give them away. Each value is bound to what it belongs to (`context`, the GCM
 * associated data): a sealed value copied onto another row does not open.
 */
export class SecretBox {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== KEY_BYTES) throw new RangeError(`a secrets key is ${KEY_BYTES} bytes, not ${key.length}`);
    this.#key = Buffer.from(key);
  }

  seal(plaintext: string, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return SEALED_PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
  }

  /** The plaintext of a sealed value; a value stored before sealing existed is returned as it is. */
  open(stored: string, context: string): string {
    if (!isSealed(stored)) return stored;
    const raw = Buffer.from(stored.slice(SEALED_PREFIX.length), 'base64url');
    if (raw.length < IV_BYTES + TAG_BYTES) throw new SecretUnreadable(context);
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, raw.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretUnreadable(context);
    }
  }
}

export function isSealed(stored: string): boolean {
  return stored.startsWith(SEALED_PREFIX);
}

/** The file holding the generated key when SECRETS_KEY is not set. */
export function secretsKeyPath(dataDir: string): string {
  return path.join(dataDir, 'secrets.key');
}

/**
 * The server's SecretBox: SECRETS_KEY when set (32 bytes, base64 or base64url), else the key in
 * DATA_DIR/secrets.key, generated (mode 0600) by the first process that needs it. DATA_DIR is
 * already shared by the API and the workers, and is not part of a database backup.
 */
export async function loadSecretBox(config: { SECRETS_KEY?: string | undefined; DATA_DIR: string }): Promise<SecretBox> {
  if (config.SECRETS_KEY) return new SecretBox(decodeSecretsKey(config.SECRETS_KEY)!);
  const file = secretsKeyPath(config.DATA_DIR);
  await mkdir(path.dirname(file), { recursive: true });
  // Written whole under a temporary name, then linked into place: when two processes start together,
  // one key wins and both read it (a link never replaces an existing file).
  const tmp = `${file}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  await writeFile(tmp, `${randomBytes(KEY_BYTES).toString('base64url')}\n`, { flag: 'wx', mode: 0o600 });
  try {
    await link(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
  const key = decodeSecretsKey((await readFile(file, 'utf8')).trim());
  if (!key) throw new Error(`${file} does not hold a ${KEY_BYTES}-byte base64 key`);
  return new SecretBox(key);
}

/** A 32-byte key from base64 or base64url text; undefined when it is not one. */
export function decodeSecretsKey(text: string): Buffer | undefined {
  if (!/^[A-Za-z0-9+/_-]{43}={0,1}$/.test(text)) return undefined;
  const key = Buffer.from(text.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''), 'base64url');
  return key.length === KEY_BYTES ? key : undefined;
}
