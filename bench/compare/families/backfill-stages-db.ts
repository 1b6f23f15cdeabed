import type * as Activities from '../../../db/activities.ts';
import type * as Backfills from '../../../db/backfills.ts';
import type * as Database from '../../../db/database.ts';
import type * as Sources from '../../../db/sources.ts';
import type * as Users from '../../../db/users.ts';
import type { IngestedActivity } from '../../../engine/ingest/ingested.ts';
import type * as DatabaseHelpers from '../../../test/helpers/database.ts';
import type * as Infra from '../../../test/helpers/infra.ts';
import type { Row, Tree } from '../row.ts';

/**
 * The ingest job's PostgreSQL statements as backfill-stages rows (bench/backfill-stages.ts's
 * PostgreSQL part), the tree's own functions on a throwaway database the tree's test helpers make
 * and migrate: one sample is one findSource, one storeActivities transaction (the activity of the
 * synthetic ride, its curves and events, for a source still `processing`), or one
 * completeBackfillIfDone of a backfill that still has a file waiting. As in the benchmark, every
 * source belongs to that backfill. storeActivities needs a new `processing` source each time: they
 * are inserted beforehand, POOL at a time in one statement (again, within a sample, when used up).
 */
const POOL = 2000;

type Source = Awaited<ReturnType<typeof Sources.findSource>> & {};

/**
 * The user and the `loading` backfill the stages write into (bench/backfill-stages.ts's and these
 * rows'), and the fields of one of its files' source, recorded at `recordedAt`.
 */
export async function stagesBackfill(db: Database.Db, createUser: typeof Users.createUser, recordedAt: Date) {
  const user = await createUser(db, { email: 'stages@example.com', first_name: 'S', last_name: 'T', password_hash: 'x' });
  const backfill = await db
    .insertInto('backfills')
    .values({ user_id: user.id, origin: 'api', filename: 'history.zip', status: 'loading' })
    .returning('id')
    .executeTakeFirstOrThrow();
  const sourceFields = (filename: string) => ({
    user_id: user.id,
    type: 'fit' as const,
    origin: 'backfill' as const,
    filename,
    content_sha256: crypto.randomUUID().replaceAll('-', '').padEnd(64, '0'),
    size_bytes: 1,
    sport: null,
    tags: [],
    backfill_id: backfill.id,
    recorded_at: recordedAt,
  });
  return { userId: user.id, backfillId: backfill.id, sourceFields };
}

/** The activity row the ingest job stores for session 0 of an ingested activity. */
export function activityRow(id: string, a: IngestedActivity): Activities.NewActivity {
  return {
    id,
    session_index: 0,
    sport: a.sport,
    start_time: new Date(a.start),
    end_time: new Date(a.end),
    utc_offset_seconds: a.utcOffsetSeconds,
    metrics: a.metrics,
    summary: a.summary,
    laps: a.laps as unknown as Database.StoredLap[],
    distance: a.distance,
    devices: a.devices,
    samples: a.length,
    implausible_samples: a.implausibleSamples,
    curves: a.curves,
  };
}

export async function databaseRows(tree: Tree, activity: IngestedActivity): Promise<{ rows: Row[]; close: () => Promise<void> }> {
  const { infrastructure } = await tree.load<typeof Infra>('test/helpers/infra.ts');
  const { createTestDatabase } = await tree.load<typeof DatabaseHelpers>('test/helpers/database.ts');
  const { createDb } = await tree.load<typeof Database>('db/database.ts');
  const { createUser } = await tree.load<typeof Users>('db/users.ts');
  const { findSource, insertSource } = await tree.load<typeof Sources>('db/sources.ts');
  const { activityId, storeActivities } = await tree.load<typeof Activities>('db/activities.ts');
  const { completeBackfillIfDone } = await tree.load<typeof Backfills>('db/backfills.ts');

  const database = await createTestDatabase((await infrastructure()).postgresUrl);
  const db = createDb(database.url, 4);
  const close = async () => {
    await db.destroy();
    await database.drop();
  };
  try {
    const { backfillId, sourceFields: fields } = await stagesBackfill(db, createUser, new Date(activity.start));
    // A file that stays waiting: the backfill is never complete.
    const { source: waiting } = await insertSource(db, { id: crypto.randomUUID(), ...fields('waiting.fit') });
    const pool: Source[] = [];
    let made = 0;
    const refill = async () => {
      for (let i = 0; i < POOL; i += 500) {
        const batch = Array.from({ length: 500 }, () => ({ id: crypto.randomUUID(), ...fields(`${made++}.fit`) }));
        pool.push(...((await db.insertInto('sources').values(batch).returningAll().execute()) as Source[]));
      }
    };
    await refill();

    const rows: Row[] = [
      {
        id: 'backfill-stages/pg-find-source',
        label: 'PostgreSQL: findSource',
        run: () => findSource(db, waiting.id),
      },
      {
        id: 'backfill-stages/pg-store-activities',
        label: 'PostgreSQL: storeActivities transaction (the ride\u2019s activity, curves, events)',
        run: async () => {
          if (!pool.length) await refill();
          const source = pool.pop()!;
          if (!(await storeActivities(db, source, [activityRow(activityId(source.id, 0), activity)], new Date())))
            throw new Error(`source ${source.id} was not processing`);
        },
      },
      {
        id: 'backfill-stages/pg-complete-backfill-if-done',
        label: 'PostgreSQL: completeBackfillIfDone (a file still waiting)',
        run: async () => {
          if (await completeBackfillIfDone(db, backfillId, new Date())) throw new Error('the backfill completed with a file waiting');
        },
      },
    ];
    return { rows, close };
  } catch (err) {
    await close();
    throw err;
  }
}
