/**
 * What a parsed activity file gives the rest of ingestion, whatever its format: one Recording per
 * activity (a multisport FIT file gives one per session). Pure data, no I/O.
 */

/** The sample channels an activity can carry (API.md Metric values that are time series). Units: W, bpm, m/s, rpm, m, degrees, °C, %, breaths/min. */
export const CHANNELS = [
  'power',
  'heart_rate',
  'speed',
  'cadence',
  'altitude',
  'distance',
  'latitude',
  'longitude',
  'temperature',
  'core_temperature',
  'smo2',
  'respiration_rate',
] as const;
export type Channel = (typeof CHANNELS)[number];

export interface Lap {
  start: Date;
  end: Date;
}

export interface Recording {
  /** OpenSportTaxonomy string (lib/sports.ts). */
  sport: string;
  /** UTC instants of the activity (FIT session start and start + elapsed time; CSV first and last rows). */
  start: Date;
  end: Date;
  /** Local wall-clock time = UTC + this offset (FIT local_timestamp; CSV timestamp offsets). */
  utcOffsetSeconds: number;
  /** Device names (manufacturer and product), in file order, without duplicates. */
  devices: string[];
  laps: Lap[];
  /** Sample instants in epoch milliseconds, ascending; may be irregular (resampling makes 1 Hz). */
  timestamps: Float64Array;
  /** One array per channel present, aligned with `timestamps`; NaN where a sample lacks the value. */
  channels: Partial<Record<Channel, Float64Array>>;
}

/** A file that cannot become an activity: `code` is what the source reports (API.md Upload). */
export class IngestError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'IngestError';
  }
}
