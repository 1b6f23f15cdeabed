import { ZONE_METRICS, ZONE_THRESHOLD, timeInZones, zoneBounds, type ZoneBounds, type ZoneMetric, type ZoneModel } from './zones.ts';
import { trainingStress, type Stress, type StressInputs, type Thresholds } from './stress.ts';
import { skibaTau, wPrimeBalance } from './w-prime-balance.ts';
import { normalisedMean } from '../normalised-mean.ts';

/** Normalised speed's rolling window (s): normalized power's. */
const NORMALISED_WINDOW_SECONDS = 30;

/**
 * What an activity's thresholds make of it (the pool task `activity-load`): its training stress
 * (./stress.ts), its time in each zone of every metric it records whose threshold is known
 * (./zones.ts), and the lowest W′ balance of a ride with power, critical power and W′
 * (./w-prime-balance.ts, τ rounded down to whole seconds as GoldenCheetah does).
 */

export interface ActivityLoadInput {
  /** The 1 Hz channels the zones and W′ balance read (NaN: no value). */
  channels: Partial<Record<ZoneMetric, Float64Array>>;
  stress: Omit<StressInputs, 'normalisedSpeed'>;
  thresholds: Thresholds;
  /** The zone model of each metric. */
  zones: Record<ZoneMetric, ZoneModel>;
}

export interface ZoneSeconds extends ZoneBounds {
  seconds: number;
}

export interface ActivityLoad {
  stress: Stress;
  /** Per metric with samples and a threshold: its zones and the seconds in each. */
  timeInZones: Partial<Record<ZoneMetric, { model: string; zones: ZoneSeconds[] }>>;
  wPrimeBalanceMin: number | null;
}

/** Skiba's τ as GoldenCheetah uses it: rounded down to whole seconds. */
export function rideTau(power: Float64Array, cp: number): number {
  return Math.trunc(skibaTau(power, cp));
}

export function activityLoad(input: ActivityLoadInput): ActivityLoad {
  const { channels, thresholds } = input;
  const speed = channels.speed;
  const stress = trainingStress(
    { ...input.stress, normalisedSpeed: speed ? normalisedMean(speed, NORMALISED_WINDOW_SECONDS) : undefined },
    thresholds,
  );
  const zones: ActivityLoad['timeInZones'] = {};
  for (const metric of ZONE_METRICS) {
    const values = channels[metric];
    const threshold = thresholds[ZONE_THRESHOLD[metric]];
    if (!values?.some((x) => x === x) || !threshold) continue;
    const model = input.zones[metric];
    const bounds = zoneBounds(model.zones, threshold);
    const seconds = timeInZones(
      values,
      bounds.map((b) => b.low),
    );
    zones[metric] = { model: model.model, zones: bounds.map((b, i) => ({ ...b, seconds: seconds[i]! })) };
  }
  let wPrimeBalanceMin: number | null = null;
  const power = channels.power;
  const { critical_power: cp, w_prime: wPrime } = thresholds;
  if (power?.some((x) => x === x) && cp && wPrime) {
    const balance = wPrimeBalance(power, cp, wPrime, rideTau(power, cp));
    wPrimeBalanceMin = balance.reduce((m, x) => (x < m ? x : m), wPrime);
  }
  return { stress, timeInZones: zones, wPrimeBalanceMin };
}
