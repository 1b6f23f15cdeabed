import type { Deps } from '../deps.ts';
import { activityLoadRow } from '../../../db/training-load.ts';
import type { SampleFile } from '../../../engine/samples/sample-file.ts';

/** The critical power and W′ an activity's load row used (declared, from a test or modelled); null without both, or before the row is computed. */
export async function wPrimeThresholds(deps: Pick<Deps, 'db'>, activityId: string): Promise<{ cp: number; wPrime: number } | null> {
  const used = (await activityLoadRow(deps.db, activityId))?.thresholds as Record<string, { value: number } | undefined> | undefined;
  const cp = used?.critical_power?.value;
  const wPrime = used?.w_prime?.value;
  return cp && wPrime ? { cp, wPrime } : null;
}

/**
 * An activity's W′ balance at every second (J), under the thresholds its `w_prime_balance_min` used
 * (the engine's `w-prime-balance` task); NaN throughout without power or without both thresholds.
 */
export function wPrimeBalanceOf(
  deps: Pick<Deps, 'engine'>,
  thresholds: { cp: number; wPrime: number } | null,
  file: SampleFile,
  signal?: AbortSignal,
): Promise<Float64Array> | Float64Array {
  const power = file.channels.power;
  if (!power || !thresholds) return new Float64Array(file.length).fill(Number.NaN);
  return deps.engine.pool.wPrimeBalance({ power: power.slice(), ...thresholds }, signal);
}
