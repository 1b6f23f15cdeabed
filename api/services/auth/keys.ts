import { generateKeyPair, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { exportJWK, importPKCS8, importJWK, type JWK, type CryptoKey } from 'jose';
import type { Db } from '../../../db/database.ts';
import { activateKey, listPublishedKeys, RETIRED_KEY_RETENTION_SECONDS, sealStoredKeys } from '../../../db/signing-keys.ts';
import type { SecretBox } from '../../../lib/secret-box.ts';

const generateRsa = promisify(generateKeyPair);

/** How often a process re-reads the keys, so a rotation made elsewhere reaches it. */
const REFRESH_MS = 60_000;
/** A token naming an unknown kid triggers at most one re-read per this interval. */
const UNKNOWN_KID_RELOAD_MS = 5_000;

interface LoadedKey {
  kid: string;
  publicJwk: JWK;
  publicKey: CryptoKey;
  privateKey: CryptoKey;
  active: boolean;
}

/** What a stored private key is bound to (lib/secret-box.ts): its own kid. */
const keyContext = (kid: string) => `signing_keys.private_key_pem:${kid}`;

async function newKeyMaterial(box: SecretBox) {
  const { privateKey, publicKey } = await generateRsa('rsa', { modulusLength: 2048 });
  const kid = randomBytes(12).toString('base64url');
  const public_jwk = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
  const private_key_pem = box.seal(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), keyContext(kid));
  return { kid, private_key_pem, public_jwk };
}

/**
 * RS256 signing keys, persisted in PostgreSQL so they survive restarts and are shared by every API
 * process, the private keys sealed by the server's SecretBox. Exactly one key is active (signs);
 * retired keys stay verifiable and published until the tokens they signed have expired.
 */
export class KeyStore {
  #keys: LoadedKey[] = [];
  #loadedAt = 0;
  #lastUnknownKidReload = 0;
  #loading: Promise<void> | undefined;

  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Load the keys, creating the first one when the database has none; keys stored before sealing existed are sealed. */
  async init(): Promise<void> {
    await sealStoredKeys(this.db, (pem, kid) => this.box.seal(pem, keyContext(kid)));
    await this.reload();
    if (!this.#keys.some((k) => k.active)) {
      await activateKey(this.db, await newKeyMaterial(this.box), { onlyIfNoneActive: true });
      await this.reload();
    }
  }

  /** Make a new active key; the previous one keeps verifying until its tokens expire. */
  async rotate(): Promise<string> {
    const material = await newKeyMaterial(this.box);
    await activateKey(this.db, material, { onlyIfNoneActive: false });
    await this.reload();
    return material.kid;
  }

  async signingKey(): Promise<{ kid: string; key: CryptoKey }> {
    await this.#maybeRefresh();
    const active = this.#keys.find((k) => k.active);
    if (!active) throw new Error('no active signing key: KeyStore.init() was not called');
    return { kid: active.kid, key: active.privateKey };
  }

  async verificationKey(kid: string): Promise<CryptoKey | undefined> {
    await this.#maybeRefresh();
    let key = this.#keys.find((k) => k.kid === kid);
    const t = Date.now();
    if (!key && t - this.#lastUnknownKidReload > UNKNOWN_KID_RELOAD_MS) {
      this.#lastUnknownKidReload = t;
      await this.reload();
      key = this.#keys.find((k) => k.kid === kid);
    }
    return key?.publicKey;
  }

  async jwks(): Promise<{ keys: JWK[] }> {
    await this.#maybeRefresh();
    return { keys: this.#keys.map((k) => k.publicJwk) };
  }

  async #maybeRefresh() {
    if (Date.now() - this.#loadedAt > REFRESH_MS) await this.reload();
  }

  reload(): Promise<void> {
    this.#loading ??= (async () => {
      try {
        const since = new Date(this.now().getTime() - RETIRED_KEY_RETENTION_SECONDS * 1000);
        const rows = await listPublishedKeys(this.db, since);
        this.#keys = await Promise.all(
          rows.map(async (row) => {
            const publicJwk = row.public_jwk as JWK;
            return {
              kid: row.kid,
              publicJwk,
              publicKey: (await importJWK(publicJwk, 'RS256')) as CryptoKey,
              privateKey: await importPKCS8(this.box.open(row.private_key_pem, keyContext(row.kid)), 'RS256'),
              active: row.retired_at === null,
            };
          }),
        );
        this.#loadedAt = Date.now();
      } finally {
        this.#loading = undefined;
      }
    })();
    return this.#loading;
  }
}
