import { z } from 'zod';
import type { Db, TestRow } from '../../../db/database.ts';
import { newestTestWith } from '../../../db/tests.ts';
import { formatInstant, formatLocal } from '../../../lib/time.ts';

/**
 * The lab test beside the intensity-duration model (GET /api/v1/profile/intensity-duration-model,
 * `test`): the user's newest test, of the model's sport when one is asked for, started on or before
 * the window's last day, whose results hold the critical value of the model's metric. A client then
 * compares the field data's fit with the lab's values, or prefers the lab's when the test is newer
 * than the oldest efforts the fit uses (`newer_than_window`).
 */

/** The results members of each metric: the critical value and the work capacity. */
const MEMBERS = {
  power: { critical: 'critical_power', capacity: 'w_prime' },
  speed: { critical: 'critical_speed', capacity: 'd_prime' },
} as const;

export const ModelTestOut = z
  .object({
    id: z.string(),
    start: z.string().describe('UTC instant, `Z`'),
    title: z.string().nullable(),
    critical_intensity: z.number().describe("The test's `critical_power` (W) or `critical_speed` (m/s)"),
    work_capacity: z.number().nullable().describe("The test's `w_prime` (J) or `d_prime` (m); null when its results hold none"),
    newer_than_window: z
      .boolean()
      .describe(
        "True when the test's local start day (on the offset its start was written with) is after the window's first day: " +
          'the test is newer than the oldest efforts the model may be fitted to, so its values may describe the athlete better than the fit',
      ),
  })
  .nullable()
  .meta({
    description:
      "The user's newest test (of `sport` when given; started on or before `date`, local day) whose results hold the metric's critical value " +
      '(`critical_power` for power, `critical_speed` for speed), with its work capacity (`w_prime`, `d_prime`); null when there is none',
  });
export type ModelTestOut = z.output<typeof ModelTestOut>;

/** The local day (YYYY-MM-DD) a test started on, on its own offset. */
const localDay = (row: TestRow) => formatLocal(row.start_time, row.utc_offset_seconds).slice(0, 10);

/** The member for the window [`windowStart`, `windowEnd`] (local days) of a model of `metric`. */
export async function modelTest(
  db: Db,
  userId: string,
  q: { metric: 'power' | 'speed'; windowStart: string; windowEnd: string; sport?: string | undefined },
): Promise<ModelTestOut> {
  const { critical, capacity } = MEMBERS[q.metric];
  const row = await newestTestWith(db, userId, critical, { toDay: q.windowEnd, ...(q.sport ? { sports: [q.sport] } : {}) });
  if (!row) return null;
  const results = row.results ?? {};
  const workCapacity = results[capacity];
  return {
    id: row.id,
    start: formatInstant(row.start_time),
    title: row.title,
    critical_intensity: results[critical] as number,
    work_capacity: typeof workCapacity === 'number' ? workCapacity : null,
    newer_than_window: localDay(row) > q.windowStart,
  };
}
