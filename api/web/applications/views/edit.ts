// The edit page, /settings/applications/:id: the application's facts, its Settings form, then the
// client secrets, webhook and delete sections. Every action on the application answers with it.
import type { Application, ClientSecret } from '../../../../db/database.ts';
import type { Config } from '../../../../lib/config.ts';
import type { DeliveryLogRow } from '../../../../db/events.ts';
import { isClientSideApp, isPrivate, pageUrl } from '../../../services/applications/model.ts';
import { html } from '../../html.ts';
import { formError, page } from '../../layout.ts';
import type { FieldErrors, FormValues } from '../../forms.ts';
import { headerOf, notice, type WebUser } from '../../web-common.ts';
import { applicationFields, valuesOf } from './fields.ts';
import { newSecretOnce, secretsSection, type SecretsState } from './secrets.ts';
import { newWebhookSecretOnce, webhookSection, type WebhooksState } from './webhooks.ts';

/** What an action adds to the page: a notice, a secret shown once, or a form posted back with its errors. */
export interface EditState extends SecretsState, WebhooksState {
  values?: FormValues;
  errors?: FieldErrors;
  notice?: string;
}

/** What the page shows besides the application: loaded by ../edit-page.ts. */
export interface EditData {
  secrets: ClientSecret[];
  deliveries: DeliveryLogRow[];
}

export function editView(config: Config, user: WebUser, app: Application, { secrets, deliveries }: EditData, s: EditState = {}): string {
  const v = s.values ?? valuesOf(app);
  const e = s.errors ?? {};
  const priv = isPrivate(app);
  return page(
    { title: app.name, user: headerOf(user) },
    html`<p><a href="/settings/applications">← API applications</a></p>
<h1>${app.name}</h1>
${notice(s.notice)}
${newSecretOnce(s.newSecret)}
${newWebhookSecretOnce(s.newWebhookSecret)}
<dl>
  <dt>Application id</dt><dd><code id="client-id">${app.id}</code><br><span class="muted">The application id is your OAuth client id.</span></dd>
  <dt>Visibility</dt><dd id="app-status" data-private="${String(priv)}">${
    priv
      ? html`Private: only your account can complete its OAuth flow. Fill in description, URL, image and privacy statement to make it public.`
      : html`Public: anyone can connect it.`
  }</dd>
  <dt>Published</dt><dd id="app-published">${app.published ? html`Published: listed in the <a href="/apps">application directory</a>` : 'Not published'}</dd>
  ${
    isClientSideApp(app, config)
      ? html`<dt>Kind</dt><dd id="client-side-note">This is a client-side application: it uses the standard client-side privacy policy, so it runs entirely in the user’s browser or device and sends their data nowhere but to this service.</dd>`
      : ''
  }
  ${
    app.page_slug
      ? html`<dt>Page</dt><dd><a id="page-link" href="/pages/${app.page_slug}/">${pageUrl(config, app.page_slug)}</a>${app.published ? '' : ' (preview: not published)'}</dd>`
      : ''
  }
</dl>
<h2>Settings</h2>
<form method="post" action="/settings/applications/${app.id}" class="stack" novalidate>
  ${formError(Object.values(e).some(Boolean) ? 'Please correct the fields marked below.' : undefined)}
  ${applicationFields(config, v, e, { edit: true, app })}
  <button type="submit">Save</button>
</form>
${secretsSection(app, secrets, s)}
${webhookSection(config, app, deliveries, s)}
<h2>Delete application</h2>
<p>Deleting removes the application, its secrets, and every user’s authorization of it: their tokens stop working at once.</p>
<form method="post" action="/settings/applications/${app.id}/delete" class="stack">
  <button type="submit" class="danger" id="delete-application">Delete application</button>
</form>`,
  );
}
