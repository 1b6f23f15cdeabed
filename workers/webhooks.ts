import type { Job } from 'bullmq';
import type { Db } from '../db/database.ts';
import { abandonDelivery, deliveryContext, fanOutEvent, recordAttempt, TEST_EVENT } from '../db/events.ts';
import { resolveWebhookTarget } from '../lib/webhook-target.ts';
import { postWebhook } from '../lib/webhook-post.ts';
import { signWebhook } from '../lib/webhook-signature.ts';
import { formatInstant } from '../lib/time.ts';
import { SecretUnreadable, type SecretBox } from '../lib/secret-box.ts';
import { webhookSecretContext } from '../db/applications.ts';
import type { Logger } from '../lib/log.ts';
import { enqueueDeliveries, type Queues, type WebhookJob } from './queues.ts';

export interface WebhookDeps {
  db: Db;
  queues: Queues;
  log: Logger;
  now: () => Date;
  /** Opens the stored webhook secrets (lib/secret-box.ts). */
  box: SecretBox;
  allowHttpLoopback: boolean;
  timeoutMs: number;
  retry: { baseMs: number; maxDelayMs: number };
}

/** The body of a delivery (docs/app-developers.md, "Webhooks"), serialised once: it is what the signature covers. */
export function webhookBody(e: {
  user_id: string;
  event_type: string;
  resource_id: string;
  occurred_at: Date;
  actor_id: string | null;
}): string {
  return JSON.stringify({
    user_id: e.user_id,
    event_type: e.event_type,
    resource_id: e.resource_id,
    timestamp: formatInstant(e.occurred_at),
    actor_id: e.actor_id,
  });
}

/** One worker for the webhooks queue: `fan-out` jobs create deliveries, `deliver` jobs attempt them. */
export function webhooksProcessor(deps: WebhookDeps) {
  const fanOut = fanOutProcessor(deps);
  const deliver = deliverProcessor(deps);
  return async function webhooks(job: Job<WebhookJob>) {
    if ('eventId' in job.data) return fanOut(job.data.eventId);
    return deliver(job as Job<{ deliveryId: string }>);
  };
}

/** Idempotent: deliveries are unique per (event, application, endpoint); a rerun queues the pending ones again. */
function fanOutProcessor(deps: WebhookDeps) {
  return async function fanOut(eventId: string) {
    const result = await fanOutEvent(deps.db, eventId, deps.now());
    if (!result) return { skipped: 'event gone' };
    await enqueueDeliveries(deps.queues, result.pending, deps.retry);
    return { deliveries: result.pending.length };
  };
}

/**
 * One attempt. Checked again at every attempt: the user still authorizes the application, the
 * endpoint is still registered, the application has a secret, and the target resolves to public
 * addresses only. A 2xx within the time limit delivers; anything else is retried by BullMQ with
 * exponential backoff, and recorded as failed after the last attempt.
 */
function deliverProcessor(deps: WebhookDeps) {
  return async function deliver(job: Job<{ deliveryId: string }>) {
    const d = await deliveryContext(deps.db, job.data.deliveryId);
    if (d?.status !== 'pending') return { skipped: d ? `already ${d.status}` : 'delivery gone' };
    const now = deps.now();
    const abandon = async (reason: string) => {
      await abandonDelivery(deps.db, d.id, reason, now);
      return { abandoned: reason };
    };
    if (d.event_type !== TEST_EVENT && !d.consenting_user && !d.managing_application)
      return abandon('the user no longer authorizes this application');
    if (!d.webhook_endpoints.includes(d.endpoint)) return abandon('the endpoint is no longer registered');
    if (!d.webhook_secret) return abandon('the application has no webhook secret to sign with');
    let secret: string;
    try {
      secret = deps.box.open(d.webhook_secret, webhookSecretContext(d.application_id));
    } catch (err) {
      if (!(err instanceof SecretUnreadable)) throw err;
      return abandon("the webhook secret cannot be decrypted with this server's secrets key: generate a new one in Settings");
    }

    const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    const target = await resolveWebhookTarget(d.endpoint, { allowHttpLoopback: deps.allowHttpLoopback });
    if (!target.ok) {
      await recordAttempt(
        deps.db,
        d.id,
        { status: lastAttempt ? 'failed' : 'pending', statusCode: null, error: `refused: ${target.reason}`, excerpt: null },
        now,
      );
      throw new Error(`refused: ${target.reason}`);
    }
    const body = webhookBody(d);
    const signature = signWebhook(secret, body, Math.floor(now.getTime() / 1000));
    const res = await postWebhook(
      target,
      body,
      { 'X-Signature': signature, 'X-Event-Id': d.event_id, 'X-Event-Type': d.event_type },
      { timeoutMs: deps.timeoutMs },
    );
    const ok = res.status !== null && res.status >= 200 && res.status < 300;
    await recordAttempt(
      deps.db,
      d.id,
      {
        status: ok ? 'delivered' : lastAttempt ? 'failed' : 'pending',
        statusCode: res.status,
        error: ok ? null : (res.error ?? `HTTP ${res.status}`),
        excerpt: res.excerpt || null,
      },
      now,
    );
    if (!ok) throw new Error(res.error ?? `HTTP ${res.status}`);
    return { delivered: res.status, ms: res.durationMs };
  };
}
