import { sql } from 'kysely';
import type { Deps } from '../deps.ts';
import { storedLevelCurve } from '../curves/longitudinal-mean-max.ts';
import type { Frame } from '../../../engine/frames/frame.ts';

/**
 * A team's roster as its coaches see it (docs/coaching.md, "The web app"): per athlete who authorised
 * the team, the latest activity, the training time of the last 7 days, and the best power over a few
 * durations in the latest 90 days beside the 90 before, from the curves stored at ingestion.
 */

export const ROSTER_DURATIONS = [5, 60, 300, 1200] as const;
const DAY_MS = 86_400_000;

export interface RosterEntry {
  latest: { id: string; sport: string; start: Date; name: string | null } | undefined;
  /** Timer seconds of the activities started in the last 7 days. */
  weekSeconds: number;
  /** Best power (W) at each of ROSTER_DURATIONS, in the latest 90 days and the 90 before; null where no ride reached it. */
  recent: (number | null)[];
  previous: (number | null)[];
}

/** The best value held for at least each duration, from a value-indexed curve frame (value, duration columns). */
function bestAt(frame: Frame, durations: readonly number[]): (number | null)[] {
  const [valueColumn, durationColumn] = frame.columns;
  if (!valueColumn || !durationColumn || valueColumn.type === 'string' || durationColumn.type === 'string')
    return durations.map(() => null);
  const values = valueColumn.values;
  const lengths = durationColumn.values;
  return durations.map((d) => {
    let best: number | null = null;
    for (let k = 0; k < values.length; k++) if (lengths[k]! >= d && (best === null || values[k]! > best)) best = values[k]!;
    return best;
  });
}

export async function rosterEntry(deps: Deps, userId: string, signal: AbortSignal): Promise<RosterEntry> {
  const now = deps.now().getTime();
  const latest = await deps.db
    .selectFrom('activities')
    .select(['id', 'sport', 'start_time as start', 'name'])
    .where('user_id', '=', userId)
    .orderBy('start_time', 'desc')
    .limit(1)
    .executeTakeFirst();
  const week = await deps.db
    .selectFrom('activities')
    .select(sql<string>`coalesce(sum(timer_seconds), 0)`.as('seconds'))
    .where('user_id', '=', userId)
    .where('start_time', '>=', new Date(now - 7 * DAY_MS))
    .executeTakeFirstOrThrow();
  const curve = async (from: number, until: number) =>
    bestAt(await storedLevelCurve(deps, userId, { from: new Date(from), until: new Date(until) }, 'power', signal), ROSTER_DURATIONS);
  return {
    latest,
    weekSeconds: Number(week.seconds),
    recent: await curve(now - 90 * DAY_MS, now + 1),
    previous: await curve(now - 180 * DAY_MS, now - 90 * DAY_MS),
  };
}
