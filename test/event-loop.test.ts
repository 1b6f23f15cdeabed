import test from 'ava';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { createLoopMonitor } from '../lib/event-loop.ts';
import type { Fields, Logger } from '../lib/log.ts';
import { startTestService, type TestService } from './helpers/service.ts';

// Blocking the event loop blocks every test of this process: the tests here run one at a time.
const THRESHOLD_MS = 200;
const WINDOW_MS = 1_000;
const BLOCK_MS = 800;
/** The monitor's timer ticks every 100 ms: a block of BLOCK_MS makes a tick at least this late. */
const LEAST_DELAY_MS = BLOCK_MS - 100 - 1;

type Line = { level: string; msg: string } & Fields;
type Readiness = { status: string; checks: Record<string, string>; event_loop_delay_ms: number };

/** A logger that keeps every line, for the tests to read what the service logged. */
function recordingLogger(lines: Line[], base: Fields = {}): Logger {
  const at = (level: string) => (msg: string, fields?: Fields) => void lines.push({ level, msg, ...base, ...fields });
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (fields) => recordingLogger(lines, { ...base, ...fields }),
  };
}

const lines: Line[] = [];
let service: TestService;
test.before(async () => {
  service = await startTestService({
    log: recordingLogger(lines),
    env: { EVENT_LOOP_BLOCKED_MS: String(THRESHOLD_MS), EVENT_LOOP_WINDOW_MS: String(WINDOW_MS) },
  });
  // The first fetch loads Node's HTTP client, which keeps a loaded machine's loop busy for a while:
  // the tests start from a loop that reads not blocked.
  const ready = await readyAgain(20_000);
  if (ready.status !== 200) throw new Error(`the service did not become ready: ${JSON.stringify(ready.body)}`);
});
test.after.always(() => service?.close());

/** Keep the event loop of this process (the service's too) busy for `ms`. */
function blockLoop(ms: number): void {
  const until = performance.now() + ms;
  let spins = 0;
  while (performance.now() < until) spins += 1;
  if (spins < 0) throw new Error('unreachable');
}

/**
 * A request the service is handling and that stays in flight: its body is announced but never sent
 * (the body parser waits for it). Resolves once the service has taken it (its `100 Continue` is
 * written as the request is handed to the app, whose middleware registers it in the same turn).
 */
function requestInFlight(path: string, requestId: string): Promise<http.ClientRequest> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${service.url}${path}`, {
      method: 'POST',
      agent: false,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'content-length': '64',
        expect: '100-continue',
        'x-request-id': requestId,
      },
    });
    req.once('continue', () => resolve(req));
    req.on('error', (err) => ((err as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(err)));
    req.flushHeaders();
  });
}

async function waitFor<T>(find: () => T | undefined, timeoutMs: number): Promise<T | undefined> {
  const until = performance.now() + timeoutMs;
  for (;;) {
    const hit = find();
    if (hit !== undefined || performance.now() > until) return hit;
    await new Promise((r) => setTimeout(r, 20));
  }
}

const warnings = () => lines.filter((l) => l.level === 'warn' && l.msg === 'event loop blocked');

/** Poll /readyz until it answers 200; returns that answer's body and when it came. */
async function readyAgain(timeoutMs: number) {
  const until = performance.now() + timeoutMs;
  for (;;) {
    const res = await fetch(`${service.url}/readyz`);
    const body = (await res.json()) as Readiness;
    if (res.status === 200 || performance.now() > until) return { status: res.status, body, at: performance.now() };
    await new Promise((r) => setTimeout(r, 50));
  }
}

test.serial('a blocked loop logs one warning naming the request in flight, and /readyz is 503 for the window after', async (t) => {
  const slow = await requestInFlight('/api/v1/oauth/token?client_secret=do-not-log-me', 'slow-token-1');
  t.teardown(() => slow.destroy());
  const before = warnings().length;

  blockLoop(BLOCK_MS);
  const unblocked = performance.now();

  // What an operator reads: one warning, the delay it measured, and the request that was running.
  const warning = await waitFor(() => warnings()[before], 2_000);
  if (!warning) return t.fail('no "event loop blocked" warning was logged');
  t.true((warning.delay_ms as number) >= LEAST_DELAY_MS, `delay_ms ${warning.delay_ms}`);
  t.true((warning.delay_ms as number) < BLOCK_MS + 500, `delay_ms ${warning.delay_ms}`);
  t.is(warning.threshold_ms, THRESHOLD_MS);
  t.is(typeof warning.p99_ms, 'number', "the window's 99th percentile of the delay");
  const inFlight = warning.in_flight as { method: string; path: string; request_id: string; running_ms: number }[];
  t.deepEqual(
    inFlight.map(({ running_ms: _, ...r }) => r),
    [{ method: 'POST', path: '/api/v1/oauth/token', request_id: 'slow-token-1' }],
  );
  t.true(inFlight[0]!.running_ms >= BLOCK_MS, `running_ms ${inFlight[0]!.running_ms}`);
  t.notRegex(JSON.stringify(warning), /do-not-log-me|client_secret/);

  // A load balancer's probe right after: not ready, because of the loop alone.
  const res = await fetch(`${service.url}/readyz`);
  t.is(res.status, 503);
  t.is(res.headers.get('cache-control'), 'no-store');
  const { event_loop_delay_ms: delay, ...body } = (await res.json()) as Readiness;
  t.deepEqual(body, { status: 'unavailable', checks: { postgres: 'ok', redis: 'ok', event_loop: 'blocked' } });
  t.true(delay >= LEAST_DELAY_MS, `event_loop_delay_ms ${delay}`);

  // Ready again once the window has passed since the block, not before; the block no longer counts.
  const ready = await readyAgain(WINDOW_MS + 2_000);
  t.is(ready.status, 200);
  t.deepEqual(ready.body.checks, { postgres: 'ok', redis: 'ok', event_loop: 'ok' });
  t.true(ready.body.event_loop_delay_ms <= THRESHOLD_MS, `event_loop_delay_ms ${ready.body.event_loop_delay_ms}`);
  t.true(ready.at - unblocked >= WINDOW_MS, `ready ${Math.round(ready.at - unblocked)} ms after the block`);
  t.log(`delay logged ${warning.delay_ms} ms for a ${BLOCK_MS} ms block; ready again ${Math.round(ready.at - unblocked)} ms after it`);

  // One block, one warning (a loaded machine may add short ones of its own, never one this long).
  t.is(
    warnings()
      .slice(before)
      .filter((w) => (w.delay_ms as number) >= LEAST_DELAY_MS).length,
    1,
  );
});

test.serial('the warning names at most 10 requests in flight, oldest first', async (t) => {
  const requests: http.ClientRequest[] = [];
  t.teardown(() => {
    for (const req of requests) req.destroy();
  });
  for (let i = 0; i < 12; i++) requests.push(await requestInFlight(`/api/v1/oauth/token`, `slow-${i}`));
  const before = warnings().length;

  blockLoop(BLOCK_MS / 2);

  const warning = await waitFor(() => warnings()[before], 2_000);
  if (!warning) return t.fail('no "event loop blocked" warning was logged');
  const ids = (warning.in_flight as { request_id: string }[]).map((r) => r.request_id);
  t.deepEqual(
    ids,
    Array.from({ length: 10 }, (_, i) => `slow-${i}`),
  );
});

test.serial(
  'a probe answered right after a block, before the monitor timer ran, already reads blocked; the timer then logs it once',
  async (t) => {
    const logged: Line[] = [];
    const loop = createLoopMonitor({ thresholdMs: THRESHOLD_MS, windowMs: WINDOW_MS, log: recordingLogger(logged), inFlight: () => [] });
    t.teardown(() => loop.close());
    loop.start();
    await new Promise((r) => setTimeout(r, 250));
    t.like(loop.state(), { blocked: false });

    blockLoop(BLOCK_MS / 2);
    // No timer has run yet: nothing logged, but the state already says blocked.
    const now = loop.state();
    t.true(now.blocked);
    t.true(now.delay_ms > THRESHOLD_MS, `delay_ms ${now.delay_ms}`);
    t.is(logged.length, 0);

    await new Promise((r) => setTimeout(r, 150));
    t.is(logged.filter((l) => (l.delay_ms as number) >= BLOCK_MS / 2 - 101).length, 1);
    t.like(logged[0], { level: 'warn', msg: 'event loop blocked', threshold_ms: THRESHOLD_MS, in_flight: [] });
    const after = loop.state();
    t.true(after.blocked);
    t.true(after.p99_ms > THRESHOLD_MS, `p99_ms ${after.p99_ms}`);

    await loop.close();
    await new Promise((r) => setTimeout(r, WINDOW_MS + 100));
    t.false(loop.state().blocked, 'closed, and the window has passed');
  },
);
