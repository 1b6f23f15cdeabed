import type { Logger } from './log.ts';

/** A signal repeated within this long is the same signal delivered twice (see handleSignals). */
const DUPLICATE_SIGNAL_MS = 1_000;

type Closer = { name: string; close: () => Promise<void> };

/**
 * Ordered shutdown: closers run in reverse order of registration (the last thing started stops
 * first), each once. SIGTERM/SIGINT start it; a second signal (a second or more later) exits at once.
 */
export class Lifecycle {
  #closers: Closer[] = [];
  #closing: Promise<void> | undefined;

  constructor(private readonly log: Logger) {}

  add(name: string, close: () => Promise<void>): void {
    this.#closers.push({ name, close });
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      for (const { name, close } of [...this.#closers].reverse()) {
        try {
          await close();
          this.log.debug('closed', { component: name });
        } catch (err) {
          this.log.error('close failed', { component: name, err });
        }
      }
    })();
    return this.#closing;
  }

  handleSignals(): void {
    let received = 0;
    let first = 0;
    const onSignal = (signal: NodeJS.Signals) => {
      // Ctrl-C or a SIGTERM to the process group under `npm start` arrives twice: from the terminal
      // (or kill) and forwarded by npm. A repeat within a second is that one signal, not a second.
      if (received === 1 && Date.now() - first < DUPLICATE_SIGNAL_MS) return;
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
