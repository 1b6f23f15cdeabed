import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import type { Logger } from './log.ts';

/** A request in flight as the warning names it: never its query string (it may hold secrets). */
export interface InFlightRequest {
  method: string;
  path: string;
  request_id: string;
  running_ms: number;
}

export interface LoopState {
  /** A tick within the last window came later than the threshold (or one is overdue by more now). */
  blocked: boolean;
  /** The worst lateness of a tick within the last window, in milliseconds. */
  delay_ms: number;
  /** The 99th percentile of the event-loop delay histogram over the current window (the last one's just after a reset). */
  p99_ms: number;
}

export interface LoopMonitor {
  /** Start measuring (once; later calls do nothing). Before it, the loop reads not blocked. */
  start(): void;
  state(): LoopState;
  close(): Promise<void>;
}

export interface LoopMonitorOptions {
  /** A tick this much later than due means the loop was blocked. */
  thresholdMs: number;
  /** How long after a block `state().blocked` stays true; also the span of `delay_ms` and `p99_ms`. */
  windowMs: number;
  log: Logger;
  /** The requests in flight, oldest first, at most `limit`. */
  inFlight: (limit: number) => InFlightRequest[];
  /** How often the timer ticks (default 100 ms). */
  tickMs?: number;
}

/** The warning names at most this many requests in flight. */
const IN_FLIGHT_LOGGED = 10;

/**
 * Measures the event loop's delay once started: an unref'd timer ticks every `tickMs` and measures
 * how late each tick came (the loop was blocked at least that long); a tick later than `thresholdMs`
 * logs one warning naming the requests in flight, and `state().blocked` stays true for `windowMs`
 * after it. Node's `monitorEventLoopDelay` histogram (nanoseconds) gives the p99 over each window.
 */
export function createLoopMonitor({ thresholdMs, windowMs, log, inFlight, tickMs = 100 }: LoopMonitorOptions): LoopMonitor {
  const histogram = monitorEventLoopDelay({ resolution: 20 });
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  let windowStart = 0;
  let lastP99Ms = 0;
  let lastTick = 0;
  let lastBlockAt = Number.NEGATIVE_INFINITY;
  // Ticks that came late, oldest first, pruned to the window: the worst within it is their maximum.
  const late: { at: number; ms: number }[] = [];

  function tick() {
    const now = performance.now();
    const lateMs = now - lastTick - tickMs;
    lastTick = now;
    while (late.length && now - late[0]!.at > windowMs) late.shift();
    if (lateMs >= 1) late.push({ at: now, ms: lateMs });
    if (lateMs > thresholdMs) {
      lastBlockAt = now;
      log.warn('event loop blocked', {
        delay_ms: Math.round(lateMs),
        threshold_ms: thresholdMs,
        // (the window's 99th percentile of the delay: one block, or a loop slow throughout)
        p99_ms: histogram.count > 0 ? p99(histogram) : lastP99Ms,
        in_flight: inFlight(IN_FLIGHT_LOGGED),
      });
    }
    if (now - windowStart >= windowMs) {
      lastP99Ms = p99(histogram);
      histogram.reset();
      windowStart = now;
    }
  }

  return {
    start() {
      if (timer || closed) return;
      histogram.enable();
      windowStart = lastTick = performance.now();
      timer = setInterval(tick, tickMs);
      timer.unref();
    },
    state() {
      const now = performance.now();
      // A tick overdue by more than the threshold now: the loop was just blocked and the timer has not
      // run yet (a request read in the same turn of the loop is answered before the timers' phase).
      const overdueMs = timer && !closed ? now - lastTick - tickMs : 0;
      let worst = Math.max(0, overdueMs);
      for (const { at, ms } of late) if (now - at <= windowMs && ms > worst) worst = ms;
      return {
        blocked: now - lastBlockAt <= windowMs || overdueMs > thresholdMs,
        delay_ms: Math.round(worst),
        p99_ms: histogram.count > 0 ? p99(histogram) : lastP99Ms,
      };
    },
    async close() {
      closed = true;
      clearInterval(timer);
      histogram.disable();
    },
  };
}

function p99(histogram: { percentile(p: number): number }): number {
  return Math.round(histogram.percentile(99) / 1e5) / 10;
}
