import type { Db } from '../../../db/database.ts';
import { dailyStress } from '../../../db/training-load.ts';
import { performanceManagement } from '../../../engine/load/pmc.ts';
import type { FrameColumn } from '../../../engine/frames/frame.ts';

const DAY_MS = 86_400_000;
const msOf = (day: string) => Date.parse(`${day}T00:00:00Z`);

/** The longest range one request computes (and the furthest back the loads start): 100 years of days. */
export const MAX_CHART_DAYS = 36_600;

/**
 * The performance management chart of a user's days `[fromDay, toDay]` (fromDay undefined: from the
 * first day with stress): the loads run from the first day with stress of the history (so a range's
 * first day carries all the training before it) or from MAX_CHART_DAYS before `toDay` when the history
 * is longer (the loads of a century ago are 0 to the last digit).
 */
export async function trainingLoadColumns(
  db: Db,
  userId: string,
  sports: string[] | undefined,
  fromDay: string | undefined,
  toDay: string,
) {
  const rows = await dailyStress(db, userId, sports, toDay);
  const end = msOf(toDay);
  const earliest = end - (MAX_CHART_DAYS - 1) * DAY_MS;
  const historyStart = rows.length ? Math.max(msOf(rows[0]!.day), earliest) : end;
  const from = fromDay === undefined ? historyStart : Math.max(msOf(fromDay), earliest);
  const first = Math.min(historyStart, from);
  const n = Math.max(0, Math.round((end - first) / DAY_MS) + 1);
  const stress = new Float64Array(n);
  for (const r of rows) {
    const d = Math.round((msOf(r.day) - first) / DAY_MS);
    if (d >= 0) stress[d]! += r.stress;
  }
  const pmc = performanceManagement(stress);
  const skip = Math.max(0, Math.round((from - first) / DAY_MS));
  const cut = (a: Float64Array) => a.subarray(skip);
  const date = new Float64Array(n - skip);
  for (let i = 0; i < date.length; i++) date[i] = from + i * DAY_MS;
  const columns: FrameColumn[] = [
    { name: 'date', type: 'timestamp', values: date },
    { name: 'stress', type: 'double', values: cut(stress) },
    { name: 'ctl', type: 'double', values: cut(pmc.ctl) },
    { name: 'atl', type: 'double', values: cut(pmc.atl) },
    { name: 'tsb', type: 'double', values: cut(pmc.tsb) },
    { name: 'ramp_rate', type: 'double', values: cut(pmc.ramp) },
  ];
  return columns;
}
