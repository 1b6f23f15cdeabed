import { sql, type Transaction } from 'kysely';
import type { Database, Db, EventRow, WebhookDelivery } from './database.ts';
import { actorColumn } from '../lib/actor.ts';

/**
 * Domain events (docs/app-developers.md, "Webhooks"). Each change writes its event into the `events` outbox in its
 * own transaction, so the event exists exactly when the change committed: a retried job that finds
 * the work done writes none. NOTIFY (delivered on commit) wakes the relay, which moves new events
 * onto the BullMQ webhooks queue (workers/event-relay.ts), or marks them fanned out at once when
 * nobody can receive them (fanOutWithoutDeliveries).
 */
export const EVENT_TYPES = [
  'activity_created',
  'activity_updated',
  'activity_deleted',
  'trace_created',
  'trace_updated',
  'trace_deleted',
  'test_created',
  'test_updated',
  'test_deleted',
  'source_processed',
  'source_failed',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];
/** Sent only by "Send test event" in Settings, to one application. */
export const TEST_EVENT = 'test' as const;

/** The channel the relay LISTENs on. */
export const EVENTS_CHANNEL = 'tds_events';

type Tx = Transaction<Database> | Db;

/**
 * Write events in the caller's transaction (call it inside the change's transaction): one statement, the insert and the NOTIFY.
 * Each names the user acting through a delegation (lib/actor.ts), if any.
 */
export async function recordEvents(trx: Tx, events: { user_id: string; type: EventType; resource_id: string }[], now: Date): Promise<void> {
  if (!events.length) return;
  const actor = actorColumn();
  // A data-modifying WITH runs whether or not the query reads it.
  await trx
    .with('recorded', (db) => db.insertInto('events').values(events.map((e) => ({ ...e, occurred_at: now, ...actor }))))
    .selectNoFrom(sql<void>`pg_notify(${EVENTS_CHANNEL}, '')`.as('notified'))
    .execute();
}

/** Events not yet fanned out, oldest first, a page at a time: pass the last one of a page to get the next. */
export function unfannedEvents(
  db: Db,
  after?: Pick<EventRow, 'id' | 'occurred_at'>,
  limit = 500,
): Promise<Pick<EventRow, 'id' | 'occurred_at'>[]> {
  let q = db.selectFrom('events').select(['id', 'occurred_at']).where('fanned_out_at', 'is', null);
  if (after)
    q = q.where((eb) =>
      eb.or([eb('occurred_at', '>', after.occurred_at), eb.and([eb('occurred_at', '=', after.occurred_at), eb('id', '>', after.id)])]),
    );
  return q.orderBy('occurred_at').orderBy('id').limit(limit).execute();
}

/**
 * Of these events, mark fanned out — in one statement, without a fan-out job each — those that
 * cannot have a delivery: their user has authorized (a consent exists) no application that has
 * endpoints, and no such application acts as them for their manager (a managed user, docs/coaching.md). That is what fanOutEvent would do for them now (it creates a delivery per endpoint of
 * every such application: none). Returns the ids of the others, which need their fan-out.
 */
export async function fanOutWithoutDeliveries(db: Db, eventIds: string[], now: Date): Promise<string[]> {
  if (!eventIds.length) return [];
  const { rows } = await sql<{ id: string }>`
    UPDATE events e SET fanned_out_at = ${now}
    WHERE e.id = ANY(${eventIds}::uuid[]) AND e.fanned_out_at IS NULL
      AND NOT EXISTS (
        SELECT 1 FROM consents c JOIN applications a ON a.id = c.application_id
        WHERE c.user_id = e.user_id AND cardinality(a.webhook_endpoints) > 0)
      AND NOT EXISTS (
        SELECT 1 FROM delegations dl JOIN applications a ON a.id = dl.application_id
        WHERE dl.user_id = e.user_id AND dl.team_id IS NULL AND cardinality(a.webhook_endpoints) > 0)
    RETURNING e.id`.execute(db);
  const done = new Set(rows.map((r) => r.id));
  return eventIds.filter((id) => !done.has(id));
}

/**
 * Create the deliveries of an event: one per endpoint of every application the user has
 * authorized (a consent exists) that has endpoints; nothing for any other application. Idempotent:
 * a second run creates nothing new. Returns the event's deliveries still pending.
 */
export async function fanOutEvent(db: Db, eventId: string, now: Date): Promise<{ event: EventRow; pending: string[] } | undefined> {
  return db.transaction().execute(async (trx) => {
    const event = await trx.selectFrom('events').selectAll().where('id', '=', eventId).forUpdate().executeTakeFirst();
    if (!event) return undefined;
    if (!event.fanned_out_at) {
      await sql`
        INSERT INTO webhook_deliveries (event_id, application_id, endpoint, created_at)
        SELECT ${eventId}, a.id, e.endpoint, ${now}
        FROM applications a
        CROSS JOIN LATERAL unnest(a.webhook_endpoints) AS e(endpoint)
        WHERE a.id IN (SELECT application_id FROM consents WHERE user_id = ${event.user_id})
           -- a managed user's manager's applications that act as them (docs/coaching.md)
           OR a.id IN (SELECT application_id FROM delegations WHERE user_id = ${event.user_id} AND team_id IS NULL AND application_id IS NOT NULL)
        ON CONFLICT DO NOTHING`.execute(trx);
      await trx.updateTable('events').set({ fanned_out_at: now }).where('id', '=', eventId).execute();
    }
    const pending = await trx
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('event_id', '=', eventId)
      .where('status', '=', 'pending')
      .execute();
    return { event, pending: pending.map((p) => p.id) };
  });
}

/** A test event from an application's owner to that application's endpoints only; returns its deliveries. */
export async function createTestEvent(
  db: Db,
  application: { id: string; owner_id: string | null; webhook_endpoints: string[] },
  now: Date,
): Promise<string[]> {
  const owner = application.owner_id;
  if (!application.webhook_endpoints.length || !owner) return [];
  return db.transaction().execute(async (trx) => {
    const event = await trx
      .insertInto('events')
      .values({ user_id: owner, type: TEST_EVENT, resource_id: application.id, occurred_at: now, fanned_out_at: now })
      .returning('id')
      .executeTakeFirstOrThrow();
    const rows = await trx
      .insertInto('webhook_deliveries')
      .values(
        application.webhook_endpoints.map((endpoint) => ({
          event_id: event.id,
          application_id: application.id,
          endpoint,
          created_at: now,
        })),
      )
      .returning('id')
      .execute();
    return rows.map((r) => r.id);
  });
}

/** What one delivery attempt needs: the delivery, its event, the application now, and whether the user still consents. */
export async function deliveryContext(db: Db, deliveryId: string) {
  const row = await db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('events as e', 'e.id', 'd.event_id')
    .innerJoin('applications as a', 'a.id', 'd.application_id')
    .leftJoin('consents as c', (j) => j.onRef('c.application_id', '=', 'd.application_id').onRef('c.user_id', '=', 'e.user_id'))
    .select([
      'd.id',
      'd.status',
      'd.endpoint',
      'd.attempts',
      'e.id as event_id',
      'e.user_id',
      'e.type as event_type',
      'e.resource_id',
      'e.occurred_at',
      'e.actor_id',
      'a.id as application_id',
      'a.owner_id',
      'a.webhook_endpoints',
      'a.webhook_secret',
      'c.user_id as consenting_user',
      // A managed user authorizes no application: their manager's applications acting as them receive their events.
      sql<boolean>`EXISTS (SELECT 1 FROM delegations dl WHERE dl.user_id = e.user_id AND dl.team_id IS NULL AND dl.application_id = d.application_id)`.as(
        'managing_application',
      ),
    ])
    .where('d.id', '=', deliveryId)
    .executeTakeFirst();
  return row;
}

export interface AttemptOutcome {
  status: 'pending' | 'delivered' | 'failed';
  statusCode: number | null;
  error: string | null;
  excerpt: string | null;
}

/** Record one attempt's outcome (the attempt count grows by one). */
export async function recordAttempt(db: Db, deliveryId: string, outcome: AttemptOutcome, now: Date): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set((eb) => ({
      status: outcome.status,
      attempts: eb('attempts', '+', 1),
      last_status_code: outcome.statusCode,
      last_error: outcome.error,
      response_excerpt: outcome.excerpt,
      last_attempt_at: now,
      ...(outcome.status === 'delivered' ? { delivered_at: now } : {}),
    }))
    .where('id', '=', deliveryId)
    .execute();
}

/** Close a delivery without an attempt (consent withdrawn, endpoint removed, no secret). */
export async function abandonDelivery(db: Db, deliveryId: string, reason: string, now: Date): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({ status: 'failed', last_error: reason, last_attempt_at: now })
    .where('id', '=', deliveryId)
    .where('status', '=', 'pending')
    .execute();
}

export type DeliveryLogRow = Pick<
  WebhookDelivery,
  'id' | 'endpoint' | 'status' | 'attempts' | 'last_status_code' | 'last_error' | 'response_excerpt' | 'created_at' | 'last_attempt_at'
> & {
  event_type: string;
  resource_id: string;
};

/** An application's latest deliveries, newest first (the Settings delivery log). */
export function deliveryLog(db: Db, applicationId: string, limit = 50): Promise<DeliveryLogRow[]> {
  return db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('events as e', 'e.id', 'd.event_id')
    .select([
      'd.id',
      'd.endpoint',
      'd.status',
      'd.attempts',
      'd.last_status_code',
      'd.last_error',
      'd.response_excerpt',
      'd.created_at',
      'd.last_attempt_at',
      'e.type as event_type',
      'e.resource_id',
    ])
    .where('d.application_id', '=', applicationId)
    .orderBy('d.created_at', 'desc')
    .orderBy('d.id', 'desc')
    .limit(limit)
    .execute();
}

/** Delete events (with their deliveries) older than `before` that have nothing pending any more; returns how many. */
export async function deleteFinishedEvents(db: Db, before: Date): Promise<number> {
  const res = await db
    .deleteFrom('events')
    .where('occurred_at', '<', before)
    .where('fanned_out_at', 'is not', null)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('webhook_deliveries')
            .select(sql`1`.as('one'))
            .whereRef('webhook_deliveries.event_id', '=', 'events.id')
            .where('status', '=', 'pending'),
        ),
      ),
    )
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** The activities deleted since `since`, by user (from their `activity_deleted` events). */
export async function activitiesDeletedSince(db: Db, since: Date): Promise<Map<string, string[]>> {
  const rows = await db
    .selectFrom('events')
    .select(['user_id', 'resource_id'])
    .where('type', '=', 'activity_deleted')
    .where('occurred_at', '>=', since)
    .execute();
  const byUser = new Map<string, string[]>();
  for (const r of rows) byUser.set(r.user_id, [...(byUser.get(r.user_id) ?? []), r.resource_id]);
  return byUser;
}

/** The latest changes made for the user by someone else (a coach through a team, a manager: docs/coaching.md), newest first, with who made them. */
export function changesByOthers(db: Db, userId: string, limit = 50) {
  return db
    .selectFrom('events as e')
    .innerJoin('users as a', 'a.id', 'e.actor_id')
    .select(['e.type', 'e.resource_id', 'e.occurred_at', 'a.first_name', 'a.last_name'])
    .where('e.user_id', '=', userId)
    .where('e.actor_id', 'is not', null)
    .orderBy('e.occurred_at', 'desc')
    .limit(limit)
    .execute();
}
