import type { Ctx } from '../http/context.ts';
import { findApplication } from '../../db/applications.ts';
import { deleteConsent, listConnectedApplications, type ConnectedApplication } from '../../db/grants.ts';
import { SCOPE_DESCRIPTIONS, type Scope } from '../services/auth/scopes.ts';
import { assertSameOrigin } from '../http/origin-check.ts';
import { html } from './html.ts';
import { page, settingsNav } from './layout.ts';
import { APP_ICON_SCRIPT, appIcon } from './app-icon.ts';
import { headerOf, notFound, notice, requireWebUser, sendHtml, when, type WebUser } from './web-common.ts';

function describe(scope: string): string {
  return SCOPE_DESCRIPTIONS[scope as Scope] ?? scope;
}

function connectionsPage(user: WebUser, apps: ConnectedApplication[], message?: string) {
  return page(
    { title: 'Connected applications', user: headerOf(user), scripts: [APP_ICON_SCRIPT] },
    html`<h1>Connected applications</h1>
${settingsNav('/settings/connections')}
${notice(message)}
<p>Applications you have allowed to act for you. Revoking access stops their tokens at once; they would have to ask you again.</p>
${
  apps.length
    ? html`<ul class="connections" id="connections">${apps.map(
        (a) => html`<li data-application-id="${a.application_id}">
${appIcon(a, 48)}
<div>
<h2 class="app-name">${a.name}</h2>
<p class="muted">First authorized ${when(a.created_at)}${a.updated_at.getTime() !== a.created_at.getTime() ? html`, last ${when(a.updated_at)}` : ''}</p>
<ul class="scopes">${a.scopes.map((s) => html`<li><code>${s}</code>: ${describe(s)}</li>`)}</ul>
<form method="post" action="/settings/connections/${a.application_id}/revoke" class="inline">
<button type="submit" class="danger" id="revoke-${a.application_id}">Revoke access</button>
</form>
</div>
</li>`,
      )}</ul>`
    : html`<p id="no-connections">You have not connected any application.</p>`
}`,
  );
}

export async function showConnections(ctx: Ctx) {
  const user = await requireWebUser(ctx);
  if (!user) return;
  const { db } = ctx.deps;
  let message: string | undefined;
  // The notice names the application by id (looked up), so no arbitrary text is reflected from the URL.
  if (typeof ctx.query.revoked === 'string') {
    const app = await findApplication(db, ctx.query.revoked);
    message = app ? `Access revoked for ${app.name}` : 'Access revoked';
  }
  sendHtml(ctx, 200, connectionsPage(user, await listConnectedApplications(db, user.id), message));
}

export async function revokeConnection(ctx: Ctx) {
  assertSameOrigin(ctx);
  const user = await requireWebUser(ctx, '/settings/connections');
  if (!user) return;
  const applicationId = ctx.params.id ?? '';
  // Deletes the consent and every grant of the pair: refresh and access tokens stop working at once.
  const { found, grantIds } = await deleteConsent(ctx.deps.db, user.id, applicationId);
  if (!found && !grantIds.length) return notFound(ctx, 'This application is not connected to your account.', user);
  ctx.status = 303;
  ctx.redirect(`/settings/connections?revoked=${encodeURIComponent(applicationId)}`);
}
