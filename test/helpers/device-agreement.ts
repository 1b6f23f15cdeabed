/**
 * Agreement with the device (issue 24, item 5): each FIT session's own totals and averages, as
 * Garmin's FIT SDK (@garmin/fitsdk) decodes them, beside what the service's ingest
 * (engine/ingest/ingest.ts) computes from the same bytes. Used by `npm run bench -- device`
 * (bench/device.ts) and test/device-agreement.test.ts.
 *
 * A value agrees when it is within TOLERANCE of the device's (1 %, NP 2 %) or within half the
 * resolution the FIT profile stores the device's value in (its own rounding: an average heart rate
 * is a whole bpm, so 107.4 against 107 agrees). A value that does not agree is explained only by a
 * REASON rule: a named, one-line condition decided from the file's own data (the session's other
 * values, its timer events, its records) and ours, never from the file's name. A disagreement no
 * rule explains is MISSED.
 */
import { Decoder, Stream } from '@garmin/fitsdk';
import type { IngestedActivity } from '../../engine/ingest/ingested.ts';

export const QUANTITIES = ['timer', 'elapsed', 'distance', 'power', 'np', 'hr', 'cadence', 'speed', 'ascent'] as const;
export type Quantity = (typeof QUANTITIES)[number];

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
/** avg_cadence + avg_fractional_cadence: 1/128 rpm. */
const FRACTIONAL_CADENCE_RESOLUTION = 1 / 128;

const DECIMALS: Record<Quantity, number> = { timer: 1, elapsed: 1, distance: 0, power: 1, np: 1, hr: 1, cadence: 1, speed: 3, ascent: 0 };

export interface TimerEvent {
  /** Epoch ms. */
  t: number;
  /** A start event (true) or a stop / stop_all / stop_disable(_all) event (false). */
  running: boolean;
}

/** One FIT session as the device recorded it, with the facts of its file the reason rules read. */
export interface DeviceSession {
  /** Index among the file's session messages (in start order). */
  index: number;
  /** FIT sport, and `/sub_sport` when there is one other than generic. */
  sport: string;
  /** start_time, epoch ms. */
  start: number;
  /** The session message's timestamp, epoch ms (when it has one). */
  timestamp?: number;
  /** The session's own values (only those the file has). */
  values: Partial<Record<Quantity, number>>;
  /** Resolution of each value present (RESOLUTION, or 1/128 rpm for a fractional cadence). */
  resolution: Partial<Record<Quantity, number>>;
  maxPower?: number;
  /** Pool length (m) of a pool swim. */
  poolLength?: number;
  /** The file's timer start/stop events, ascending (all of them: a multisport file's timer spans its sessions). */
  timerEvents: TimerEvent[];
  /** The file's records in the session's span [start, end] before the next session: count, first and last timestamps. */
  records: { count: number; first?: number; last?: number };
  /** Of those records, the plain means of power and cadence with and without their zero readings (absent without such records). */
  recordMeans: Partial<Record<'power' | 'cadence', { withZeros: number; withoutZeros?: number }>>;
  /** The quantities whose channel at least one of those records carries (RECORD_FIELDS). */
  recorded: Quantity[];
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

/** What the service made of the session: the quantities and the facts the reason rules read. */
export interface Ours {
  values: Partial<Record<Quantity, number>>;
  movingSeconds?: number;
  /** The activity's channels (IngestedActivity.metrics). */
  channels: string[];
}

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
    for (const channel of ['power', 'cadence'] as const) {
      const v = records.map((r) => num(r, channel)).filter((x): x is number => x !== undefined);
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
    return {
      index,
      sport: sub && sub !== 'generic' ? `${sport}/${sub}` : sport,
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

// ─── Ours ─────────────────────────────────────────────────────────────────────────────────────────

/** The quantities of one ingested activity (fields the engine does not give yet are left out). */
export function oursOf(a: IngestedActivity): Ours {
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
  return { values, ...(typeof a.movingSeconds === 'number' ? { movingSeconds: a.movingSeconds } : {}), channels: [...a.metrics] };
}

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

// ─── Agreement ────────────────────────────────────────────────────────────────────────────────────

/** Whether ours agrees with the device's value: within TOLERANCE of it, or within half its stored resolution. */
export function agrees(quantity: Quantity, device: number, ours: number | undefined, resolution = RESOLUTION[quantity]): boolean {
  if (ours === undefined || !Number.isFinite(ours)) return false;
  const diff = Math.abs(ours - device);
  return diff <= TOLERANCE[quantity] * Math.abs(device) + 1e-9 || diff <= resolution / 2 + 1e-9;
}

/** x within `fraction` of y (relative to y). */
const near = (x: number | undefined, y: number | undefined, fraction = 0.01) =>
  x !== undefined && y !== undefined && Math.abs(x - y) <= fraction * Math.abs(y) + 1e-9;

/**
 * The spans [start, end) when the file's timer ran, clipped to [from, to]: the state at `from` is
 * that of the last event before it (stopped when there is none), then each event sets it.
 * Undefined when the file has no timer events.
 */
export function runningSpans(events: readonly TimerEvent[], from: number, to: number): { start: number; end: number }[] | undefined {
  if (events.length === 0) return undefined;
  const spans: { start: number; end: number }[] = [];
  let running = false;
  let since = from;
  for (const e of events) {
    const t = Math.min(Math.max(e.t, from), to);
    if (e.running && !running) {
      running = true;
      since = t;
    } else if (!e.running && running) {
      running = false;
      if (t > since) spans.push({ start: since, end: t });
    }
  }
  if (running && to > since) spans.push({ start: since, end: to });
  return spans;
}

/** The session's end as the device says it: the later of start + total_elapsed_time and its timestamp. */
function deviceEnd(s: DeviceSession): number | undefined {
  const ends = [s.values.elapsed === undefined ? undefined : s.start + s.values.elapsed * 1000, s.timestamp].filter(
    (t): t is number => t !== undefined,
  );
  return ends.length ? Math.max(...ends) : undefined;
}

export interface ReasonRule {
  name: string;
  /** One line: why the difference is not ours to fix. */
  explanation: string;
  /** The quantities it may explain. */
  quantities: readonly Quantity[];
  /** Whether it explains a disagreement of `quantity` in this session (decided from the file's data and ours). */
  fires(session: DeviceSession, ours: Ours | undefined, quantity: Quantity): boolean;
}

/** A session shorter than this (s) is "tiny". */
export const TINY_SECONDS = 60;

/**
 * The reason rules, the more specific first (a cell takes the first that fires). Each fires only on
 * a disagreement of one of its quantities, and only when the file's own data says why.
 */
export const REASONS: readonly ReasonRule[] = [
  {
    name: 'no-records',
    explanation: 'the session has no record messages: the service makes no activity of it (a file without records yields none, by design)',
    quantities: QUANTITIES,
    fires: (s, ours) => s.records.count === 0 && ours === undefined,
  },
  {
    name: 'pool-swim-rests',
    explanation:
      "a pool swim's device timer time includes the rests its timer stop/start events mark (it is within 1 % of first start → last stop); ours leaves them out (within 1 % of the timer's running time)",
    quantities: ['timer'],
    fires: (s, ours) => {
      if (s.poolLength === undefined && !/\/lap_swimming$/.test(s.sport)) return false;
      const end = deviceEnd(s);
      if (s.values.timer === undefined || ours?.values.timer === undefined || end === undefined) return false;
      const spans = runningSpans(s.timerEvents, s.start, end);
      if (!spans || spans.length < 2) return false;
      const running = spans.reduce((sum, x) => sum + (x.end - x.start) / 1000, 0);
      const withRests = (spans[spans.length - 1]!.end - spans[0]!.start) / 1000;
      return near(s.values.timer, withRests) && near(ours.values.timer, running);
    },
  },
  {
    name: 'timer-exceeds-elapsed',
    explanation: "the device's total_timer_time exceeds its total_elapsed_time: the timer cannot run longer than the session lasts",
    quantities: ['timer', 'elapsed'],
    fires: (s) => s.values.timer !== undefined && s.values.elapsed !== undefined && s.values.timer > s.values.elapsed + 0.5,
  },
  {
    name: 'elapsed-short-of-records',
    explanation:
      "the device's elapsed time ends more than 1 s before its own last record or timer event (up to the session's timestamp); ours ends there (within 1 s)",
    quantities: ['elapsed'],
    fires: (s, ours) => {
      if (s.values.elapsed === undefined || ours?.values.elapsed === undefined) return false;
      const last = Math.max(
        s.records.last ?? -Infinity,
        ...s.timerEvents.filter((e) => e.t >= s.start && e.t <= (s.timestamp ?? -Infinity)).map((e) => e.t),
      );
      const deviceStop = s.start + s.values.elapsed * 1000;
      return Number.isFinite(last) && last > deviceStop + 1000 && Math.abs(ours.values.elapsed - (last - s.start) / 1000) <= 1;
    },
  },
  {
    name: 'np-inconsistent',
    explanation:
      "the device's NP contradicts its own power: above its max power, or below its average power (a 4th-power mean of 30 s means cannot be below the mean)",
    quantities: ['np'],
    fires: (s) => {
      const np = s.values.np;
      if (np === undefined) return false;
      return (s.maxPower !== undefined && np > s.maxPower) || (s.values.power !== undefined && np < s.values.power * 0.99);
    },
  },
  {
    name: 'power-zeros-left-out',
    explanation:
      "the device's average power is above its records' mean with zeros (by > 1 %) and not above their mean without zeros (+1 %): it leaves zero readings out ('exclude zeros'); ours includes them (the records' mean with zeros, within 1 %)",
    quantities: ['power'],
    fires: (s, ours) => {
      const device = s.values.power;
      const m = s.recordMeans.power;
      if (device === undefined || m?.withoutZeros === undefined) return false;
      return device > m.withZeros * 1.01 && device <= m.withoutZeros * 1.01 && near(ours?.values.power, m.withZeros);
    },
  },
  {
    name: 'cadence-above-records',
    explanation:
      "the device's average cadence is above the mean of every non-zero cadence its records hold (by > 1 %): no mean over cadence > 0 of them gives it (it leaves out low cadences too, or averages data the file lacks); ours is that mean (within 1 %)",
    quantities: ['cadence'],
    fires: (s, ours) => {
      const device = s.values.cadence;
      const m = s.recordMeans.cadence?.withoutZeros;
      return device !== undefined && m !== undefined && device > m * 1.01 && near(ours?.values.cadence, m);
    },
  },
  {
    name: 'not-in-records',
    explanation:
      "no record of the session carries the quantity's channel (a pool swim's stroke rate is in its length messages): ours is computed from records, so there is none",
    quantities: ['distance', 'power', 'np', 'hr', 'cadence', 'speed', 'ascent'],
    fires: (s, ours, q) => ours !== undefined && ours.values[q] === undefined && !s.recorded.includes(q),
  },
  {
    name: 'pool-swim-speed-underivable',
    explanation:
      "a pool swim's device average speed is no quotient of its own distance by any of its times (timer, elapsed, the timer's running time, within 1 %): some per-length average of its own; ours is distance / moving time (the seconds of its active lengths), with the distance agreeing (1 %)",
    quantities: ['speed'],
    fires: (s, ours) => {
      if (s.poolLength === undefined && !/\/lap_swimming$/.test(s.sport)) return false;
      const speed = s.values.speed;
      const d = s.values.distance;
      const end = deviceEnd(s);
      if (speed === undefined || d === undefined || end === undefined || !near(ours?.values.distance, d)) return false;
      const spans = runningSpans(s.timerEvents, s.start, end) ?? [];
      const running = spans.reduce((sum, x) => sum + (x.end - x.start) / 1000, 0);
      const times = [s.values.timer, s.values.elapsed, running].filter((x): x is number => x !== undefined && x > 0);
      return times.every((time) => !near(d / time, speed));
    },
  },
  {
    name: 'speed-over-timer',
    explanation:
      "the device's average speed is distance / timer time, ours distance / moving time, and the timer ran while stationary: our distance / our timer time is within 1 % of the device's speed",
    quantities: ['speed'],
    fires: (s, ours) => {
      const d = ours?.values.distance;
      const timer = ours?.values.timer;
      const moving = ours?.movingSeconds;
      if (s.values.speed === undefined || d === undefined || timer === undefined || moving === undefined || !(timer > 0)) return false;
      return moving < timer && near(d / timer, s.values.speed);
    },
  },
  {
    name: 'tiny-session',
    explanation: `the session lasts under ${TINY_SECONDS} s (timer and elapsed): one second of the 1 Hz grid or one sample is more than 1.7 % of it`,
    quantities: QUANTITIES,
    fires: (s) => {
      const lengths = [s.values.elapsed, s.values.timer].filter((v): v is number => v !== undefined);
      return lengths.length > 0 && Math.max(...lengths) < TINY_SECONDS;
    },
  },
];

/** The first rule that explains a disagreement of `quantity` in this session, or undefined. */
export function reasonFor(
  session: DeviceSession,
  ours: Ours | undefined,
  quantity: Quantity,
  rules: readonly ReasonRule[] = REASONS,
): ReasonRule | undefined {
  return rules.find((r) => r.quantities.includes(quantity) && r.fires(session, ours, quantity));
}

/** One session's row: each quantity the device has, compared; the row's status. */
export function compareSession(file: string, session: DeviceSession, ours: Ours | undefined, rules: readonly ReasonRule[] = REASONS): Row {
  const cells = QUANTITIES.map((quantity): Cell => {
    const device = session.values[quantity];
    const mine = ours?.values[quantity];
    const cell: Cell = {
      quantity,
      ...(device === undefined ? {} : { device }),
      ...(mine === undefined ? {} : { ours: mine }),
      agrees: false,
    };
    if (device === undefined) return cell;
    if (mine !== undefined && device !== 0) cell.diffPct = ((mine - device) / device) * 100;
    cell.agrees = agrees(quantity, device, mine, session.resolution[quantity]);
    if (!cell.agrees) {
      const reason = reasonFor(session, ours, quantity, rules);
      if (reason) cell.reason = reason.name;
    }
    return cell;
  });
  const compared = cells.filter((c) => c.device !== undefined);
  const status = compared.some((c) => !c.agrees && !c.reason) ? 'MISSED' : compared.some((c) => !c.agrees) ? 'reason' : 'ok';
  return { file, session, ours, cells, status };
}

/** Every session of a file, compared: the FIT SDK's decode and the service's ingest of the same bytes. */
export async function compareFile(
  file: string,
  bytes: Uint8Array,
  ingest: (bytes: Uint8Array) => Promise<{ ok: true; activities: IngestedActivity[] } | { ok: false; code: string; message: string }>,
): Promise<Row[]> {
  const sessions = deviceSessions(bytes);
  const result = await ingest(bytes);
  const activities = result.ok ? result.activities : [];
  const matched = matchActivities(sessions, activities);
  return sessions.map((s, i) => compareSession(file, s, matched[i] && oursOf(matched[i]!)));
}

// ─── The table ────────────────────────────────────────────────────────────────────────────────────

const CHANNEL_CODES: Record<string, string> = {
  power: 'P',
  heart_rate: 'HR',
  cadence: 'C',
  speed: 'S',
  distance: 'D',
  altitude: 'A',
  latitude: 'GPS',
  longitude: '',
  temperature: 'T',
  core_temperature: 'CT',
  smo2: 'O2',
  respiration_rate: 'RR',
};
export const CHANNEL_LEGEND =
  'channels: P power, HR heart rate, C cadence, S speed, D distance, A altitude, GPS position, T temperature, CT core temperature, O2 SmO2, RR respiration rate';

const fmt = (q: Quantity, v: number | undefined) => (v === undefined ? '–' : v.toFixed(DECIMALS[q]));
const pct = (p: number | undefined) =>
  p === undefined ? '' : ` ${p >= 0 ? '+' : '−'}${Math.abs(p) < 10 ? Math.abs(p).toFixed(2) : Math.abs(p).toFixed(1)}%`;

/** A quantity's cell: `device / ours ±diff%`, `*` when a reason explains a disagreement, `!` when nothing does; `·` when the device has no value. */
export function formatCell(c: Cell): string {
  if (c.device === undefined) return '·';
  const mark = c.agrees ? '' : c.reason ? ' *' : ' !';
  return `${fmt(c.quantity, c.device)} / ${fmt(c.quantity, c.ours)}${pct(c.diffPct)}${mark}`;
}

export function formatStatus(row: Row): string {
  const missed = row.cells.filter((c) => c.device !== undefined && !c.agrees && !c.reason).map((c) => c.quantity);
  const reasons = new Map<string, Quantity[]>();
  for (const c of row.cells) if (c.reason) reasons.set(c.reason, [...(reasons.get(c.reason) ?? []), c.quantity]);
  const explained = [...reasons].map(([r, qs]) => `${r} (${qs.join(', ')})`).join('; ');
  if (row.status === 'ok') return 'ok';
  if (row.status === 'reason') return `reason: ${explained}`;
  return `MISSED: ${missed.join(', ')}${explained ? `; reason: ${explained}` : ''}`;
}

export const TABLE_HEADER = ['file', '#', 'sport', 'channels', ...QUANTITIES.map((q) => `${LABELS[q]}: device / ours Δ`), 'status'];

export function tableRows(rows: readonly Row[]): string[][] {
  return rows.map((r) => [
    r.file,
    String(r.session.index),
    r.session.sport,
    r.ours
      ? r.ours.channels
          .map((c) => CHANNEL_CODES[c] ?? c)
          .filter(Boolean)
          .join(' ')
      : 'no activity',
    ...r.cells.map(formatCell),
    formatStatus(r),
  ]);
}

export function counts(rows: readonly Row[]): { ok: number; reason: number; missed: number } {
  return {
    ok: rows.filter((r) => r.status === 'ok').length,
    reason: rows.filter((r) => r.status === 'reason').length,
    missed: rows.filter((r) => r.status === 'MISSED').length,
  };
}
