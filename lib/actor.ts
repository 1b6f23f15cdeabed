import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Who acts, when a user acts for another (a delegated token, docs/coaching.md): set around a request's
 * handling (api/http/authenticate.ts) and around the ingest of a source uploaded that way
 * (workers/ingest.ts), read where a change is recorded (db/events.ts, db/sources.ts), so that every
 * event and source of the change names the actor without each caller passing it along.
 */
const actors = new AsyncLocalStorage<string>();

export function withActor<T>(actorId: string | null | undefined, run: () => T): T {
  return actorId ? actors.run(actorId, run) : run();
}

/** The acting user's id inside withActor; undefined when users act for themselves. */
export function currentActor(): string | undefined {
  return actors.getStore();
}

/** The `actor_id` column's value for a row written now: only inside withActor (left to its default, null, otherwise). */
export function actorColumn(): { actor_id: string } | Record<string, never> {
  const actor = actors.getStore();
  return actor ? { actor_id: actor } : {};
}
