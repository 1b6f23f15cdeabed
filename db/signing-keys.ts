import { SEALED_PREFIX } from '../lib/secret-box.ts';
import { sql } from 'kysely';
import type { Db, SigningKey } from './database.ts';

/**
 * How long a retired key stays published and verifiable: longer than the access-token lifetime
 * (15 minutes), so every token it signed has expired before it disappears.
 */
export const RETIRED_KEY_RETENTION_SECONDS = 20 * 60;

/** Keys still useful: active ones, and retired ones whose tokens may not have expired yet. */
export function listPublishedKeys(db: Db, retiredAfter: Date): Promise<SigningKey[]> {
  return db
    .selectFrom('signing_keys')
    .selectAll()
    .where((eb) => eb.or([eb('retired_at', 'is', null), eb('retired_at', '>', retiredAfter)]))
    .orderBy('created_at', 'desc')
    .orderBy('kid', 'desc')
    .execute();
}

/**
 * Insert `key` as the only active key, retiring the others, in one transaction under an advisory
 * lock so that two processes creating or rotating keys at once end with exactly one active key.
 */
export async function activateKey(
  db: Db,
  key: { kid: string; private_key_pem: string; public_jwk: object },
  opts: { onlyIfNoneActive: boolean },
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    await sql`SELECT pg_advisory_xact_lock(hashtext('signing_keys'))`.execute(trx);
    if (opts.onlyIfNoneActive) {
      const active = await trx.selectFrom('signing_keys').select('kid').where('retired_at', 'is', null).executeTakeFirst();
      if (active) return false;
    }
    await trx
      .updateTable('signing_keys')
      .set({ retired_at: sql`now()` as never })
      .where('retired_at', 'is', null)
      .execute();
    await trx
      .insertInto('signing_keys')
      .values({ ...key, public_jwk: JSON.stringify(key.public_jwk) })
      .execute();
    return true;
  });
}

export async function deleteRetiredKeys(db: Db, retiredBefore: Date): Promise<number> {
  const res = await db.deleteFrom('signing_keys').where('retired_at', '<=', retiredBefore).executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** Seal the private keys stored before sealing existed (each row only if it still holds that plaintext). */
export async function sealStoredKeys(db: Db, seal: (pem: string, kid: string) => string): Promise<number> {
  const plain = await db
    .selectFrom('signing_keys')
    .select(['kid', 'private_key_pem'])
    .where('private_key_pem', 'not like', `${SEALED_PREFIX}%`)
    .execute();
  for (const row of plain) {
    await db
      .updateTable('signing_keys')
      .set({ private_key_pem: seal(row.private_key_pem, row.kid) })
      .where('kid', '=', row.kid)
      .where('private_key_pem', '=', row.private_key_pem)
      .execute();
  }
  return plain.length;
}
