import type { Db } from './database.ts';
import { type ObjectStore, StoreUnavailable } from '../lib/object-store.ts';

/**
 * Removing the objects of deleted rows. The row goes first (no reader looks for its objects after),
 * then the objects; when the store is out of reach their keys are kept in `object_deletions` and
 * housekeeping removes them once it answers (removeQueuedObjects), so no object outlives its row for good.
 * A key ending in `/` is a prefix: every object under it (a deleted user's).
 */
export async function removeObjects(db: Db, store: ObjectStore, keys: readonly string[]): Promise<{ queued: boolean }> {
  if (!keys.length) return { queued: false };
  try {
    await removeKeys(store, keys);
    return { queued: false };
  } catch (err) {
    await db
      .insertInto('object_deletions')
      .values(keys.map((key) => ({ key })))
      .onConflict((oc) => oc.column('key').doNothing())
      .execute();
    if (err instanceof StoreUnavailable) return { queued: true };
    throw err;
  }
}

/** The queued removals, in batches; how many objects went. Stops at the first batch the store refuses (tried again next time). */
export async function removeQueuedObjects(db: Db, store: ObjectStore, batch = 500): Promise<number> {
  let removed = 0;
  for (;;) {
    const rows = await db.selectFrom('object_deletions').select('key').orderBy('queued_at').limit(batch).execute();
    if (!rows.length) return removed;
    const keys = rows.map((r) => r.key);
    await removeKeys(store, keys);
    await db.deleteFrom('object_deletions').where('key', 'in', keys).execute();
    removed += keys.length;
    if (rows.length < batch) return removed;
  }
}

async function removeKeys(store: ObjectStore, keys: readonly string[]): Promise<void> {
  const prefixes = keys.filter((k) => k.endsWith('/'));
  await store.remove(keys.filter((k) => !k.endsWith('/')));
  for (const prefix of prefixes) await store.removePrefix(prefix);
}
