import type { ColumnType, Generated } from 'kysely';

/** The training load's tables (db/training-load.ts), as kysely sees them: part of db/database.ts's `Database`. */

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

/** A declared threshold entry (db/training-load.ts): values in W, J, m/s and bpm; null where the entry leaves one out. */
export interface ThresholdsTable {
  user_id: string;
  sport: string;
  /** A calendar date, read as `YYYY-MM-DD`. */
  valid_from: string;
  critical_power: number | null;
  w_prime: number | null;
  critical_speed: number | null;
  threshold_heart_rate: number | null;
  max_heart_rate: number | null;
  resting_heart_rate: number | null;
  created_at: Timestamp;
}

/** Per user: the version of the training load's inputs, and the zones the athlete edited (db/training-load.ts ZoneSettings). */
export interface TrainingSettingsTable {
  user_id: string;
  version: Generated<number>;
  zones: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  updated_at: Timestamp;
}

/** Per activity, what its thresholds make of it (engine/load/activity-load.ts), computed under `version`. */
export interface ActivityLoadTable {
  activity_id: string;
  user_id: string;
  sport: string;
  /** The local date of the activity's start, `YYYY-MM-DD`. */
  day: string;
  version: number;
  stress: number | null;
  method: string | null;
  intensity_factor: number | null;
  reason: string | null;
  time_in_zones: ColumnType<Record<string, unknown>, string, string>;
  w_prime_balance_min: number | null;
  /** The values used, each with where it came from (engine/load/thresholds.ts Resolved). */
  thresholds: ColumnType<Record<string, unknown>, string, string>;
  computed_at: Timestamp;
}
