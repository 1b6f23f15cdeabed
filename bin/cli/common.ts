/** What the operator commands share: flags, output, the user a flag names, waiting for the workers. */
import type { Db } from '../../db/database.ts';
import { findUserByEmail } from '../../db/users.ts';
import { QueueEvents, type Queue } from 'bullmq';
import type { Redis } from 'ioredis';

export class UsageError extends Error {}

export type Flags = Record<string, string | boolean | undefined>;

export function required(flags: Flags, name: string): string {
  const v = flags[name];
  if (typeof v !== 'string' || !v.trim()) throw new UsageError(`--${name} is required`);
  return v.trim();
}

export function print(json: boolean, value: unknown, text: string) {
  process.stdout.write(json ? JSON.stringify(value, null, 2) + '\n' : text + '\n');
}

/** How often `backfill --wait` reads the progress (the bar's pace), and writes a plain or JSON line. */
export const POLL_MS = 500;
export const REPORT_EVERY_MS = 2_000;

/**
 * Ctrl-C while a command watches the workers: `pause()` waits POLL_MS, or less when Ctrl-C comes,
 * and tells whether it came (the workers go on; only the watching stops). `dispose()` lets go of SIGINT.
 */
export function interruptible() {
  let interrupted = false;
  let wake: (() => void) | undefined;
  const onInterrupt = () => {
    interrupted = true;
    wake?.();
  };
  process.once('SIGINT', onInterrupt);
  return {
    async pause(): Promise<boolean> {
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, POLL_MS);
      });
      return interrupted;
    },
    dispose: () => process.off('SIGINT', onInterrupt),
  };
}

/** The user `--user EMAIL` names (undefined without the flag); a UsageError when nobody has that email. */
export async function userIdOf(db: Db, flags: Flags): Promise<string | undefined> {
  if (typeof flags.user !== 'string') return undefined;
  const user = await findUserByEmail(db, flags.user.trim());
  if (!user) throw new UsageError(`no user with email ${flags.user}`);
  return user.id;
}

/**
 * A queue's events read from the stream's position now, before the caller adds its jobs: their ends
 * cannot be missed however soon they come (a finished job is removed and cannot be looked at later).
 */
export async function eventsFromNow(producer: Redis, queue: Queue, connection: Redis, prefix: string): Promise<QueueEvents> {
  const [last] = await producer.xrevrange(queue.keys.events!, '+', '-', 'COUNT', 1);
  return new QueueEvents(queue.name, { connection, prefix, lastEventId: last?.[0] ?? '0-0' });
}

/** The return value of job `jobId` once it completes (rejects with its reason when it fails for good). */
export function finishedJob<T>(events: QueueEvents, jobId: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const completed = (args: { jobId: string; returnvalue: unknown }) => args.jobId === jobId && (stop(), resolve(args.returnvalue as T));
    const failed = (args: { jobId: string; failedReason: string }) =>
      args.jobId === jobId && (stop(), reject(new Error(args.failedReason)));
    const stop = () => {
      events.off('completed', completed);
      events.off('failed', failed);
    };
    events.on('completed', completed);
    events.on('failed', failed);
  });
}
