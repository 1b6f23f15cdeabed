import type { Logger } from './log.ts';

type Closer = { name: string; close: () => Promise<void> };

/**
 * Ordered shutdown: closers run in reverse order of registration (the last thing started stops
 * first), each once. SIGTERM/SIGINT start it; a second signal exits at once.
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
    const onSignal = (signal: NodeJS.Signals) => {
      received += 1;
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
