import { z } from 'zod';
import type { Ctx } from '../context.ts';
import type { Application } from '../../db/database.ts';
import type { Config } from '../../lib/config.ts';
import {
  createApplication,
  createClientSecret,
  deleteApplication,
  deleteClientSecret,
  findOwnedApplication,
  listClientSecrets,
  listOwnedApplications,
  SlugTakenError,
  updateApplication,
  type ApplicationChanges,
  webhookSecretContext,
} from '../../db/applications.ts';
import { newSecret, SECRET_PREFIX } from '../../lib/secrets.ts';
import { abandonDelivery, createTestEvent, deliveryLog, type DeliveryLogRow } from '../../db/events.ts';
import { enqueueDeliveries } from '../../workers/queues.ts';
import { assertSameOrigin } from '../middleware/origin-check.ts';
import { clientSidePrivacyUrl, isClientSideApp, isPrivate, pageUrl, registeredRedirectUris, slugProblem } from '../applications/model.ts';
import { DEFAULT_REDIRECT_URIS, redirectUriProblem } from '../oauth/redirect-uris.ts';
import { LOOPBACK_HOSTS } from '../../lib/ip-address.ts';
import { MAX_URL_LENGTH, webhookUrlProblem } from '../../lib/webhook-url.ts';
import { html, type Html } from './html.ts';
import { field, formError, page, settingsNav } from './layout.ts';
import { fieldErrors, formBody, type FieldErrors, type FormValues } from './forms.ts';
import { checkboxField, displayName, hint, notFound, notice, requireWebUser, sendHtml, textareaField, when, type WebUser } from './web-common.ts';

// Validation -------------------------------------------------------------------------------------

const MAX_REDIRECT_URIS = 20;
const MAX_WEBHOOK_ENDPOINTS = 10;
export const PUBLISH_NEEDS_FIELDS = 'Fill in description, URL, image and privacy statement to publish';

/** Why `value` is not an absolute https URL (or http on a loopback host), or undefined. */
function webUrlProblem(value: string): string | undefined {
  if (value.length > MAX_URL_LENGTH) return `must be at most ${MAX_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL, like https://example.com/';
  }
  if (/\s/.test(value)) return 'must not contain spaces';
  if (url.protocol === 'http:' && !LOOPBACK_HOSTS.has(url.hostname)) return 'must use https (plain http only for localhost and 127.0.0.1)';
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an https URL';
  if (!url.hostname) return 'must name a host';
  if (url.username || url.password) return 'must not contain a user name or password';
  return undefined;
}

/** The non-empty lines of a textarea with their line numbers (1-based, counting blank lines). */
function numberedLines(text: string): { line: number; value: string }[] {
  return text
    .split(/\r\n|\r|\n/)
    .map((value, i) => ({ line: i + 1, value: value.trim() }))
    .filter((l) => l.value !== '');
}

function shorten(s: string, max = 80): string {
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

function linesField(label: string, max: number, problem: (value: string) => string | undefined) {
  return z
    .string()
    .default('')
    .transform(numberedLines)
    .superRefine((lines, ctx) => {
      if (lines.length > max) ctx.addIssue({ code: 'custom', message: `At most ${max} ${label} (one per line).` });
      for (const { line, value } of lines) {
        const p = problem(value);
        if (p) {
          ctx.addIssue({ code: 'custom', message: `Line ${line} ("${shorten(value)}"): ${label.replace(/s$/, '')} ${p}.` });
          return;
        }
      }
    })
    .transform((lines) => [...new Set(lines.map((l) => l.value))]);
}

const optionalText = (label: string, max: number) =>
  z
    .string()
    .default('')
    .transform((v) => v.trim())
    .refine((v) => v.length <= max, `${label} must be at most ${max} characters.`)
    .transform((v) => v || null);

const optionalUrl = (label: string) =>
  z
    .string()
    .default('')
    .transform((v) => v.trim())
    .superRefine((v, ctx) => {
      const p = v ? webUrlProblem(v) : undefined;
      if (p) ctx.addIssue({ code: 'custom', message: `${label} ${p}.` });
    })
    .transform((v) => v || null);

const checkbox = z
  .string()
  .default('')
  .transform((v) => v === 'on' || v === 'true' || v === '1');

function applicationForm(config: Config) {
  return z.object({
    name: z
      .string()
      .default('')
      .transform((v) => v.trim())
      .refine((v) => v.length >= 1, 'Name is required.')
      .refine((v) => v.length <= 100, 'Name must be at most 100 characters.'),
    description: optionalText('Description', 500),
    url: optionalUrl('URL'),
    image: optionalUrl('Image URL'),
    privacy_statement: optionalUrl('Privacy statement URL'),
    redirect_uris: linesField('redirect URIs', MAX_REDIRECT_URIS, redirectUriProblem),
    published: checkbox,
    page_slug: z
      .string()
      .default('')
      .transform((v) => v.trim())
      .superRefine((v, ctx) => {
        const p = v ? slugProblem(v) : undefined;
        if (p) ctx.addIssue({ code: 'custom', message: `The page slug ${p}.` });
      })
      .transform((v) => v || null),
    webhook_endpoints: linesField('webhook endpoints', MAX_WEBHOOK_ENDPOINTS, (v) => webhookUrlProblem(v, { allowHttpLoopback: config.WEBHOOK_ALLOW_HTTP_LOOPBACK })),
    new_webhook_secret: checkbox,
  });
}
type ApplicationInput = z.output<ReturnType<typeof applicationForm>>;

function validateApplication(values: FormValues, config: Config): { input?: ApplicationInput; errors: FieldErrors } {
  const parsed = applicationForm(config).safeParse(values);
  const errors = parsed.success ? {} : fieldErrors(parsed.error);
  // A private application cannot be published: checked on the raw values, so it shows with other errors.
  const wantsPublished = checkbox.parse(values.published);
  const missing = (['description', 'url', 'image', 'privacy_statement'] as const).some((k) => !(values[k] ?? '').trim());
  if (wantsPublished && missing) errors.published ??= PUBLISH_NEEDS_FIELDS;
  const failed = Object.values(errors).some(Boolean);
  return failed || !parsed.success ? { errors } : { input: parsed.data, errors };
}

const SecretForm = z.object({
  label: z
    .string()
    .default('')
    .transform((v) => v.trim())
    .refine((v) => v.length >= 1, 'Label is required.')
    .refine((v) => v.length <= 100, 'Label must be at most 100 characters.'),
});

// Rendering --------------------------------------------------------------------------------------

function valuesOf(app: Application): FormValues {
  return {
    name: app.name,
    description: app.description ?? '',
    url: app.url ?? '',
    image: app.image ?? '',
    privacy_statement: app.privacy_statement ?? '',
    redirect_uris: app.redirect_uris.join('\n'),
    published: app.published ? 'on' : '',
    page_slug: app.page_slug ?? '',
    webhook_endpoints: app.webhook_endpoints.join('\n'),
  };
}

/** The fields shared by the create and edit forms (the edit form adds webhooks). */
function applicationFields(config: Config, v: FormValues, e: FieldErrors, opts: { edit: boolean; app?: Application }): Html {
  const privacyUrl = clientSidePrivacyUrl(config);
  return html`${field({ name: 'name', label: 'Name', value: v.name, error: e.name })}
${textareaField({ name: 'description', label: 'Description (at most 500 characters)', value: v.description, error: e.description, rows: 3 })}
${field({ name: 'url', label: 'URL (the application’s home page)', type: 'url', value: v.url, error: e.url, required: false })}
${field({ name: 'image', label: 'Image URL (shown on the consent screen and in the directory; https)', type: 'url', value: v.image, error: e.image, required: false })}
${field({ name: 'privacy_statement', label: 'Privacy statement URL', type: 'url', value: v.privacy_statement, error: e.privacy_statement, required: false })}
${hint(
  'privacy_statement',
  html`Client-side application (it runs entirely in the user’s browser or device and sends data only to this service)? You may use the standard policy: <code id="client-side-privacy-url">${privacyUrl}</code> (<a href="/privacy/client-side">read it</a>).`,
)}
${textareaField({
  name: 'redirect_uris',
  label: 'Redirect URIs (one per line)',
  value: v.redirect_uris,
  error: e.redirect_uris,
  rows: 4,
  hint: html`https, loopback http (localhost or 127.0.0.1, any port) or a private-use scheme for native apps (<code>com.example.app:/callback</code>). No <code>#fragment</code>. Leave empty to register <code>${DEFAULT_REDIRECT_URIS.join(' and ')}</code>.`,
})}
${field({ name: 'page_slug', label: 'Page slug (optional)', value: v.page_slug, error: e.page_slug, required: false })}
${hint('page_slug', html`Gives the application a public page at <code>${config.BASE_URL}/pages/<var>slug</var>/</code>, added to the redirect URIs. Lowercase letters, digits and hyphens, 3–63 characters.`)}
${opts.edit
  ? html`${textareaField({
      name: 'webhook_endpoints',
      label: 'Webhook endpoints (one https URL per line)',
      value: v.webhook_endpoints,
      error: e.webhook_endpoints,
      rows: 3,
      hint: config.WEBHOOK_ALLOW_HTTP_LOOPBACK
        ? 'https URLs; plain http is accepted for localhost and 127.0.0.1 on this server (development).'
        : 'https URLs on public hosts. Each delivery is signed with the webhook secret (X-Signature header).',
    })}
${checkboxField({
  name: 'new_webhook_secret',
  label: 'Generate a new webhook secret',
  checked: false,
  hint: opts.app?.webhook_secret
    ? 'A webhook secret is set. A new one replaces it at once; it is shown once, after saving.'
    : 'No webhook secret yet. It is shown once, after saving.',
})}`
  : ''}
${checkboxField({
  name: 'published',
  label: 'Published (listed in the application directory)',
  checked: v.published === 'on' || v.published === 'true',
  error: e.published,
  hint: 'Only a public application can be published: fill in description, URL, image and privacy statement.',
})}`;
}

function listPage(config: Config, user: WebUser, apps: Application[], s: { values?: FormValues; errors?: FieldErrors; notice?: string } = {}) {
  const v = s.values ?? {};
  const e = s.errors ?? {};
  return page(
    { title: 'API applications', user: { name: displayName(user) } },
    html`<h1>API applications</h1>
${settingsNav('/settings/applications')}
${notice(s.notice)}
${apps.length
  ? html`<table class="wide" id="applications">
<thead><tr><th>Name</th><th>Client id</th><th>Visibility</th><th>Published</th></tr></thead>
<tbody>${apps.map(
      (a) => html`<tr data-application-id="${a.id}">
<td><a href="/settings/applications/${a.id}">${a.name}</a></td>
<td><code>${a.id}</code></td>
<td>${isPrivate(a) ? 'Private' : 'Public'}</td>
<td>${a.published ? 'Published' : 'Not published'}</td>
</tr>`,
    )}</tbody>
</table>`
  : html`<p id="no-applications">You have no applications yet.</p>`}
<h2>Create application</h2>
<p>The application starts private: only your account can complete its OAuth flow until description, URL, image and privacy statement are all set. There is no approval step.</p>
<form method="post" action="/settings/applications" class="stack" novalidate>
  ${formError(Object.values(e).some(Boolean) ? 'Please correct the fields marked below.' : undefined)}
  ${applicationFields(config, v, e, { edit: false })}
  <button type="submit">Create application</button>
</form>`,
  );
}

/** How many deliveries the Settings delivery log shows. */
const DELIVERY_LOG_LIMIT = 50;
/** The bytes of a response a delivery keeps (lib/webhook-post.ts's default). */
const EXCERPT_BYTES = 512;
export const NO_ENDPOINTS = 'Add a webhook endpoint first (Settings, above), then send a test event.';
export const NO_WEBHOOK_SECRET = 'Generate a webhook secret first (Settings, above: “Generate a new webhook secret”), then send a test event.';

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

function webhookSection(config: Config, app: Application, deliveries: DeliveryLogRow[], s: EditState): Html {
  return html`<h2 id="webhook-deliveries">Webhook deliveries</h2>
<p>Deliveries are signed with the current webhook secret (<code>X-Signature: t=…,v1=…</code>, the hex HMAC-SHA256 of <code>t.body</code> with the secret) and retried with exponential backoff until the wait would exceed ${duration(config.WEBHOOK_RETRY_MAX_DELAY_MS)}. Each attempt has a ${duration(config.WEBHOOK_TIMEOUT_MS)} limit, and only the first ${EXCERPT_BYTES} bytes of a response are kept. The latest ${DELIVERY_LOG_LIMIT} deliveries are listed, newest first.</p>
${deliveries.length
  ? html`<table class="wide" id="deliveries">
<thead><tr><th>Time</th><th>Event</th><th>Resource</th><th>Endpoint</th><th>Status</th><th>HTTP status</th><th>Attempts</th><th>Response</th></tr></thead>
<tbody>${deliveries.map(
      (d) => html`<tr data-delivery-id="${d.id}" data-status="${d.status}" data-attempts="${d.attempts}" data-status-code="${d.last_status_code ?? ''}">
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
  : html`<p id="no-deliveries">No deliveries yet. Events are sent to your endpoints when a user who authorized this application changes their data.</p>`}
<form method="post" action="/settings/applications/${app.id}/webhooks/test#webhook-deliveries" class="stack">
  <p class="hint">A test event (<code>event_type</code> <code>test</code>, <code>resource_id</code> this application’s id, <code>user_id</code> yours) goes to every endpoint of this application and appears in the log above.</p>
  ${s.webhookError ? html`<p class="error" role="alert" id="webhook-test-error">${s.webhookError}</p>` : ''}
  ${s.webhookNotice ? html`<p class="notice" role="status" id="webhook-test-notice">${s.webhookNotice}</p>` : ''}
  <button type="submit" id="send-test-event">Send test event</button>
</form>`;
}

interface EditState {
  webhookNotice?: string | undefined;
  webhookError?: string;
  values?: FormValues;
  errors?: FieldErrors;
  notice?: string;
  newSecret?: { label: string; secret: string };
  newWebhookSecret?: string;
  secretValues?: FormValues;
  secretErrors?: FieldErrors;
}

async function editPage(ctx: Ctx, user: WebUser, app: Application, s: EditState = {}) {
  const { config, db } = ctx.deps;
  const v = s.values ?? valuesOf(app);
  const e = s.errors ?? {};
  const [secrets, deliveries] = await Promise.all([listClientSecrets(db, app.id), deliveryLog(db, app.id, DELIVERY_LOG_LIMIT)]);
  const priv = isPrivate(app);
  return page(
    { title: app.name, user: { name: displayName(user) } },
    html`<p><a href="/settings/applications">← API applications</a></p>
<h1>${app.name}</h1>
${notice(s.notice)}
${s.newSecret
  ? html`<div class="secret-once" role="status">
<p>New client secret “${s.newSecret.label}”. Copy it now: it is shown only this once and stored only as a hash.</p>
<p><code id="new-secret" class="token">${s.newSecret.secret}</code></p>
<p>Keep it on your server; never put it in mobile or browser-side code (use PKCE there).</p>
</div>`
  : ''}
${s.newWebhookSecret
  ? html`<div class="secret-once" role="status">
<p>New webhook secret. Copy it now: it is shown only this once. Deliveries are signed with it (<code>X-Signature: t=…,v1=HMAC-SHA256(secret, "t.body")</code>).</p>
<p><code id="new-webhook-secret" class="token">${s.newWebhookSecret}</code></p>
</div>`
  : ''}
<dl>
  <dt>Application id</dt><dd><code id="client-id">${app.id}</code><br><span class="muted">The application id is your OAuth client id.</span></dd>
  <dt>Visibility</dt><dd id="app-status" data-private="${String(priv)}">${
    priv
      ? html`Private: only your account can complete its OAuth flow. Fill in description, URL, image and privacy statement to make it public.`
      : html`Public: anyone can connect it.`
  }</dd>
  <dt>Published</dt><dd id="app-published">${app.published ? html`Published: listed in the <a href="/apps">application directory</a>` : 'Not published'}</dd>
  ${isClientSideApp(app, config)
    ? html`<dt>Kind</dt><dd id="client-side-note">This is a client-side application: it uses the standard client-side privacy policy, so it runs entirely in the user’s browser or device and sends their data nowhere but to this service.</dd>`
    : ''}
  ${app.page_slug
    ? html`<dt>Page</dt><dd><a id="page-link" href="/pages/${app.page_slug}/">${pageUrl(config, app.page_slug)}</a>${app.published ? '' : ' (preview: not published)'}</dd>`
    : ''}
</dl>
<h2>Settings</h2>
<form method="post" action="/settings/applications/${app.id}" class="stack" novalidate>
  ${formError(Object.values(e).some(Boolean) ? 'Please correct the fields marked below.' : undefined)}
  ${applicationFields(config, v, e, { edit: true, app })}
  <button type="submit">Save</button>
</form>
<h2>Client secrets</h2>
<p>A secret is not needed with PKCE. Create one per server that uses it; revoke any at any time.</p>
${secrets.length
  ? html`<table class="wide" id="secrets">
<thead><tr><th>Label</th><th>Secret</th><th>Created</th><th>Last used</th><th></th></tr></thead>
<tbody>${secrets.map(
      (sec) => html`<tr data-secret-id="${sec.id}">
<td>${sec.label}</td><td><code>…${sec.hint}</code></td><td>${when(sec.created_at)}</td><td>${when(sec.last_used_at)}</td>
<td><form method="post" action="/settings/applications/${app.id}/secrets/${sec.id}/revoke" class="inline"><button type="submit" class="danger small" id="revoke-secret-${sec.id}">Revoke</button></form></td>
</tr>`,
    )}</tbody>
</table>`
  : html`<p id="no-secrets">No client secrets.</p>`}
<form method="post" action="/settings/applications/${app.id}/secrets" class="stack" novalidate>
  ${field({ name: 'label', label: 'Label of a new secret', value: s.secretValues?.label, error: s.secretErrors?.label })}
  <button type="submit">Create secret</button>
</form>
${webhookSection(config, app, deliveries, s)}
<h2>Delete application</h2>
<p>Deleting removes the application, its secrets, and every user’s authorization of it: their tokens stop working at once.</p>
<form method="post" action="/settings/applications/${app.id}/delete" class="stack">
  <button type="submit" class="danger" id="delete-application">Delete application</button>
</form>`,
  );
}

// Handlers ---------------------------------------------------------------------------------------

const LIST_NOTICES: Record<string, string> = { deleted: 'The application was deleted.' };
const EDIT_NOTICES: Record<string, string> = {
  created: 'Application created.',
  saved: 'Saved.',
  secret_revoked: 'The secret was revoked.',
};

function queryNotice(ctx: Ctx, notices: Record<string, string>): string | undefined {
  const key = Object.keys(notices).find((k) => ctx.query[k] !== undefined);
  return key ? notices[key] : undefined;
}

export async function showApplications(ctx: Ctx) {
  const user = await requireWebUser(ctx);
  if (!user) return;
  const apps = await listOwnedApplications(ctx.deps.db, user.id);
  sendHtml(ctx, 200, listPage(ctx.deps.config, user, apps, { notice: queryNotice(ctx, LIST_NOTICES) }));
}

export async function createApplicationFromForm(ctx: Ctx) {
  assertSameOrigin(ctx);
  const user = await requireWebUser(ctx, '/settings/applications');
  if (!user) return;
  const { db, config } = ctx.deps;
  const values = formBody(ctx);
  const { input, errors } = validateApplication(values, config);
  if (input) {
    try {
      const app = await db.transaction().execute(async (tx) => {
        const created = await createApplication(tx, {
          owner_id: user.id,
          name: input.name,
          description: input.description,
          url: input.url,
          image: input.image,
          privacy_statement: input.privacy_statement,
          redirect_uris: registeredRedirectUris(config, input.redirect_uris, input.page_slug),
          page_slug: input.page_slug,
        });
        return input.published ? updateApplication(tx, created.id, { published: true }) : created;
      });
      ctx.status = 303;
      ctx.redirect(`/settings/applications/${app.id}?created=1`);
      return;
    } catch (err) {
      if (!(err instanceof SlugTakenError)) throw err;
      errors.page_slug = 'This page slug belongs to another application.';
    }
  }
  const apps = await listOwnedApplications(db, user.id);
  sendHtml(ctx, 422, listPage(config, user, apps, { values, errors }));
}

/** The signed-in user and their application named in the path; undefined after answering (sign-in or 404). */
async function ownedApplication(ctx: Ctx, opts: { post: boolean }): Promise<{ user: WebUser; app: Application } | undefined> {
  if (opts.post) assertSameOrigin(ctx);
  const id = ctx.params.id ?? '';
  const user = await requireWebUser(ctx, opts.post ? `/settings/applications/${encodeURIComponent(id)}` : ctx.path);
  if (!user) return undefined;
  const app = await findOwnedApplication(ctx.deps.db, id, user.id);
  if (!app) {
    notFound(ctx, 'Application not found.');
    return undefined;
  }
  return { user, app };
}

/** `?test_sent=N`, set by sendTestEvent's redirect. */
function testSentNotice(ctx: Ctx): string | undefined {
  const n = ctx.query.test_sent;
  if (typeof n !== 'string' || !/^\d{1,3}$/.test(n)) return undefined;
  return `Test event queued to ${Number(n)} endpoint${Number(n) === 1 ? '' : 's'}.`;
}

export async function showApplication(ctx: Ctx) {
  const found = await ownedApplication(ctx, { post: false });
  if (!found) return;
  sendHtml(ctx, 200, await editPage(ctx, found.user, found.app, { notice: queryNotice(ctx, EDIT_NOTICES), webhookNotice: testSentNotice(ctx) }));
}

export async function saveApplication(ctx: Ctx) {
  const found = await ownedApplication(ctx, { post: true });
  if (!found) return;
  const { user, app } = found;
  const { db, config } = ctx.deps;
  const values = formBody(ctx);
  const { input, errors } = validateApplication(values, config);
  if (input) {
    // The old page URL goes with the old slug; the new one is added.
    const oldPage = app.page_slug && app.page_slug !== input.page_slug ? pageUrl(config, app.page_slug) : undefined;
    const given = input.redirect_uris.filter((u) => u !== oldPage);
    const webhookSecret = input.new_webhook_secret ? newSecret(SECRET_PREFIX.webhookSecret) : undefined;
    const changes: ApplicationChanges = {
      name: input.name,
      description: input.description,
      url: input.url,
      image: input.image,
      privacy_statement: input.privacy_statement,
      redirect_uris: registeredRedirectUris(config, given, input.page_slug),
      published: input.published,
      page_slug: input.page_slug,
      webhook_endpoints: input.webhook_endpoints,
      ...(webhookSecret ? { webhook_secret: ctx.deps.box.seal(webhookSecret, webhookSecretContext(app.id)) } : {}),
    };
    try {
      const updated = await updateApplication(db, app.id, changes);
      if (webhookSecret) {
        // Shown once, on this page: never put in a URL or shown again.
        ctx.set('Cache-Control', 'no-store');
        sendHtml(ctx, 200, await editPage(ctx, user, updated, { notice: 'Saved.', newWebhookSecret: webhookSecret }));
        return;
      }
      ctx.status = 303;
      ctx.redirect(`/settings/applications/${app.id}?saved=1`);
      return;
    } catch (err) {
      if (!(err instanceof SlugTakenError)) throw err;
      errors.page_slug = 'This page slug belongs to another application.';
    }
  }
  sendHtml(ctx, 422, await editPage(ctx, user, app, { values, errors }));
}

export async function createSecret(ctx: Ctx) {
  const found = await ownedApplication(ctx, { post: true });
  if (!found) return;
  const { user, app } = found;
  const values = formBody(ctx);
  const parsed = SecretForm.safeParse(values);
  if (!parsed.success) {
    sendHtml(ctx, 422, await editPage(ctx, user, app, { secretValues: values, secretErrors: fieldErrors(parsed.error) }));
    return;
  }
  const { secret } = await createClientSecret(ctx.deps.db, app.id, parsed.data.label);
  // Rendered here rather than after a redirect, so the secret never appears in a URL or a later page.
  ctx.set('Cache-Control', 'no-store');
  sendHtml(ctx, 201, await editPage(ctx, user, app, { newSecret: { label: parsed.data.label, secret } }));
}

export async function revokeSecret(ctx: Ctx) {
  const found = await ownedApplication(ctx, { post: true });
  if (!found) return;
  if (!(await deleteClientSecret(ctx.deps.db, found.app.id, ctx.params.secretId ?? ''))) return notFound(ctx, 'Secret not found.');
  ctx.status = 303;
  ctx.redirect(`/settings/applications/${found.app.id}?secret_revoked=1`);
}

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

export async function deleteApplicationFromForm(ctx: Ctx) {
  const found = await ownedApplication(ctx, { post: true });
  if (!found) return;
  // FK cascades remove its secrets, consents, grants and codes.
  await deleteApplication(ctx.deps.db, found.app.id);
  ctx.status = 303;
  ctx.redirect('/settings/applications?deleted=1');
}
