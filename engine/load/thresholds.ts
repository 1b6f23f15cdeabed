import { parseSport, sportMatches } from '../../lib/sports.ts';
import type { Thresholds } from './stress.ts';

/**
 * Which thresholds hold for an activity: the athlete's history of entries, each for a sport (and its
 * sub-sports) from a day on, declared by the athlete or taken from a lab test's results. Each value
 * is resolved on its own: the entry with the latest `valid_from` on or before the day that has the
 * value, among those whose sport the activity's matches; on the same day the more specific sport
 * wins, then a declared entry over a test's. An entry leaving a value out keeps the earlier one.
 *
 * The resting heart rate, when no entry has one, is the athlete's daily `resting_hr` measure of the
 * day or the latest before it.
 */

export const THRESHOLD_FIELDS = [
  'critical_power',
  'w_prime',
  'critical_speed',
  'threshold_heart_rate',
  'max_heart_rate',
  'resting_heart_rate',
] as const;
export type ThresholdField = (typeof THRESHOLD_FIELDS)[number];

export type ThresholdOrigin = 'declared' | 'test';

export interface ThresholdEntry extends Partial<Record<ThresholdField, number | null>> {
  sport: string;
  /** YYYY-MM-DD */
  valid_from: string;
  origin: ThresholdOrigin;
  test_id?: string | null;
}

/** A value and the entry it came from. */
export interface ResolvedValue {
  value: number;
  /** `modelled`: the critical-power model fitted to the 90 days before the activity (no declared or test value held). */
  origin: ThresholdOrigin | 'daily' | 'modelled';
  valid_from: string;
  test_id?: string | null;
}

export type Resolved = Partial<Record<ThresholdField, ResolvedValue>>;

const depth = (sport: string) => parseSport(sport)?.code.split('.').length ?? 0;

/** Latest first; on a day, the more specific sport, then declared before test. */
function precedence(a: ThresholdEntry, b: ThresholdEntry): number {
  if (a.valid_from !== b.valid_from) return a.valid_from < b.valid_from ? 1 : -1;
  if (depth(a.sport) !== depth(b.sport)) return depth(b.sport) - depth(a.sport);
  return a.origin === b.origin ? 0 : a.origin === 'declared' ? -1 : 1;
}

/** Entries in the order resolution reads them (sorted once per user). */
export function orderEntries(entries: ThresholdEntry[]): ThresholdEntry[] {
  return [...entries].sort(precedence);
}

/**
 * The thresholds on `day` for `sport`, from entries in `orderEntries` order and the resting heart
 * rate measures ([day, bpm], ascending by day).
 */
export function resolveThresholds(ordered: ThresholdEntry[], sport: string, day: string, restingHr: [string, number][] = []): Resolved {
  const out: Resolved = {};
  for (const e of ordered) {
    if (e.valid_from > day || !sportMatches(sport, e.sport)) continue;
    for (const field of THRESHOLD_FIELDS) {
      const v = e[field];
      if (out[field] || v === undefined || v === null) continue;
      out[field] = { value: v, origin: e.origin, valid_from: e.valid_from, ...(e.test_id ? { test_id: e.test_id } : {}) };
    }
  }
  if (!out.resting_heart_rate) {
    let lo = 0;
    let hi = restingHr.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (restingHr[mid]![0] <= day) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0) out.resting_heart_rate = { value: restingHr[lo - 1]![1], origin: 'daily', valid_from: restingHr[lo - 1]![0] };
  }
  return out;
}

/** The values alone. */
export function thresholdValues(resolved: Resolved): Thresholds {
  return Object.fromEntries(Object.entries(resolved).map(([k, v]) => [k, v.value]));
}
