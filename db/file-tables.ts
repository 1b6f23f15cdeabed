import type { ColumnType, Generated } from 'kysely';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

/** The tables about files (part of db/database.ts's `Database`, which extends this). */
export interface FileTables {
  /** Objects of deleted rows the object store could not remove yet (db/object-deletions.ts). */
  object_deletions: { key: string; queued_at: Generated<Timestamp> };
  /** Each ride's fatigue grid, for every host's grid column (db/fatigue-grids.ts). */
  activity_fatigue_grids: { activity_id: string; layout: string; stamp: number; entry: Buffer };
}
