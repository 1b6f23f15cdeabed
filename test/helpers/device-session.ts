/**
 * The two sides of the device agreement (test/helpers/device-agreement.ts): each FIT session's own
 * values as Garmin's FIT SDK (@garmin/fitsdk) decodes them, with the facts of its file the reason
 * rules read, and the same quantities of the activity the service's ingest made of it; the
 * quantities, their tolerances and the resolution the FIT profile stores each in.
 */
import { Decoder, Stream } from '@garmin/fitsdk';
import type { IngestedActivity } from '../../engine/ingest/ingested.ts';
import { type DeviceSession as SessionFacts, type Ours, type Quantity, QUANTITIES, RESOLUTION } from '../../engine/ingest/device-facts.ts';

// The quantities, their tolerances and resolutions, our side and the agreement are the product's
// data checks' own (engine/ingest/device-facts.ts); this side reads the device's from the FIT SDK.
export {
  agrees,
  type Ours,
  oursOf,
  type Quantity,
  QUANTITIES,
  RESOLUTION,
  TOLERANCE,
  type TimerEvent,
} from '../../engine/ingest/device-facts.ts';

/** Column headings: the quantity and its unit. */
export const LABELS: Record<Quantity, string> = {
  timer: 'timer s',
  elapsed: 'elapsed s',
  distance: 'distance m',
  power: 'avg power W',
  np: 'NP W',
  hr: 'avg HR bpm',
  cadence: 'avg cadence rpm',
  speed: 'avg speed m/s',
  ascent: 'ascent m',
};

/** avg_cadence + avg_fractional_cadence: 1/128 rpm. */
const FRACTIONAL_CADENCE_RESOLUTION = 1 / 128;

/** Decimals of each quantity in the table. */
export const DECIMALS: Record<Quantity, number> = {
  timer: 1,
  elapsed: 1,
  distance: 0,
  power: 1,
  np: 1,
  hr: 1,
  cadence: 1,
  speed: 3,
  ascent: 0,
};

/** One FIT session as the device recorded it (the FIT SDK's decode): the facts the rules read, its index and FIT sport. */
export interface DeviceSession extends SessionFacts {
  /** Index among the file's session messages (in start order). */
  index: number;
  /** FIT sport, and `/sub_sport` when there is one other than generic. */
  sport: string;
}

/** The record fields (fitsdk names) each quantity is computed from. */
export const RECORD_FIELDS: Record<Quantity, string[]> = {
  timer: ['timestamp'],
  elapsed: ['timestamp'],
  distance: ['distance'],
  power: ['power'],
  np: ['power'],
  hr: ['heartRate'],
  cadence: ['cadence'],
  speed: ['enhancedSpeed', 'speed'],
  ascent: ['enhancedAltitude', 'altitude'],
};

export interface Cell {
  quantity: Quantity;
  device?: number;
  ours?: number;
  /** (ours − device) / device × 100; undefined when either is missing or the device's is 0. */
  diffPct?: number;
  /** Compared (the device has the value) and within tolerance. */
  agrees: boolean;
  /** The rule that explains a disagreement. */
  reason?: string;
}

export interface Row {
  file: string;
  session: DeviceSession;
  ours: Ours | undefined;
  cells: Cell[];
  status: 'ok' | 'reason' | 'MISSED';
}

// ─── The device's values (fitsdk) ────────────────────────────────────────────────────────────────

type Fields = Record<string, unknown>;
const num = (m: Fields, key: string) => (typeof m[key] === 'number' && Number.isFinite(m[key]) ? (m[key] as number) : undefined);
const ms = (m: Fields, key: string) =>
  m[key] instanceof Date && Number.isFinite((m[key] as Date).getTime()) ? (m[key] as Date).getTime() : undefined;
const mean = (v: readonly number[]) => v.reduce((a, b) => a + b, 0) / v.length;
const snake = (v: unknown) =>
  typeof v === 'string' ? v.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase() : typeof v === 'number' ? String(v) : undefined;

/** Every session of a FIT file as the FIT SDK decodes it, in start order. */
export function deviceSessions(bytes: Uint8Array): DeviceSession[] {
  const decoder = new Decoder(Stream.fromByteArray(bytes));
  const { messages } = decoder.read();
  const timerEvents = ((messages.eventMesgs ?? []) as Fields[])
    .filter((e) => e['event'] === 'timer' && ms(e, 'timestamp') !== undefined && typeof e['eventType'] === 'string')
    .map((e) => ({ t: ms(e, 'timestamp')!, running: e['eventType'] === 'start' }))
    .sort((a, b) => a.t - b.t);
  // Of records with the same timestamp the last in the file, as the service keeps them.
  const byTime = new Map<number, Fields>();
  for (const r of (messages.recordMesgs ?? []) as Fields[]) if (ms(r, 'timestamp') !== undefined) byTime.set(ms(r, 'timestamp')!, r);
  const recordTimes = [...byTime.keys()].sort((a, b) => a - b);
  const sessions = ((messages.sessionMesgs ?? []) as Fields[])
    .filter((s) => ms(s, 'startTime') !== undefined)
    .sort((a, b) => ms(a, 'startTime')! - ms(b, 'startTime')!);
  return sessions.map((s, index) => {
    const start = ms(s, 'startTime')!;
    const timestamp = ms(s, 'timestamp');
    const elapsed = num(s, 'totalElapsedTime');
    // The span engine/ingest/fit.ts gives the session (and test/helpers/fit-reference.ts): to start + elapsed (whole second up) or the timestamp, before the next session.
    const ends = [elapsed === undefined ? undefined : Math.ceil((start + elapsed * 1000) / 1000) * 1000, timestamp].filter(
      (t): t is number => t !== undefined && t >= start,
    );
    const last = ends.length > 0 ? Math.max(...ends) : Infinity;
    const next = sessions[index + 1] ? ms(sessions[index + 1]!, 'startTime')! : Infinity;
    const mine = recordTimes.filter((t) => t >= start && t <= last && t < next);
    const records = mine.map((t) => byTime.get(t)!);
    const recordMeans: DeviceSession['recordMeans'] = {};
    for (const [channel, field] of [
      ['power', 'power'],
      ['cadence', 'cadence'],
      ['heart_rate', 'heartRate'],
    ] as const) {
      const v = records.map((r) => num(r, field)).filter((x): x is number => x !== undefined);
      const nonZero = v.filter((x) => x > 0);
      if (v.length) recordMeans[channel] = { withZeros: mean(v), ...(nonZero.length ? { withoutZeros: mean(nonZero) } : {}) };
    }
    const recorded = QUANTITIES.filter((q) => records.some((r) => RECORD_FIELDS[q].some((k) => r[k] !== undefined)));
    const cadence = num(s, 'avgCadence');
    const fraction = num(s, 'avgFractionalCadence');
    const values: DeviceSession['values'] = {
      timer: num(s, 'totalTimerTime'),
      elapsed,
      distance: num(s, 'totalDistance'),
      power: num(s, 'avgPower'),
      np: num(s, 'normalizedPower'),
      hr: num(s, 'avgHeartRate'),
      cadence: cadence === undefined ? undefined : cadence + (fraction ?? 0),
      speed: num(s, 'enhancedAvgSpeed') ?? num(s, 'avgSpeed'),
      ascent: num(s, 'totalAscent'),
    };
    for (const q of QUANTITIES) if (values[q] === undefined) delete values[q];
    const resolution: DeviceSession['resolution'] = {};
    for (const q of QUANTITIES)
      if (values[q] !== undefined)
        resolution[q] = q === 'cadence' && fraction !== undefined ? FRACTIONAL_CADENCE_RESOLUTION : RESOLUTION[q];
    const sport = snake(s['sport']) ?? 'none';
    const sub = snake(s['subSport']);
    const fitSport = sub && sub !== 'generic' ? `${sport}/${sub}` : sport;
    return {
      index,
      sport: fitSport,
      poolSwim: num(s, 'poolLength') !== undefined || /\/lap_swimming$/.test(fitSport),
      start,
      ...(timestamp === undefined ? {} : { timestamp }),
      values,
      resolution,
      ...(num(s, 'maxPower') === undefined ? {} : { maxPower: num(s, 'maxPower')! }),
      ...(num(s, 'poolLength') === undefined ? {} : { poolLength: num(s, 'poolLength')! }),
      timerEvents,
      records: { count: mine.length, ...(mine.length ? { first: mine[0]!, last: mine[mine.length - 1]! } : {}) },
      recordMeans,
      recorded,
    };
  });
}

// ─── Matching ─────────────────────────────────────────────────────────────────────────────────────

/**
 * The activity made of each session: the one whose start (a whole second) lies in the session's
 * second or after it and before the next session's start. Sessions without records have none.
 */
export function matchActivities(
  sessions: readonly DeviceSession[],
  activities: readonly IngestedActivity[],
): (IngestedActivity | undefined)[] {
  return sessions.map((s, i) => {
    const from = Math.floor(s.start / 1000) * 1000;
    const next = sessions[i + 1]?.start ?? Infinity;
    return activities.find((a) => a.start >= from && a.start < next);
  });
}
