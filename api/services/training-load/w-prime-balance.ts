import type { Deps } from '../deps.ts';
import type { ActivityRow } from '../../../db/database.ts';
import { trainingContext } from '../../../db/training-load.ts';
import { resolveThresholds } from '../../../engine/load/thresholds.ts';
import type { SampleFile } from '../../../engine/samples/sample-file.ts';
import { formatLocal } from '../../../lib/time.ts';

/**
 * An activity's W′ balance at every second (J), under the critical power and W′ of its day (the
 * engine's `w-prime-balance` task); NaN throughout without power or without both thresholds.
 */
export async function wPrimeBalanceOf(
  deps: Pick<Deps, 'db' | 'engine'>,
  activity: Pick<ActivityRow, 'user_id' | 'sport' | 'start_time' | 'utc_offset_seconds'>,
  file: SampleFile,
  signal?: AbortSignal,
): Promise<Float64Array> {
  const power = file.channels.power;
  const context = await trainingContext(deps.db, activity.user_id);
  const day = formatLocal(activity.start_time, activity.utc_offset_seconds).slice(0, 10);
  const t = resolveThresholds(context.entries, activity.sport, day);
  if (!power || !t.critical_power || !t.w_prime) return new Float64Array(file.length).fill(Number.NaN);
  return deps.engine.pool.wPrimeBalance({ power: power.slice(), cp: t.critical_power.value, wPrime: t.w_prime.value }, signal);
}
