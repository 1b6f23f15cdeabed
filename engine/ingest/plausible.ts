import type { Recording } from './recording.ts';
import { CHANNELS, type Channel } from '../channels.ts';

/**
 * Implausible samples: a value no athlete (or sensor worn by one) can produce is a glitch — a power
 * meter's 21,733 W spike, a heart rate of 255 — and would otherwise set the activity's maximum, the
 * start of every mean-max curve and the top of its AWD. Such a value is dropped (NaN, a recorded
 * absence) and counted, per channel.
 *
 * Applied to the Recording as parsed, before the 1 Hz resampling (engine/ingest/resample.ts), because
 * resampling would hide or multiply a spike: a device that records only on change has the gap after
 * it filled (one bad record spreading over up to MAX_FILL_SECONDS of 21,733 W), while of several
 * samples in one second only the last is kept. Dropped first, a spike is one counted sample; its
 * second takes another plausible sample of the same second if there is one, else it is missing, and
 * the seconds of the gap after it stay missing too (a NaN is never spread).
 *
 * The ranges are inclusive: a value exactly at a limit is kept. NaN (no value) is not implausible.
 *
 *   channel            unit          min     max     why
 *   power              W             0       3000    track sprinters peak at ~2,500–2,700 W
 *   heart_rate         bpm           0       250     above the highest maximal heart rates of athletes (~220)
 *   speed              m/s           0       100     360 km/h: above the paced bicycle record (~82 m/s),
 *                                                     speed skiing (~70 m/s) and free fall (~55–90 m/s)
 *   cadence            rpm           0       300     cycling sprints reach ~250 rpm; running (steps) ~250
 *   altitude           m             −500    9000    Dead Sea shore −430 m; Everest 8,849 m
 *   distance           m             0       —       cumulative: no meaningful ceiling per sample
 *   latitude           degrees       −90     90      the coordinate's range
 *   longitude          degrees       −180    180     the coordinate's range
 *   temperature        °C            −90     100     coldest air measured −89 °C; a sauna ~100 °C
 *   core_temperature   °C            30      45      below is severe hypothermia (or a sensor not worn),
 *                                                     above is fatal heat stroke
 *   smo2               %             0       100     a percentage
 *   respiration_rate   breaths/min   0       100     maximal exercise reaches ~60–70
 */

export interface PlausibleRange {
  /** The lowest plausible value (inclusive). */
  min: number;
  /** The highest plausible value (inclusive); Infinity when the channel has no ceiling. */
  max: number;
  /** The channel's unit (engine/ingest/recording.ts CHANNELS). */
  unit: string;
}

export const PLAUSIBLE_RANGES: Readonly<Record<Channel, PlausibleRange>> = {
  power: { min: 0, max: 3000, unit: 'W' },
  heart_rate: { min: 0, max: 250, unit: 'bpm' },
  speed: { min: 0, max: 100, unit: 'm/s' },
  cadence: { min: 0, max: 300, unit: 'rpm' },
  altitude: { min: -500, max: 9000, unit: 'm' },
  distance: { min: 0, max: Infinity, unit: 'm' },
  latitude: { min: -90, max: 90, unit: '°' },
  longitude: { min: -180, max: 180, unit: '°' },
  temperature: { min: -90, max: 100, unit: '°C' },
  core_temperature: { min: 30, max: 45, unit: '°C' },
  smo2: { min: 0, max: 100, unit: '%' },
  respiration_rate: { min: 0, max: 100, unit: 'breaths/min' },
};

/** Whether a recorded value lies beyond its channel's range. NaN (no value) is not implausible. */
export function isImplausible(channel: Channel, value: number): boolean {
  const { min, max } = PLAUSIBLE_RANGES[channel];
  return value < min || value > max;
}

/** The value as stored: NaN when it is implausible, else the value itself (NaN stays NaN). */
export function plausibleValue(channel: Channel, value: number): number {
  return isImplausible(channel, value) ? Number.NaN : value;
}

/** Per channel, how many samples were dropped: only channels with at least one, in CHANNELS order. */
export type ImplausibleCounts = Partial<Record<Channel, number>>;

/**
 * The recording with its implausible samples turned into NaN, and how many there were per channel
 * (samples as parsed: FIT records, one per timestamp; CSV rows). Channels without any keep their
 * arrays; the others get new ones (the input is not changed).
 */
export function dropImplausible(rec: Recording): { recording: Recording; implausible: ImplausibleCounts } {
  const implausible: ImplausibleCounts = {};
  const channels: Recording['channels'] = { ...rec.channels };
  for (const channel of CHANNELS) {
    const values = rec.channels[channel];
    if (!values) continue;
    let cleaned: Float64Array | undefined;
    let count = 0;
    for (let k = 0; k < values.length; k++) {
      if (!isImplausible(channel, values[k]!)) continue;
      cleaned ??= values.slice();
      cleaned[k] = Number.NaN;
      count++;
    }
    if (cleaned) {
      channels[channel] = cleaned;
      implausible[channel] = count;
    }
  }
  return { recording: { ...rec, channels }, implausible };
}
