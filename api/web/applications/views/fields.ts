// The inputs of the application form, shared by the create form (list page) and the edit page.
import type { Application } from '../../../../db/database.ts';
import type { Config } from '../../../../lib/config.ts';
import { clientSidePrivacyUrl } from '../../../services/applications/model.ts';
import { DEFAULT_REDIRECT_URIS } from '../../../services/oauth/redirect-uris.ts';
import { html, type Html } from '../../html.ts';
import { field } from '../../layout.ts';
import type { FieldErrors, FormValues } from '../../forms.ts';
import { checkboxField, hint, textareaField } from '../../web-common.ts';

/** An application as the values of its edit form. */
export function valuesOf(app: Application): FormValues {
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
export function applicationFields(config: Config, v: FormValues, e: FieldErrors, opts: { edit: boolean; app?: Application }): Html {
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
${
  opts.edit
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
    : ''
}
${checkboxField({
  name: 'published',
  label: 'Published (listed in the application directory)',
  checked: v.published === 'on' || v.published === 'true',
  error: e.published,
  hint: 'Only a public application can be published: fill in description, URL, image and privacy statement.',
})}`;
}
