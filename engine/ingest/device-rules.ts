/**
 * The rules of the data checks (./device-checks.ts): a difference between the device's own value and
 * ours is explained only by a named, one-line condition decided from the file's own data (the
 * session's other values, its timer events, its records) and ours, never from the file's name. A
 * rule is a convention (the device counts another way; ours stands) or a device error (its value
 * contradicts its own data). The more specific come first: a value takes the first that fires.
 */
import { type DeviceSession, type Ours, type Quantity, QUANTITIES, type TimerEvent } from './device-facts.ts';

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
  /**
   * `convention`: the device counts another way (or from data the file lacks), and ours stands;
   * `device-error`: the device's value is impossible by its own data, the device's error.
   */
  kind: 'convention' | 'device-error';
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
    kind: 'convention',
    explanation: 'the session has no record messages: the service makes no activity of it (a file without records yields none, by design)',
    quantities: QUANTITIES,
    fires: (s, ours) => s.records.count === 0 && ours === undefined,
  },
  {
    name: 'pool-swim-rests',
    kind: 'convention',
    explanation:
      "a pool swim's device timer time includes the rests its timer stop/start events mark (it is within 1 % of first start → last stop); ours leaves them out (within 1 % of the timer's running time)",
    quantities: ['timer'],
    fires: (s, ours) => {
      if (!s.poolSwim) return false;
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
    kind: 'device-error',
    explanation: "the device's total_timer_time exceeds its total_elapsed_time: the timer cannot run longer than the session lasts",
    quantities: ['timer', 'elapsed'],
    fires: (s) => s.values.timer !== undefined && s.values.elapsed !== undefined && s.values.timer > s.values.elapsed + 0.5,
  },
  {
    name: 'elapsed-short-of-records',
    kind: 'convention',
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
    kind: 'device-error',
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
    name: 'np-above-best-30s',
    kind: 'device-error',
    explanation:
      "the device's NP is above the highest 30-s mean power of the activity's own records (by > 5 %): NP is a 4th-power mean of 30-s means, so it cannot exceed the highest of them",
    quantities: ['np'],
    fires: (s, ours) => {
      const np = s.values.np;
      const best = ours?.best30sPower;
      return np !== undefined && best !== undefined && np > best * 1.05 + 1;
    },
  },
  {
    name: 'power-zeros-left-out',
    kind: 'convention',
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
    kind: 'convention',
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
    name: 'cadence-zeros-counted',
    kind: 'convention',
    explanation:
      "the device's average cadence is the mean of its records with their zero readings (within 1 %), below their mean without zeros (by > 1 %); ours leaves out the seconds at cadence 0 (the mean without zeros, within 1 %)",
    quantities: ['cadence'],
    fires: (s, ours) => {
      const device = s.values.cadence;
      const m = s.recordMeans.cadence;
      if (device === undefined || m?.withoutZeros === undefined) return false;
      return near(device, m.withZeros) && m.withoutZeros > m.withZeros * 1.01 && near(ours?.values.cadence, m.withoutZeros);
    },
  },
  {
    name: 'hr-not-from-records',
    kind: 'convention',
    explanation:
      "the device's average heart rate is no mean of the file's own heart-rate records (it differs from their mean by > 1 %: it averages readings the file does not hold); ours is within 1 % of that mean",
    quantities: ['hr'],
    fires: (s, ours) => {
      const device = s.values.hr;
      const m = s.recordMeans.heart_rate?.withZeros;
      return device !== undefined && m !== undefined && !near(device, m) && near(ours?.values.hr, m);
    },
  },
  {
    name: 'not-in-records',
    kind: 'convention',
    explanation:
      "no record of the session carries the quantity's channel (a pool swim's stroke rate is in its length messages): ours is computed from records, so there is none",
    quantities: ['distance', 'power', 'np', 'hr', 'cadence', 'speed', 'ascent'],
    fires: (s, ours, q) => ours !== undefined && ours.values[q] === undefined && !s.recorded.includes(q),
  },
  {
    name: 'pool-swim-speed-underivable',
    kind: 'convention',
    explanation:
      "a pool swim's device average speed is no quotient of its own distance by any of its times (timer, elapsed, the timer's running time, within 1 %): some per-length average of its own; ours is distance / moving time (the seconds of its active lengths), with the distance agreeing (1 %)",
    quantities: ['speed'],
    fires: (s, ours) => {
      if (!s.poolSwim) return false;
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
    kind: 'convention',
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
    name: 'speed-over-shorter-moving-time',
    kind: 'convention',
    explanation:
      "the device's average speed is distance over a moving time of its own, shorter than ours by under 10 % (it takes slow seconds for stops by a threshold of its own): the distances agree (1 %), and distance / the device's speed lies within 10 % below our moving time",
    quantities: ['speed'],
    fires: (s, ours) => {
      const speed = s.values.speed;
      const d = ours?.values.distance;
      const moving = ours?.movingSeconds;
      if (speed === undefined || !(speed > 0) || d === undefined || moving === undefined || !(moving > 0)) return false;
      if (s.values.distance !== undefined && !near(d, s.values.distance)) return false;
      const implied = d / speed;
      return implied < moving * 0.99 && implied >= moving * 0.9;
    },
  },
  {
    name: 'tiny-session',
    kind: 'convention',
    explanation: `the session lasts under ${TINY_SECONDS} s (timer and elapsed): one second of the 1 Hz grid or one sample is more than 1.7 % of it`,
    quantities: QUANTITIES,
    fires: (s) => {
      const lengths = [s.values.elapsed, s.values.timer].filter((v): v is number => v !== undefined);
      return lengths.length > 0 && Math.max(...lengths) < TINY_SECONDS;
    },
  },
];

const BY_NAME = new Map(REASONS.map((r) => [r.name, r]));

/** The rule of that name (a stored check names one), or undefined. */
export const ruleNamed = (name: string | undefined): ReasonRule | undefined => (name === undefined ? undefined : BY_NAME.get(name));
