import type { Database, Db } from './database.ts';
import type { Kysely, Transaction } from 'kysely';
import { bumpReadVersionOf } from './read-version.ts';

/**
 * Each application's own free-form object on an activity, a trace, a test or the profile (docs/app-developers.md,
 * "App metadata"): one row per (owner, application), so applications never see each other's.
 */
const TABLES = {
  activity: { table: 'activity_app_metadata', key: 'activity_id', owners: 'activities' },
  trace: { table: 'trace_app_metadata', key: 'trace_id', owners: 'traces' },
  test: { table: 'test_app_metadata', key: 'test_id', owners: 'tests' },
  profile: { table: 'profile_app_metadata', key: 'user_id', owners: undefined },
} as const;

export type AppMetadataOwner = keyof typeof TABLES;

// The three tables have the same shape under a different key column; kysely cannot type a table
// chosen at run time, so the queries below go through an untyped view of the database.
// biome-ignore lint/suspicious/noExplicitAny: the table is chosen at run time (see above)
const untyped = (db: Db | Transaction<Database>) => db as unknown as Kysely<any>;

/** One application's object for each of the given owners (absent when it has none). */
export async function appMetadataOf(
  db: Db,
  owner: AppMetadataOwner,
  applicationId: string | undefined,
  ids: string[],
): Promise<Map<string, Record<string, unknown>>> {
  const found = new Map<string, Record<string, unknown>>();
  if (!applicationId || !ids.length) return found;
  const { table, key } = TABLES[owner];
  const rows: { id: string; data: Record<string, unknown> }[] = await untyped(db)
    .selectFrom(table)
    .select([`${key} as id`, 'data'])
    .where('application_id', '=', applicationId)
    .where(key, 'in', ids)
    .execute();
  for (const row of rows) found.set(row.id, row.data);
  return found;
}

/** Replace one application's object on one owner. */
export async function putAppMetadata(
  db: Db,
  owner: AppMetadataOwner,
  id: string,
  applicationId: string,
  data: Record<string, unknown>,
  now: Date,
): Promise<void> {
  const { table, key, owners } = TABLES[owner];
  const json = JSON.stringify(data);
  await db.transaction().execute(async (trx) => {
    await untyped(trx)
      .insertInto(table)
      .values({ [key]: id, application_id: applicationId, data: json, updated_at: now })
      .onConflict((oc) => oc.columns([key, 'application_id']).doUpdateSet({ data: json, updated_at: now }))
      .execute();
    // Activity reads show the metadata on activities and traces (the profile's is read on its own).
    if (owners) await bumpReadVersionOf(trx, owners, id);
  });
}

export async function deleteAppMetadata(db: Db, owner: AppMetadataOwner, id: string, applicationId: string): Promise<void> {
  const { table, key, owners } = TABLES[owner];
  await db.transaction().execute(async (trx) => {
    const gone = await untyped(trx).deleteFrom(table).where(key, '=', id).where('application_id', '=', applicationId).executeTakeFirst();
    if (owners && gone.numDeletedRows > 0n) await bumpReadVersionOf(trx, owners, id);
  });
}
