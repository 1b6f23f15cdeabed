import type { ActivityFormat } from './sniff.ts';
import type { MetricCurves } from '../curves/activity-curves.ts';
import type { ImplausibleCounts } from './plausible.ts';
import type { DeviceChecks, DeviceSummary, DroppedRecords } from './recording.ts';
import type { Channel } from '../channels.ts';

/**
 * What the ingest task (engine/ingest/ingest.ts, run in the piscina pool) returns for one file: the
 * activities it holds on a regular 1 Hz grid, with their summaries and laps. Pure data of
 * transferable typed arrays; the worker stores it (sample file, activity rows).
 */

/** Statistics of one channel over a span (ActivityStatistics members: docs/api-clients.md, "Summaries"; absent when not computable). */
export interface ChannelStats {
  start?: number;
  end?: number;
  min?: number;
  max?: number;
  mean?: number;
  gain?: number;
  loss?: number;
  sum?: number;
  /** power only: normalized power (W) and work (kJ); see engine/ingest/summary.ts. */
  normalized?: number;
  work?: number;
}

/** Per the API's schema: altitude {gain,loss,max,mean,min}; cadence, power, speed {max,mean}; distance {sum};
 * core_temperature, heart_rate, smo2, temperature {end,max,mean,min,start}. */
export type Summary = Partial<
  Record<'altitude' | 'cadence' | 'core_temperature' | 'distance' | 'heart_rate' | 'power' | 'smo2' | 'speed' | 'temperature', ChannelStats>
>;

export interface LapStats extends Summary {
  /** Epoch milliseconds (UTC). */
  start: number;
  end: number;
  /** Seconds of the lap the timer ran, and of those in motion (engine/ingest/summary.ts). */
  timer_seconds: number;
  moving_seconds: number;
}

export interface IngestedActivity {
  /** OpenSportTaxonomy string. */
  sport: string;
  /** Epoch milliseconds (UTC) of the activity; `start` is also the grid's first sample (a whole second). */
  start: number;
  end: number;
  utcOffsetSeconds: number;
  devices: string[];
  /** Channels with at least one value, in CHANNELS order. */
  metrics: Channel[];
  /** Number of 1 Hz samples: sample k is at start + k·1000 ms. */
  length: number;
  /** One array of `length` per channel in `metrics`; NaN where there was no sample. */
  channels: Partial<Record<Channel, Float64Array>>;
  summary: Summary;
  laps: LapStats[];
  /** Total distance in metres (summary.distance.sum), or null. */
  distance: number | null;
  /** Mean-max, value-indexed and AWD curves of the metrics that have them (engine/curves/activity-curves.ts). */
  curves: MetricCurves[];
  /** Power's fatigue-grid entry (engine/curves/after-grid.ts), computed here so that the worker's event loop only appends it; null without power. */
  afterGrid: Float64Array | null;
  /**
   * Per channel, the samples of the file dropped as implausible before resampling (engine/ingest/plausible.ts):
   * only channels with at least one; `{}` when none was. `channels`, `summary`, `laps` and `curves` are without them.
   */
  implausibleSamples: ImplausibleCounts;
  /** Seconds the timer ran (pauses left out) and of those the seconds in motion (engine/ingest/summary.ts). */
  timerSeconds: number;
  movingSeconds: number;
  /** The file's own session values as recorded; null for CSV. */
  deviceSummary: DeviceSummary | null;
  /** Each of those values beside ours: agreeing, or the rule that explains the difference (engine/ingest/device-checks.ts); null without a device summary. */
  deviceChecks: DeviceChecks | null;
  /** Records of the file left out, by reason (`{}` when none). */
  droppedRecords: DroppedRecords;
  /** The ingest rules that made it (engine/ingest/rules.ts). */
  ingestVersion: number;
}

export type IngestResult = { ok: true; activities: IngestedActivity[] } | { ok: false; code: string; message: string };

export interface IngestTask {
  task: 'ingest';
  format: ActivityFormat;
  /** The file's (decompressed) bytes, transferred to the pool thread. */
  bytes: Uint8Array;
  /** The upload's `sport` field: required for CSV without a sport column; for FIT it replaces only `generic`. */
  sport: string | null;
}
/** What ingestFile and the pool's runIngest take: the task without its name. */
export type IngestInput = Omit<IngestTask, 'task'>;
