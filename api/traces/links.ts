import type { ActivityRow, Db, TraceRow } from '../../db/database.ts';
import { appMetadataOf } from '../../db/app-metadata.ts';
import { activitiesContaining, tracesWithin } from '../../db/traces.ts';
import { traceOut, type TraceDetailsOut } from './model.ts';

/**
 * Traces and activities refer to each other by time (API.md Traces): a trace within an activity's
 * span carries that activity and its lap; an activity lists the traces within it. Each side reads
 * the other in one query per request, with the calling application's metadata on both.
 */

/** Traces as clients see them: each with its containing activity, lap and the caller's metadata. */
export async function linkedTraces(db: Db, userId: string, clientId: string | undefined, rows: TraceRow[]): Promise<TraceDetailsOut[]> {
  const containing = await activitiesContaining(db, userId, rows);
  const [traceMetadata, activityMetadata] = await Promise.all([
    appMetadataOf(db, 'trace', clientId, rows.map((r) => r.id)),
    appMetadataOf(db, 'activity', clientId, [...new Set([...containing.values()].map((a) => a.id))]),
  ]);
  return rows.map((row) => {
    const activity = containing.get(row.id);
    return traceOut(row, {
      activity: activity && { row: activity, appMetadata: activityMetadata.get(activity.id) ?? null },
      appMetadata: traceMetadata.get(row.id) ?? null,
    });
  });
}

/**
 * The traces within each activity, oldest first. Inside an activity, each trace's `activity` is
 * that activity (so a trace within two overlapping activities appears in both).
 */
export async function tracesOfActivities(
  db: Db,
  userId: string,
  clientId: string | undefined,
  activities: ActivityRow[],
  activityMetadata: Map<string, Record<string, unknown>>,
): Promise<Map<string, TraceDetailsOut[]>> {
  const within = await tracesWithin(db, userId, activities);
  const traceIds = [...new Set([...within.values()].flat().map((t) => t.id))];
  const traceMetadata = await appMetadataOf(db, 'trace', clientId, traceIds);
  const out = new Map<string, TraceDetailsOut[]>();
  for (const activity of activities) {
    const link = { row: activity, appMetadata: activityMetadata.get(activity.id) ?? null };
    out.set(activity.id, (within.get(activity.id) ?? []).map((t) => traceOut(t, { activity: link, appMetadata: traceMetadata.get(t.id) ?? null })));
  }
  return out;
}
