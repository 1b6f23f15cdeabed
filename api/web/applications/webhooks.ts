// POST /settings/applications/:id/webhooks/test: "Send test event". (Webhook endpoints and a new
// webhook secret are saved with the Settings form, edit.ts; the delivery log is views/webhooks.ts.)
import type { Ctx } from '../../http/context.ts';
import { abandonDelivery, createTestEvent } from '../../../db/events.ts';
import { enqueueDeliveries } from '../../../workers/queues.ts';
import { sendHtml } from '../web-common.ts';
import { ownedApplication } from './owned.ts';
import { editPage } from './edit-page.ts';

export const NO_ENDPOINTS = 'Add a webhook endpoint first (Settings, above), then send a test event.';
export const NO_WEBHOOK_SECRET =
  'Generate a webhook secret first (Settings, above: “Generate a new webhook secret”), then send a test event.';

/**
 * "Send test event": one test event to each of the application's endpoints, delivered by the
 * webhooks worker like any other (signed, retried, logged).
 */
export async function sendTestEvent(ctx: Ctx) {
  const found = await ownedApplication(ctx, { post: true });
  if (!found) return;
  const { user, app } = found;
  const { db, queues, config, now } = ctx.deps;
  const problem = !app.webhook_endpoints.length ? NO_ENDPOINTS : !app.webhook_secret ? NO_WEBHOOK_SECRET : undefined;
  if (problem) {
    sendHtml(ctx, 409, await editPage(ctx, user, app, { webhookError: problem }));
    return;
  }
  const ids = await createTestEvent(db, app, now());
  try {
    await enqueueDeliveries(queues, ids, { baseMs: config.WEBHOOK_RETRY_BASE_MS, maxDelayMs: config.WEBHOOK_RETRY_MAX_DELAY_MS });
  } catch (err) {
    // Nothing would ever attempt them (a test event is never relayed): close them in the log.
    await Promise.all(ids.map((id) => abandonDelivery(db, id, 'could not be queued (the job queue is unavailable)', now())));
    throw err;
  }
  ctx.status = 303;
  ctx.redirect(`/settings/applications/${app.id}?test_sent=${ids.length}#webhook-deliveries`);
}

/** `?test_sent=N`, set by sendTestEvent's redirect: the notice the edit page shows by the test form. */
export function testSentNotice(ctx: Ctx): string | undefined {
  const n = ctx.query.test_sent;
  if (typeof n !== 'string' || !/^\d{1,3}$/.test(n)) return undefined;
  return `Test event queued to ${Number(n)} endpoint${Number(n) === 1 ? '' : 's'}.`;
}
