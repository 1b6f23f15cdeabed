// The list page, /settings/applications: the user's applications and the create form.
import type { Application } from '../../../../db/database.ts';
import type { Config } from '../../../../lib/config.ts';
import { isPrivate } from '../../../services/applications/model.ts';
import { html } from '../../html.ts';
import { formError, page, settingsNav } from '../../layout.ts';
import type { FieldErrors, FormValues } from '../../forms.ts';
import { headerOf, notice, type WebUser } from '../../web-common.ts';
import { applicationFields } from './fields.ts';

export interface ListState {
  values?: FormValues;
  errors?: FieldErrors;
  notice?: string;
}

export function listPage(config: Config, user: WebUser, apps: Application[], s: ListState = {}): string {
  const v = s.values ?? {};
  const e = s.errors ?? {};
  return page(
    { title: 'API applications', user: headerOf(user) },
    html`<h1>API applications</h1>
${settingsNav('/settings/applications')}
${notice(s.notice)}
${
  apps.length
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
    : html`<p id="no-applications">You have no applications yet.</p>`
}
<h2>Create application</h2>
<p>The application starts private: only your account can complete its OAuth flow until description, URL, image and privacy statement are all set. There is no approval step.</p>
<form method="post" action="/settings/applications" class="stack" novalidate>
  ${formError(Object.values(e).some(Boolean) ? 'Please correct the fields marked below.' : undefined)}
  ${applicationFields(config, v, e, { edit: false })}
  <button type="submit">Create application</button>
</form>`,
  );
}
