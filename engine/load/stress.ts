/**
 * Training stress of one activity, by the first method its data and thresholds allow:
 *
 *   power       hours × IF² × 100, IF = NP / CP                      (GoldenCheetah's BikeStress with CP as
 *                                                                      its threshold, src/Metrics/Coggan.cpp)
 *   pace        running and other sports: hours × IF² × 100, IF = NS / CS, NS the normalised speed (NP's
 *               algorithm on speed: the 30 s rolling mean, the fourth root of the mean of its fourth powers;
 *               TrainingPeaks' rTSS without the grade adjustment);
 *               swimming: hours × IF³ × 100, IF = mean speed / CS (TrainingPeaks' sTSS, GoldenCheetah's
 *               "SwimScore and sTSS" chart)
 *   heart_rate  Banister's TRIMP, as GoldenCheetah's TRIMP100 scales it (src/Metrics/TRIMPPoints.cpp):
 *               TRIMP = minutes × r × 0.64 · e^(1.92 r), r = (mean HR − rest HR) / (max HR − rest HR),
 *               score = 100 × TRIMP / TRIMP(an hour at threshold heart rate), IF = null
 *
 * `hours` is the time the timer ran. The pace method applies to running and swimming (and walking,
 * hiking), not to sports whose speed says little of effort. An activity no method can score has no
 * score, and the reason says what is missing: never a number made up from defaults.
 */

export interface Thresholds {
  critical_power?: number | null;
  w_prime?: number | null;
  critical_speed?: number | null;
  threshold_heart_rate?: number | null;
  max_heart_rate?: number | null;
  resting_heart_rate?: number | null;
}

export interface StressInputs {
  /** The sport's root code (`cycling`, `running`, …). */
  root: string;
  /** Seconds the timer ran. */
  seconds: number;
  /** Normalized power (W), when the activity has power. */
  normalizedPower?: number | undefined;
  /** Normalised speed (m/s): NP's algorithm on speed. */
  normalisedSpeed?: number | undefined;
  /** Mean speed (m/s): distance / moving time. */
  meanSpeed?: number | undefined;
  /** Mean heart rate (bpm). */
  meanHeartRate?: number | undefined;
}

export type StressMethod = 'power' | 'pace' | 'heart_rate';
export type Stress =
  | { score: number; method: StressMethod; intensity_factor: number | null; reason: null }
  | { score: null; method: null; intensity_factor: null; reason: string };

/** Sports whose speed is a measure of effort: their stress may come from pace. */
export const PACE_SPORTS = new Set(['running', 'swimming', 'walking', 'hiking']);

/** TRIMP's weighting for men, the one GoldenCheetah uses unless the athlete is set as female. */
const TRIMP_K = 1.92;

/** Banister's TRIMP of `minutes` at a mean heart rate. */
export function trimp(minutes: number, meanHr: number, restHr: number, maxHr: number): number {
  if (meanHr < restHr) return 0;
  const r = (meanHr - restHr) / (maxHr - restHr);
  return minutes * r * 0.64 * Math.exp(TRIMP_K * r);
}

export function trainingStress(input: StressInputs, t: Thresholds): Stress {
  const hours = input.seconds / 3600;
  const missing: string[] = [];
  if (input.normalizedPower !== undefined) {
    if (t.critical_power) {
      const f = input.normalizedPower / t.critical_power;
      return { score: hours * f * f * 100, method: 'power', intensity_factor: f, reason: null };
    }
    missing.push('critical power');
  }
  if (PACE_SPORTS.has(input.root)) {
    const speed = input.root === 'swimming' ? input.meanSpeed : input.normalisedSpeed;
    if (speed !== undefined && speed > 0) {
      if (t.critical_speed) {
        const f = speed / t.critical_speed;
        const score = input.root === 'swimming' ? hours * f * f * f * 100 : hours * f * f * 100;
        return { score, method: 'pace', intensity_factor: f, reason: null };
      }
      missing.push('critical speed');
    }
  }
  if (input.meanHeartRate !== undefined) {
    const { threshold_heart_rate: lthr, max_heart_rate: max, resting_heart_rate: rest } = t;
    const known = rest !== undefined && rest !== null;
    if (lthr && max && known && max > rest && lthr > rest) {
      const hour = trimp(60, lthr, rest, max);
      return {
        score: (100 * trimp(hours * 60, input.meanHeartRate, rest, max)) / hour,
        method: 'heart_rate',
        intensity_factor: null,
        reason: null,
      };
    }
    const lacking = [!lthr && 'threshold heart rate', !max && 'maximum heart rate', !known && 'resting heart rate'];
    missing.push(...(lacking.filter(Boolean) as string[]));
    if (lthr && max && known) missing.push('threshold and maximum heart rates above the resting one');
  }
  if (!missing.length)
    return { score: null, method: null, intensity_factor: null, reason: 'The activity has no power, pace or heart rate to score' };
  return { score: null, method: null, intensity_factor: null, reason: `No ${missing.join(', ')} for this sport on the activity's day` };
}
