/**
 * Training zones: each a named band of one metric, its lower bound a percentage of a threshold, and
 * the seconds an activity spent in each.
 *
 * The default models (an athlete may edit the boundaries; the model is then `custom`):
 *
 *   power       `coggan`: Coggan's seven power levels as GoldenCheetah sets them by default
 *               (src/Metrics/Zones.cpp), % of critical power: 0, 55, 75, 90, 105, 120, 150
 *   heart rate  `friel-cycling` / `friel-running`: Joe Friel's seven zones, % of threshold heart rate
 *               (cycling: 0, 81, 90, 94, 100, 103, 106; running and other sports: 0, 85, 90, 95, 100, 103, 106)
 *   speed       `goldencheetah-pace-running` / `goldencheetah-pace-swimming`: GoldenCheetah's default pace
 *               zones (src/Metrics/PaceZones.cpp), % of critical speed (running and other sports: 0, 80,
 *               87, 95, 105, 119; swimming: 0, 93, 97, 99, 102, 109)
 *
 * A sample is in zone i when low_i ≤ value < low_{i+1} (the last zone has no upper bound; a value below
 * the first bound counts in the first zone). Seconds without a value (NaN) count in no zone.
 */

export const ZONE_METRICS = ['power', 'heart_rate', 'speed'] as const;
export type ZoneMetric = (typeof ZONE_METRICS)[number];

/** The threshold a metric's zones are percentages of. */
export const ZONE_THRESHOLD = {
  power: 'critical_power',
  heart_rate: 'threshold_heart_rate',
  speed: 'critical_speed',
} as const satisfies Record<ZoneMetric, string>;

export interface ZoneDefinition {
  name: string;
  /** The lower bound, % of the threshold. */
  low: number;
}

export interface ZoneModel {
  /** `coggan`, `friel-cycling`, …, or `custom` for boundaries the athlete set. */
  model: string;
  zones: ZoneDefinition[];
}

const named = (names: string[], lows: number[]): ZoneDefinition[] => names.map((name, i) => ({ name, low: lows[i]! }));

const COGGAN = named(
  ['Active Recovery', 'Endurance', 'Tempo', 'Threshold', 'VO2max', 'Anaerobic Capacity', 'Neuromuscular Power'],
  [0, 55, 75, 90, 105, 120, 150],
);
const FRIEL_NAMES = ['Recovery', 'Aerobic', 'Tempo', 'Subthreshold', 'Superthreshold', 'Aerobic Capacity', 'Anaerobic Capacity'];
const FRIEL_CYCLING = named(FRIEL_NAMES, [0, 81, 90, 94, 100, 103, 106]);
const FRIEL_RUNNING = named(FRIEL_NAMES, [0, 85, 90, 95, 100, 103, 106]);
const PACE_NAMES = ['Active Recovery', 'Endurance', 'Tempo', 'Threshold', 'VO2max', 'Anaerobic'];
const PACE_RUNNING = named(PACE_NAMES, [0, 80, 87, 95, 105, 119]);
const PACE_SWIMMING = named(PACE_NAMES, [0, 93, 97, 99, 102, 109]);

/** The default model of a metric for a sport's root code (`cycling`, `running`, …). */
export function defaultZoneModel(root: string, metric: ZoneMetric): ZoneModel {
  if (metric === 'power') return { model: 'coggan', zones: COGGAN };
  if (metric === 'heart_rate') {
    return root === 'cycling' ? { model: 'friel-cycling', zones: FRIEL_CYCLING } : { model: 'friel-running', zones: FRIEL_RUNNING };
  }
  return root === 'swimming'
    ? { model: 'goldencheetah-pace-swimming', zones: PACE_SWIMMING }
    : { model: 'goldencheetah-pace-running', zones: PACE_RUNNING };
}

/** A zone with its bounds in the metric's unit (high null for the last). */
export interface ZoneBounds {
  zone: number;
  name: string;
  low: number;
  high: number | null;
}

/** A model's zones at a threshold value. */
export function zoneBounds(zones: readonly ZoneDefinition[], threshold: number): ZoneBounds[] {
  return zones.map((z, i) => ({
    zone: i + 1,
    name: z.name,
    low: (z.low * threshold) / 100,
    high: i + 1 < zones.length ? (zones[i + 1]!.low * threshold) / 100 : null,
  }));
}

/** Seconds per zone of a 1 Hz series, for zones whose lower bounds are `lows` (ascending). */
export function timeInZones(values: Float64Array, lows: readonly number[]): Int32Array {
  const seconds = new Int32Array(lows.length);
  for (let i = 0; i < values.length; i++) {
    const x = values[i]!;
    if (x !== x) continue; // NaN: no value
    let z = lows.length - 1;
    while (z > 0 && x < lows[z]!) z--;
    seconds[z]!++;
  }
  return seconds;
}
