/**
 * The two sides of the data checks (./device-checks.ts): the device's own values of a session with
 * the facts of its file the rules (./device-rules.ts) read, and the same quantities of the activity
 * ingest made of it; the quantities, their tolerances and the resolution the FIT profile stores each in.
 * `npm run bench -- device` builds the device's side from the FIT SDK's decode of the file instead.
 */
import type { IngestedActivity } from './ingested.ts';
import type { DeviceSummary, Recording } from './recording.ts';

export const QUANTITIES = ['timer', 'elapsed', 'distance', 'power', 'np', 'hr', 'cadence', 'speed', 'ascent'] as const;
export type Quantity = (typeof QUANTITIES)[number];

/** The device summary field (recording.ts DEVICE_SUMMARY_FIELDS) each quantity is read from. */
export const DEVICE_FIELD: Record<Quantity, keyof DeviceSummary> = {
  timer: 'total_timer_time',
  elapsed: 'total_elapsed_time',
  distance: 'total_distance',
  power: 'avg_power',
  np: 'normalized_power',
  hr: 'avg_heart_rate',
  cadence: 'avg_cadence',
  speed: 'avg_speed',
  ascent: 'total_ascent',
};

/** Relative tolerance against the device's value. */
export const TOLERANCE: Record<Quantity, number> = {
  timer: 0.01,
  elapsed: 0.01,
  distance: 0.01,
  power: 0.01,
  np: 0.02,
  hr: 0.01,
  cadence: 0.01,
  speed: 0.01,
  ascent: 0.01,
};

/** The resolution of the FIT session field each device value is stored in (profile scale). */
export const RESOLUTION: Record<Quantity, number> = {
  timer: 0.001,
  elapsed: 0.001,
  distance: 0.01,
  power: 1,
  np: 1,
  hr: 1,
  cadence: 1,
  speed: 0.001,
  ascent: 1,
};

/** Whether ours agrees with the device's value: within TOLERANCE of it, or within half its stored resolution. */
export function agrees(quantity: Quantity, device: number, ours: number | undefined, resolution = RESOLUTION[quantity]): boolean {
  if (ours === undefined || !Number.isFinite(ours)) return false;
  const diff = Math.abs(ours - device);
  return diff <= TOLERANCE[quantity] * Math.abs(device) + 1e-9 || diff <= resolution / 2 + 1e-9;
}

export interface TimerEvent {
  /** Epoch ms. */
  t: number;
  /** A start event (true) or a stop / stop_all / stop_disable(_all) event (false). */
  running: boolean;
}

/** One session as the device recorded it, with the facts of its file the rules read. */
export interface DeviceSession {
  /** A pool swim (a pool length, or the sport says lap swimming). */
  poolSwim: boolean;
  /** start_time, epoch ms. */
  start: number;
  /** The session message's timestamp, epoch ms (when it has one). */
  timestamp?: number;
  /** The session's own values (only those the file has). */
  values: Partial<Record<Quantity, number>>;
  /** Resolution of each value present (RESOLUTION, or 1/128 rpm for a fractional cadence). */
  resolution: Partial<Record<Quantity, number>>;
  maxPower?: number;
  /** The file's timer start/stop events, ascending (all of them: a multisport file's timer spans its sessions). */
  timerEvents: TimerEvent[];
  /** The file's records of the session: count, first and last timestamps. */
  records: { count: number; first?: number; last?: number };
  /** Of those records, the plain means of power, cadence and heart rate with and without their zero readings (absent without such records). */
  recordMeans: Partial<Record<'power' | 'cadence' | 'heart_rate', { withZeros: number; withoutZeros?: number }>>;
  /** The quantities whose channel at least one of those records carries. */
  recorded: Quantity[];
}

/** What the service made of the session: the quantities and the facts the rules read. */
export interface Ours {
  values: Partial<Record<Quantity, number>>;
  movingSeconds?: number;
  /** The activity's channels (IngestedActivity.metrics). */
  channels: string[];
  /** The highest 30-s mean power of the activity (W), when it has power. */
  best30sPower?: number;
}

/** The record channel each quantity is computed from. */
const RECORD_CHANNEL: Partial<Record<Quantity, string>> = {
  distance: 'distance',
  power: 'power',
  np: 'power',
  hr: 'heart_rate',
  cadence: 'cadence',
  speed: 'speed',
  ascent: 'altitude',
};

/** The plain means of a channel's readings, with the zeros and of those above zero (undefined without a reading). */
function plainMeans(values: Float64Array | undefined): { withZeros: number; withoutZeros?: number } | undefined {
  if (!values) return undefined;
  let sum = 0;
  let count = 0;
  let above = 0;
  let aboveCount = 0;
  for (const x of values) {
    if (x !== x) continue;
    sum += x;
    count++;
    if (x > 0) {
      above += x;
      aboveCount++;
    }
  }
  if (!count) return undefined;
  return { withZeros: sum / count, ...(aboveCount ? { withoutZeros: above / aboveCount } : {}) };
}

/** The facts of a parsed recording (before implausible samples are dropped: as the device saw them), or undefined without a device summary. */
export function sessionFacts(rec: Recording): DeviceSession | undefined {
  const summary = rec.deviceSummary;
  if (!summary) return undefined;
  const values: DeviceSession['values'] = {};
  const resolution: DeviceSession['resolution'] = {};
  for (const q of QUANTITIES) {
    const v = summary[DEVICE_FIELD[q]];
    if (v === undefined || !Number.isFinite(v)) continue;
    values[q] = v;
    resolution[q] = q === 'cadence' && rec.facts?.fractionalCadence ? 1 / 128 : RESOLUTION[q];
  }
  const recordMeans: DeviceSession['recordMeans'] = {};
  for (const channel of ['power', 'cadence', 'heart_rate'] as const) {
    const means = plainMeans(rec.channels[channel]);
    if (means) recordMeans[channel] = means;
  }
  const n = rec.timestamps.length;
  return {
    poolSwim: rec.facts?.poolLength !== undefined || rec.sport === 'swimming.pool',
    start: rec.start.getTime(),
    ...(rec.facts?.timestamp === undefined ? {} : { timestamp: rec.facts.timestamp }),
    values,
    resolution,
    ...(summary.max_power === undefined ? {} : { maxPower: summary.max_power }),
    timerEvents: rec.facts?.timerEvents ?? [],
    records: { count: n, ...(n ? { first: rec.timestamps[0]!, last: rec.timestamps[n - 1]! } : {}) },
    recordMeans,
    recorded: QUANTITIES.filter((q) => q === 'timer' || q === 'elapsed' || rec.channels[RECORD_CHANNEL[q] as keyof Recording['channels']]),
  };
}

/** The quantities of one ingested activity, as the rules read them. */
export function oursOf(a: Omit<IngestedActivity, 'deviceChecks'>): Ours {
  const s = a.summary;
  const values: Ours['values'] = {
    timer: a.timerSeconds,
    elapsed: (a.end - a.start) / 1000,
    distance: s.distance?.sum,
    power: s.power?.mean,
    np: s.power?.normalized,
    hr: s.heart_rate?.mean,
    cadence: s.cadence?.mean,
    speed: s.speed?.mean,
    ascent: s.altitude?.gain,
  };
  for (const q of QUANTITIES) if (typeof values[q] !== 'number' || !Number.isFinite(values[q])) delete values[q];
  const power = a.channels.power;
  const best30 = power ? bestMean(power, 30) : undefined;
  return {
    values,
    ...(typeof a.movingSeconds === 'number' ? { movingSeconds: a.movingSeconds } : {}),
    channels: [...a.metrics],
    ...(best30 === undefined ? {} : { best30sPower: best30 }),
  };
}

/** The highest mean of `seconds` consecutive 1 Hz samples (gaps as 0, as the mean-max curves count them); undefined when shorter. */
export function bestMean(values: Float64Array, seconds: number): number | undefined {
  if (values.length < seconds) return undefined;
  let sum = 0;
  for (let i = 0; i < seconds; i++) sum += values[i]! === values[i]! ? values[i]! : 0;
  let best = sum;
  for (let i = seconds; i < values.length; i++) {
    const enter = values[i]!;
    const leave = values[i - seconds]!;
    sum += (enter === enter ? enter : 0) - (leave === leave ? leave : 0);
    if (sum > best) best = sum;
  }
  return best / seconds;
}
