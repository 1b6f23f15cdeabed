import { PLAUSIBLE_RANGES } from '../../engine/ingest/plausible.ts';

/**
 * What an athlete can produce, the bounds of every measurement a client writes (a trace's fields, a
 * test's Markers; beyond one is a 422 naming the field): power, speed and heart rate by the activity
 * samples' plausible ranges (engine/ingest/plausible.ts), lactate by 50 mmol/L (the highest measured
 * blood lactates are near 30), VO2 by 150 mL/min/kg (the highest measured are under 100).
 */
export const MEASUREMENT_RANGES = {
  power: PLAUSIBLE_RANGES.power,
  speed: PLAUSIBLE_RANGES.speed,
  heart_rate: PLAUSIBLE_RANGES.heart_rate,
  lactate: { min: 0, max: 50, unit: 'mmol/L' },
  vo2: { min: 0, max: 150, unit: 'mL/min/kg' },
} as const;
