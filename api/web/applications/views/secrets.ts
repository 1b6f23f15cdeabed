// The edit page's client secrets: the one-time display of a new secret, the list and the create form.
import type { Application, ClientSecret } from '../../../../db/database.ts';
import { html, type Html } from '../../html.ts';
import { field } from '../../layout.ts';
import type { FieldErrors, FormValues } from '../../forms.ts';
import { when } from '../../web-common.ts';

export interface SecretsState {
  newSecret?: { label: string; secret: string };
  secretValues?: FormValues;
  secretErrors?: FieldErrors;
}

/** A client secret just created, shown this once. */
export function newSecretOnce(created: SecretsState['newSecret']): Html {
  return created
    ? html`<div class="secret-once" role="status">
<p>New client secret “${created.label}”. Copy it now: it is shown only this once and stored only as a hash.</p>
<p><code id="new-secret" class="token">${created.secret}</code></p>
<p>Keep it on your server; never put it in mobile or browser-side code (use PKCE there).</p>
</div>`
    : html``;
}

export function secretsSection(app: Application, secrets: ClientSecret[], s: SecretsState): Html {
  return html`<h2>Client secrets</h2>
<p>A secret is not needed with PKCE. Create one per server that uses it; revoke any at any time.</p>
${
  secrets.length
    ? html`<table class="wide" id="secrets">
<thead><tr><th>Label</th><th>Secret</th><th>Created</th><th>Last used</th><th></th></tr></thead>
<tbody>${secrets.map(
        (sec) => html`<tr data-secret-id="${sec.id}">
<td>${sec.label}</td><td><code>…${sec.hint}</code></td><td>${when(sec.created_at)}</td><td>${when(sec.last_used_at)}</td>
<td><form method="post" action="/settings/applications/${app.id}/secrets/${sec.id}/revoke" class="inline"><button type="submit" class="danger small" id="revoke-secret-${sec.id}">Revoke</button></form></td>
</tr>`,
      )}</tbody>
</table>`
    : html`<p id="no-secrets">No client secrets.</p>`
}
<form method="post" action="/settings/applications/${app.id}/secrets" class="stack" novalidate>
  ${field({ name: 'label', label: 'Label of a new secret', value: s.secretValues?.label, error: s.secretErrors?.label })}
  <button type="submit">Create secret</button>
</form>`;
}
