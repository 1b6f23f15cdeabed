import type { Logger } from './log.ts';

/**
 * The first repeat of a signal within this long is the same signal delivered twice (see
 * handleSignals): npm forwards it as soon as it runs, which on a busy machine can be seconds late.
 */
export const DUPLICATE_SIGNAL_MS = 5_000;

type Closer = { name: string; close: () => Promise<void>; timeoutMs?: number };

/** How long one closer may take by default before shutdown gives up on it and goes on. */
const DEFAULT_STEP_TIMEOUT_MS = 15_000;

/**
 * The bound for closing a connection pool, registered before the work that uses it and so closed after
 * that work stopped: a query still running then belongs to work that was abandoned (a job handed back,
 * a request cut at the timeout), and waiting for it helps nothing.
 */
export const POOL_CLOSE_TIMEOUT_MS = 2_000;

/**
 * Ordered shutdown: closers run in reverse order of registration (the last thing started stops
 * first), each once. SIGTERM/SIGINT start it; a second signal exits at once (the first repeat within
 * DUPLICATE_SIGNAL_MS is npm's copy of the first, not a second).
 * A closer that does not finish within `stepTimeoutMs` is logged and left behind, so one stuck
 * resource (a pool waiting for a query that waits on a lock held elsewhere) cannot keep the process
 * up: the process exits, and the server side rolls back what that connection had open.
 */
export class Lifecycle {
  #closers: Closer[] = [];
  #closing: Promise<void> | undefined;
  readonly #stepTimeoutMs: number;

  constructor(
    private readonly log: Logger,
    opts: { stepTimeoutMs?: number } = {},
  ) {
    this.#stepTimeoutMs = opts.stepTimeoutMs ?? DEFAULT_STEP_TIMEOUT_MS;
  }

  /** Register a closer; `timeoutMs` overrides the step bound (a pool closed after the work that used it is quick, or stuck). */
  add(name: string, close: () => Promise<void>, opts: { timeoutMs?: number } = {}): void {
    this.#closers.push({ name, close, timeoutMs: opts.timeoutMs });
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      for (const { name, close, timeoutMs = this.#stepTimeoutMs } of [...this.#closers].reverse()) {
        let timer: NodeJS.Timeout | undefined;
        try {
          const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), timeoutMs)));
          if ((await Promise.race([close(), late])) === 'late')
            this.log.warn('close did not finish in time: left behind', { component: name, timeout_ms: timeoutMs });
          else this.log.debug('closed', { component: name });
        } catch (err) {
          this.log.error('close failed', { component: name, err });
        } finally {
          clearTimeout(timer);
        }
      }
    })();
    return this.#closing;
  }

  handleSignals(): void {
    let received = 0;
    let first = 0;
    let copyIgnored = false;
    const onSignal = (signal: NodeJS.Signals) => {
      // Ctrl-C or a SIGTERM to the process group under `npm start` arrives twice: from the terminal
      // (or kill) and forwarded by npm. The first repeat soon after is that one signal, not a second;
      // a further one is the operator's second.
      if (received === 1 && !copyIgnored && Date.now() - first < DUPLICATE_SIGNAL_MS) {
        copyIgnored = true;
        return;
      }
      received += 1;
      first ||= Date.now();
      if (received > 1) {
        this.log.warn('second signal: exiting now', { signal });
        process.exit(1);
      }
      this.log.info('shutting down', { signal });
      this.close().then(
        () => {
          this.log.info('shutdown complete');
          process.exit(0);
        },
        () => process.exit(1),
      );
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  }
}
