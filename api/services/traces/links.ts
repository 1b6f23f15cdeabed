import { activityLoadRow } from '../../../db/training-load.ts';
import type { ActivityRow, Db, TraceRow } from '../../../db/database.ts';
import { activityDetailsOut, traceOut, type ActivityDetailsOut, type TraceDetailsOut } from '../resources/activities-traces.ts';
import type { ActivitySummaryRow } from '../../../db/activities.ts';
import { appMetadataOf } from '../../../db/app-metadata.ts';
import { activitiesContaining, tracesWithin } from '../../../db/traces.ts';
import { testsOfTraces, type TestMatch } from '../../../db/tests.ts';
import type { TestRow } from '../../../db/database.ts';

/**
 * Traces and activities refer to each other by time (docs/api-clients.md, "Traces": Linking): a trace within an activity's
 * span carries that activity and its lap; an activity lists the traces within it. Each side reads
 * the other in one query per request, with the calling application's metadata on both. A trace also
 * carries the test it belongs to (db/tests.ts), read the same way.
 */

/** Each trace's test (db/tests.ts: explicit by `test_id`, or by time), with the caller's metadata on it. */
async function testLinks(
  db: Db,
  userId: string,
  clientId: string | undefined,
  rows: Pick<TraceRow, 'id' | 'time' | 'test_id'>[],
): Promise<Map<string, { row: TestRow; match: TestMatch; appMetadata: Record<string, unknown> | null }>> {
  const tests = await testsOfTraces(db, userId, rows);
  const metadata = await appMetadataOf(db, 'test', clientId, [...new Set([...tests.values()].map((t) => t.test.id))]);
  return new Map(
    [...tests].map(([traceId, { test, match }]) => [traceId, { row: test, match, appMetadata: metadata.get(test.id) ?? null }]),
  );
}

/** Traces as clients see them: each with its containing activity, lap, test and the caller's metadata. */
export async function linkedTraces(db: Db, userId: string, clientId: string | undefined, rows: TraceRow[]): Promise<TraceDetailsOut[]> {
  const containing = await activitiesContaining(db, userId, rows);
  const [traceMetadata, activityMetadata, tests] = await Promise.all([
    appMetadataOf(
      db,
      'trace',
      clientId,
      rows.map((r) => r.id),
    ),
    appMetadataOf(db, 'activity', clientId, [...new Set([...containing.values()].map((c) => c.activity.id))]),
    testLinks(db, userId, clientId, rows),
  ]);
  return rows.map((row) => {
    const link = containing.get(row.id);
    return traceOut(row, {
      activity: link && { row: link.activity, appMetadata: activityMetadata.get(link.activity.id) ?? null, lap: link.lap },
      appMetadata: traceMetadata.get(row.id) ?? null,
      test: tests.get(row.id),
    });
  });
}

/** An activity as lists show it, with the reading application's metadata on it. */
export type ActivityWithMetadata = ActivitySummaryRow & { app_metadata: Record<string, unknown> | null };

/**
 * The traces within each activity, oldest first. Inside an activity, each trace's `activity` is
 * that activity (so a trace within two overlapping activities appears in both).
 */
export async function tracesOfActivities(
  db: Db,
  userId: string,
  clientId: string | undefined,
  activities: ActivityWithMetadata[],
): Promise<Map<string, TraceDetailsOut[]>> {
  const within = await tracesWithin(db, userId, clientId, activities);
  const tests = await testLinks(db, userId, clientId, [...within.values()].flat());
  const out = new Map<string, TraceDetailsOut[]>();
  for (const { app_metadata, ...activity } of activities) {
    const traces = within.get(activity.id) ?? [];
    out.set(
      activity.id,
      traces.map(({ app_metadata: traceMetadata, lap, ...trace }) =>
        traceOut(trace, {
          activity: { row: activity, appMetadata: app_metadata, lap },
          appMetadata: traceMetadata,
          test: tests.get(trace.id),
        }),
      ),
    );
  }
  return out;
}

/** One activity as clients read it (ActivityDetails): laps, the traces within it, the caller's metadata. */
export async function linkedActivity(db: Db, userId: string, clientId: string | undefined, row: ActivityRow): Promise<ActivityDetailsOut> {
  const metadata = (await appMetadataOf(db, 'activity', clientId, [row.id])).get(row.id) ?? null;
  const traces = await tracesOfActivities(db, userId, clientId, [{ ...row, app_metadata: metadata }]);
  return activityDetailsOut(row, metadata, traces.get(row.id) ?? [], await activityLoadRow(db, row.id));
}
