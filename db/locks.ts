import { sql } from 'kysely';
import type { Db } from './database.ts';

/**
 * A PostgreSQL advisory lock held for the length of `fn`: writers of one key in any process of the
 * deployment (API or worker, on any host) run one after the other. Transaction-scoped
 * (`pg_advisory_xact_lock`), so a process that dies holding it releases it with its connection.
 * Keys are hashed to 64 bits (`hashtextextended`); two keys sharing a hash only wait for each other.
 */
export function advisoryLock(db: Db) {
  return <T>(key: string, fn: () => Promise<T>): Promise<T> =>
    db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0))`.execute(trx);
      return fn();
    });
}
