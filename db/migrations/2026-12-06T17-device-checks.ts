import type { Kysely } from 'kysely';

// Frozen in time: never import application code here.
export async function up(db: Kysely<any>): Promise<void> {
  // The data checks made at ingest: per device summary field, whether ours agrees with the device's
  // value and, if not, the named rule that explains it ({"normalized_power": {"agrees": false,
  // "rule": "np-above-best-30s"}}); null for files without a device summary and activities stored
  // before (npm run cli -- reprocess --all makes them).
  await db.schema.alterTable('activities').addColumn('device_checks', 'jsonb').execute();
}
