import pg from 'pg';
import type { Db } from '../db/database.ts';
import { EVENTS_CHANNEL, fanOutWithoutDeliveries, unfannedEvents } from '../db/events.ts';
import type { Logger } from '../lib/log.ts';
import { enqueueFanOut, type Queues } from './queues.ts';

/** Events read (and fanned out or queued) at a time. */
const PAGE = 500;

/**
 * Moves committed events from the outbox onto the webhooks queue. A change's transaction NOTIFYs
 * on commit, which wakes the relay at once; a poll every `pollMs` catches anything a lost
 * connection missed (and events written while no worker ran). Sweeps never overlap; a wake-up
 * during a sweep runs one more.
 *
 * Events of users who have authorized no application with endpoints are marked fanned out, a page
 * in one statement, instead of each getting a fan-out job that would create no delivery: in a
 * backfill (two events a file) those jobs and their transactions cost ~5 ms of the worker
 * process's CPU and ~4 ms of PostgreSQL's and Redis's per file (of ~36 and ~10 ms).
 */
export async function startEventRelay(opts: {
  databaseUrl: string;
  db: Db;
  queues: Queues;
  log: Logger;
  pollMs: number;
  now?: () => Date;
}) {
  const { db, queues, log } = opts;
  const now = opts.now ?? (() => new Date());
  let closed = false;
  let running: Promise<void> | undefined;
  let again = false;

  async function sweep(): Promise<void> {
    do {
      again = false;
      // Pages by position: events stay unfanned until their fan-out job has run. A short page is
      // the last (an event committed since wakes the relay again).
      for (
        let page = await unfannedEvents(db, undefined, PAGE);
        page.length;
        page = await unfannedEvents(db, page[page.length - 1], PAGE)
      ) {
        await enqueueFanOut(
          queues,
          await fanOutWithoutDeliveries(
            db,
            page.map((e) => e.id),
            now(),
          ),
        );
        if (page.length < PAGE) break;
      }
    } while (again && !closed);
  }
  function wake() {
    if (closed) return;
    if (running) {
      again = true;
      return;
    }
    running = sweep()
      .catch((err) => log.error('event relay sweep failed', { err }))
      .finally(() => (running = undefined));
  }

  let client: pg.Client | undefined;
  async function listen() {
    const c = new pg.Client({ connectionString: opts.databaseUrl });
    c.on('notification', wake);
    c.on('error', (err) => {
      log.warn('event relay lost its database connection; polling until it is back', { err });
      if (client === c) client = undefined;
      c.end().catch(() => {});
    });
    await c.connect();
    await c.query(`LISTEN ${EVENTS_CHANNEL}`);
    client = c;
  }

  await listen();
  wake();
  const timer = setInterval(() => {
    if (!client && !closed) listen().catch((err) => log.warn('event relay could not listen', { err }));
    wake();
  }, opts.pollMs);
  timer.unref();

  return {
    async close() {
      closed = true;
      clearInterval(timer);
      await running;
      await client?.end().catch(() => {});
    },
  };
}
