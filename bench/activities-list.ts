import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import * as sources from '../db/sources.ts';
import * as activities from '../db/activities.ts';
import type { NewActivity } from '../db/activities.ts';
import * as traces from '../db/traces.ts';
import * as appMetadata from '../db/app-metadata.ts';
import * as ingest from '../engine/ingest/ingest.ts';
import { buildRideFit } from '../test/helpers/synthetic.ts';

const DAY = 86_400_000;

/** The product code seeding uses: this checkout's, or a tree's (`npm run bench -- compare`). */
export interface SeedProduct {
  sources: Pick<typeof sources, 'insertSource'>;
  activities: Pick<typeof activities, 'activityId' | 'storeActivities'>;
  traces: Pick<typeof traces, 'createTrace'>;
  appMetadata: Pick<typeof appMetadata, 'putAppMetadata'>;
  ingest: Pick<typeof ingest, 'ingestFile'>;
}

/**
 * The history behind the http target's `GET /api/v1/activities` (limit 50) row (docs/architecture.md, "Benchmarks"
 * (Targets)): `count` activities
 * on distinct days, each the row ingestion stores for a synthetic 2 h ride (summary of every
 * channel, 12 laps, curves), a trace within every other one, and the reading application's
 * metadata on every activity and trace, so that a page exercises all the list's reads (the
 * activities, their app metadata, the traces within them, the traces' app metadata).
 *
 * Idempotent: a user who already has `count` activities is left as they are.
 *
 * `product`: the modules that parse the ride and store the rows, this checkout's by default;
 * `npm run bench -- compare` passes those of the tree it seeds (bench/compare/families/http-api.ts).
 */
export async function seedActivityList(
  db: Db,
  userId: string,
  applicationId: string,
  count: number,
  product: SeedProduct = { sources, activities, traces, appMetadata, ingest },
): Promise<void> {
  const { insertSource } = product.sources;
  const { activityId, storeActivities } = product.activities;
  const { createTrace } = product.traces;
  const { putAppMetadata } = product.appMetadata;
  const { ingestFile } = product.ingest;
  const have = await db
    .selectFrom('activities')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  if (Number(have.n) >= count) return;
  await db.deleteFrom('sources').where('user_id', '=', userId).execute();

  const newest = Date.UTC(2026, 9, 31, 7);
  const bytes = buildRideFit({ start: new Date(newest), seconds: 7200, seed: 7 });
  const parsed = await ingestFile({ format: 'fit', bytes, sport: null });
  if (!parsed.ok) throw new Error(`the synthetic ride did not parse: ${parsed.message}`);
  const ride = parsed.activities[0]!;

  let next = 0;
  const one = async (i: number) => {
    const shift = -i * DAY;
    const { source } = await insertSource(db, {
      user_id: userId,
      type: 'fit',
      origin: 'backfill',
      filename: `ride-${i}.fit`,
      content_sha256: randomBytes(32).toString('hex'),
      size_bytes: bytes.byteLength,
      sport: null,
    });
    const row: NewActivity = {
      id: activityId(source.id, 0),
      session_index: 0,
      sport: i % 5 === 0 ? 'cycling.road' : ride.sport,
      start_time: new Date(ride.start + shift),
      end_time: new Date(ride.end + shift),
      utc_offset_seconds: ride.utcOffsetSeconds,
      metrics: ride.metrics,
      summary: ride.summary,
      laps: ride.laps.map((lap) => ({ ...lap, start: lap.start + shift, end: lap.end + shift })),
      distance: ride.distance,
      devices: ride.devices,
      samples: ride.length,
      implausible_samples: ride.implausibleSamples,
      curves: ride.curves,
    };
    const now = new Date();
    await storeActivities(db, source, [row], now);
    await putAppMetadata(db, 'activity', row.id, applicationId, { planned_workout: `w-${i}`, rating: i % 10 }, now);
    if (i % 2 === 0) {
      const trace = await createTrace(
        db,
        userId,
        {
          time: new Date(ride.start + shift + 1800_000),
          utc_offset_seconds: ride.utcOffsetSeconds,
          test_id: null,
          lactate: 2.1,
          rpe: 6,
          notes: 'step 3',
          power: 250,
          speed: null,
          heart_rate: 152,
          vo2: null,
          tags: ['lactate'],
          sport: row.sport,
        },
        now,
      );
      await putAppMetadata(db, 'trace', trace.id, applicationId, { device: 'meter' }, now);
    }
  };
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let i = next++; i < count; i = next++) await one(i);
    }),
  );
  // Planner statistics as autovacuum would leave them after a bulk load (the list's joins depend on them).
  await sql`ANALYZE`.execute(db);
}
