// The edit page's webhooks: the one-time display of a new webhook secret, the delivery log and
// the "Send test event" form. (The endpoints and the secret are set in the Settings form: fields.ts.)
import type { Application } from '../../../../db/database.ts';
import type { Config } from '../../../../lib/config.ts';
import type { DeliveryLogRow } from '../../../../db/events.ts';
import { html, type Html } from '../../html.ts';
import { shorten, when } from '../../web-common.ts';

/** How many deliveries the Settings delivery log shows. */
export const DELIVERY_LOG_LIMIT = 50;
/** The bytes of a response a delivery keeps (lib/webhook-post.ts's default). */
const EXCERPT_BYTES = 512;

export interface WebhooksState {
  /** The outcome of "Send test event": a notice after it, or why it could not be sent. */
  webhookNotice?: string | undefined;
  webhookError?: string;
  newWebhookSecret?: string;
}

/** A webhook secret just generated, shown this once. */
export function newWebhookSecretOnce(secret: string | undefined): Html {
  return secret
    ? html`<div class="secret-once" role="status">
<p>New webhook secret. Copy it now: it is shown only this once. Deliveries are signed with it (<code>X-Signature: t=…,v1=HMAC-SHA256(secret, "t.body")</code>).</p>
<p><code id="new-webhook-secret" class="token">${secret}</code></p>
</div>`
    : html``;
}

/** `24 hours`, `5 s`, `200 ms`: a configured duration in words. */
function duration(ms: number): string {
  const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`;
  if (ms >= 3_600_000 && ms % 3_600_000 === 0) return plural(ms / 3_600_000, 'hour');
  if (ms >= 60_000 && ms % 60_000 === 0) return plural(ms / 60_000, 'minute');
  if (ms >= 1_000 && ms % 1_000 === 0) return `${ms / 1_000} s`;
  return `${ms} ms`;
}

/** The outcome of a delivery's latest attempt: the HTTP status, and the error when there is more to say. */
function outcome(d: DeliveryLogRow): Html {
  const code = d.last_status_code;
  // The worker records `HTTP 500` as the error of a plain non-2xx answer: the code says it already.
  const error = d.last_error && d.last_error !== `HTTP ${code}` ? d.last_error : null;
  if (code === null && !error) return html`<span class="muted">—</span>`;
  return html`${code !== null ? html`<code class="status-code">${code}</code>` : ''}${code !== null && error ? html`<br>` : ''}${error ? html`<span class="error delivery-error">${error}</span>` : ''}`;
}

function excerptCell(excerpt: string | null): Html {
  if (!excerpt) return html`<span class="muted">—</span>`;
  const firstLine = excerpt.trim().split(/\r\n|\r|\n/)[0] ?? '';
  return html`<details class="excerpt"><summary>${shorten(firstLine, 40) || '(blank)'}</summary><code>${excerpt}</code></details>`;
}

/** The delivery log (the latest DELIVERY_LOG_LIMIT deliveries, newest first) and the "Send test event" form. */
export function webhookSection(config: Config, app: Application, deliveries: DeliveryLogRow[], s: WebhooksState): Html {
  return html`<h2 id="webhook-deliveries">Webhook deliveries</h2>
<p>Deliveries are signed with the current webhook secret (<code>X-Signature: t=…,v1=…</code>, the hex HMAC-SHA256 of <code>t.body</code> with the secret) and retried with exponential backoff until the wait would exceed ${duration(config.WEBHOOK_RETRY_MAX_DELAY_MS)}. Each attempt has a ${duration(config.WEBHOOK_TIMEOUT_MS)} limit, and only the first ${EXCERPT_BYTES} bytes of a response are kept. The latest ${DELIVERY_LOG_LIMIT} deliveries are listed, newest first.</p>
${
  deliveries.length
    ? html`<table class="wide" id="deliveries">
<thead><tr><th>Time</th><th>Event</th><th>Resource</th><th>Endpoint</th><th>Status</th><th>HTTP status</th><th>Attempts</th><th>Response</th></tr></thead>
<tbody>${deliveries.map(
        (
          d,
        ) => html`<tr data-delivery-id="${d.id}" data-status="${d.status}" data-attempts="${d.attempts}" data-status-code="${d.last_status_code ?? ''}">
<td>${when(d.created_at)}</td>
<td><code>${d.event_type}</code></td>
<td><code>${d.resource_id}</code></td>
<td><code>${d.endpoint}</code></td>
<td class="delivery-status">${d.status}</td>
<td>${outcome(d)}</td>
<td class="delivery-attempts">${d.attempts}</td>
<td>${excerptCell(d.response_excerpt)}</td>
</tr>`,
      )}</tbody>
</table>`
    : html`<p id="no-deliveries">No deliveries yet. Events are sent to your endpoints when a user who authorized this application changes their data.</p>`
}
<form method="post" action="/settings/applications/${app.id}/webhooks/test#webhook-deliveries" class="stack">
  <p class="hint">A test event (<code>event_type</code> <code>test</code>, <code>resource_id</code> this application’s id, <code>user_id</code> yours) goes to every endpoint of this application and appears in the log above.</p>
  ${s.webhookError ? html`<p class="error" role="alert" id="webhook-test-error">${s.webhookError}</p>` : ''}
  ${s.webhookNotice ? html`<p class="notice" role="status" id="webhook-test-notice">${s.webhookNotice}</p>` : ''}
  <button type="submit" id="send-test-event">Send test event</button>
</form>`;
}
