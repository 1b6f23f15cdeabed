/**
 * What a parsed activity file gives the rest of ingestion, whatever its format: one Recording per
 * activity (a multisport FIT file gives one per session). Pure data, no I/O.
 */

import type { Channel } from '../channels.ts';

export interface Lap {
  start: Date;
  end: Date;
  /** The lap's own climb and descent as the device totalled them (FIT lap total_ascent/descent, m), when the file has them. */
  totalAscent?: number;
  totalDescent?: number;
}

/**
 * One active length of a pool swim (FIT length message, length_type active), epoch ms [start, end):
 * the device's own speed (m/s) and stroke rate (strokes/min) over it, and the distance it covers (m).
 */
export interface SwimLength {
  start: number;
  end: number;
  speed: number;
  cadence: number | undefined;
  distance: number;
}

/** A span of the recording when its timer was stopped (FIT timer stop … start events), epoch ms, [start, end). */
export interface Pause {
  start: number;
  end: number;
}

/**
 * The file's own summary of the session, as recorded (FIT session message), in FIT profile names and
 * the parser's units: seconds, metres, m/s, W, bpm, rpm, J. Only the fields the file has.
 */
export const DEVICE_SUMMARY_FIELDS = [
  'total_elapsed_time',
  'total_timer_time',
  'total_distance',
  'avg_speed',
  'max_speed',
  'avg_power',
  'max_power',
  'normalized_power',
  'total_work',
  'avg_heart_rate',
  'max_heart_rate',
  'avg_cadence',
  'max_cadence',
  'total_ascent',
  'total_descent',
] as const;
export type DeviceSummary = Partial<Record<(typeof DEVICE_SUMMARY_FIELDS)[number], number>>;

/** One value of the data checks (engine/ingest/device-checks.ts): whether ours agrees with the device's, and if not, the rule that says why (none: unexplained). */
export interface DeviceCheck {
  agrees: boolean;
  rule?: string;
}
/** Per device summary field compared (only those the device has). */
export type DeviceChecks = Partial<Record<keyof DeviceSummary, DeviceCheck>>;

/**
 * Why records of a file were left out of an activity, and how many (only reasons with at least one):
 * `duplicate_timestamp`: another record has the same timestamp (the last in the file is kept);
 * `outside_session`: the timestamp lies outside every session's span (a clock that jumped, a record
 * written before the start or long after the end; in a GPX or TCX file, a point whose time goes
 * backwards, engine/ingest/track.ts); `no_time`: a GPX or TCX point with values but no valid time.
 */
export type DroppedRecords = Partial<Record<'duplicate_timestamp' | 'outside_session' | 'no_time', number>>;

export interface Recording {
  /** OpenSportTaxonomy string (lib/sports.ts). */
  sport: string;
  /** UTC instants of the activity (FIT session start and start + elapsed time; CSV first and last rows). */
  start: Date;
  end: Date;
  /** Local wall-clock time = UTC + this offset (FIT local_timestamp; CSV, GPX and TCX timestamp offsets). */
  utcOffsetSeconds: number;
  /** Device names (manufacturer and product), in file order, without duplicates. */
  devices: string[];
  laps: Lap[];
  /** Sample instants in epoch milliseconds, ascending; may be irregular (resampling makes 1 Hz). */
  timestamps: Float64Array;
  /** One array per channel present, aligned with `timestamps`; NaN where a sample lacks the value. */
  channels: Partial<Record<Channel, Float64Array>>;
  /**
   * When the file says its timer was stopped (FIT timer events; GPX segment breaks and long gaps;
   * the gaps a TCX lap's timer says were stopped), ascending and disjoint; undefined when the file
   * has no timer events (CSV, some FIT producers): resampling then takes a long gap between samples
   * for a pause (engine/ingest/resample.ts).
   */
  pauses?: Pause[];
  /**
   * A pool swim's active lengths, ascending, when the file has them (FIT length messages): its speed,
   * cadence and distance come from them rather than from its records (engine/ingest/resample.ts).
   */
  lengths?: SwimLength[];
  /** The file's own session values (FIT; a TCX file's laps' totals, engine/ingest/tcx.ts); undefined for CSV and GPX. */
  deviceSummary?: DeviceSummary;
  /** Records of the file left out of this activity, by reason. */
  dropped?: DroppedRecords;
  /** What the data checks read of the file besides its records (engine/ingest/device-checks.ts): FIT only. */
  facts?: SessionFileFacts;
}

/** Of a FIT file, for the data checks: the session's own timestamp and pool length, the file's timer events. */
export interface SessionFileFacts {
  /** The session message's timestamp, epoch ms. */
  timestamp?: number;
  /** A pool swim's pool length (m). */
  poolLength?: number;
  /** Every timer event of the file (start: running), ascending. */
  timerEvents: { t: number; running: boolean }[];
  /** The session's average cadence has its fractional part (stored to 1/128 rpm). */
  fractionalCadence: boolean;
}

/** A file that cannot become an activity: `code` is what the source reports (docs/api-clients.md, "Activities": failure codes). */
export class IngestError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'IngestError';
  }
}
