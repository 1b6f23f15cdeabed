import { z } from 'zod';
import type { Ctx } from '../http/context.ts';
import { assertSameOrigin } from '../http/origin-check.ts';
import { html } from './html.ts';
import { field, formError, page, settingsNav } from './layout.ts';
import { fieldErrors, formBody, storable, type FieldErrors, type FormValues } from './forms.ts';
import { headerOf, notFound, notice, queryNotice, requireWebUser, sendHtml, when, type WebUser } from './web-common.ts';
import { displayName } from '../services/coaching/model.ts';
import { removeUserData } from '../services/coaching/remove-user.ts';
import { createManagedUser, managedUsers, updateManagedUser } from '../../db/managed-users.ts';

/**
 * Settings → Managed users (docs/coaching.md): the accounts without a login you manage (a child, a
 * lab subject, a historical athlete): making, renaming and deleting them with all their data.
 */

const PAGE = '/settings/managed-users';
const Name = z.object({
  first_name: z.string().trim().min(1, 'Enter a first name.').max(100, 'At most 100 characters.'),
  last_name: z.string().trim().max(100, 'At most 100 characters.'),
});

async function managedPage(ctx: Ctx, user: WebUser, s: { notice?: string; values?: FormValues; errors?: FieldErrors } = {}) {
  const users = await managedUsers(ctx.deps.db, user.id);
  const e = s.errors ?? {};
  return page(
    { title: 'Managed users', user: headerOf(user) },
    html`<h1>Managed users</h1>
${settingsNav(PAGE)}
${notice(s.notice)}
<p>Accounts without a login that you manage: nobody signs in as them; you and your applications act for them
(<code>POST /api/v1/oauth/delegated-token</code> with their id). Deleting one removes all their data.</p>
${
  users.length
    ? html`<ul class="connections" id="managed-users">${users.map(
        (u) => html`<li data-user-id="${u.id}"><div>
<h2>${displayName(u)}</h2>
<p class="muted">Made ${when(u.created_at)}. Id <code>${u.id}</code></p>
<form method="post" action="${PAGE}/${u.id}" class="inline">
<label for="first-${u.id}">First name</label> <input id="first-${u.id}" name="first_name" value="${u.first_name}" required>
<label for="last-${u.id}">Last name</label> <input id="last-${u.id}" name="last_name" value="${u.last_name}">
<button type="submit" class="small">Rename</button></form>
<form method="post" action="/act-as" class="inline"><input type="hidden" name="user_id" value="${u.id}"><button type="submit" class="small" id="act-as-${u.id}">Act as</button></form>
<form method="post" action="${PAGE}/${u.id}/delete" class="inline"><button type="submit" class="danger small" id="delete-${u.id}">Delete with all their data</button></form>
</div></li>`,
      )}</ul>`
    : html`<p id="no-managed-users">You manage no user.</p>`
}
<h2>Add a managed user</h2>
<form method="post" action="${PAGE}" class="stack" novalidate id="create-managed-user">
${formError(Object.values(e).some(Boolean) ? 'Please correct the fields marked below.' : undefined)}
${field({ name: 'first_name', label: 'First name', value: s.values?.first_name, error: e.first_name })}
${field({ name: 'last_name', label: 'Last name (optional)', value: s.values?.last_name, error: e.last_name, required: false })}
<button type="submit">Add</button>
</form>`,
  );
}

export async function showManagedUsers(ctx: Ctx) {
  const user = await requireWebUser(ctx);
  if (!user) return;
  const message = queryNotice(ctx, { added: 'Managed user added.', renamed: 'Renamed.', deleted: 'Deleted, with all their data.' });
  sendHtml(ctx, 200, await managedPage(ctx, user, message ? { notice: message } : {}));
}

export async function createManagedUserFromForm(ctx: Ctx) {
  assertSameOrigin(ctx);
  const user = await requireWebUser(ctx, PAGE);
  if (!user) return;
  const values = { first_name: '', last_name: '', ...formBody(ctx) };
  const parsed = storable(Name).safeParse(values);
  if (!parsed.success) return sendHtml(ctx, 422, await managedPage(ctx, user, { values, errors: fieldErrors(parsed.error) }));
  await createManagedUser(ctx.deps.db, user.id, parsed.data);
  ctx.status = 303;
  ctx.redirect(`${PAGE}?added=1`);
}

export async function renameManagedUserFromForm(ctx: Ctx) {
  assertSameOrigin(ctx);
  const user = await requireWebUser(ctx, PAGE);
  if (!user) return;
  const values = { first_name: '', last_name: '', ...formBody(ctx) };
  const parsed = storable(Name).safeParse(values);
  if (!parsed.success) return sendHtml(ctx, 422, await managedPage(ctx, user, { errors: fieldErrors(parsed.error) }));
  if (!(await updateManagedUser(ctx.deps.db, user.id, ctx.params.id ?? '', parsed.data)))
    return notFound(ctx, 'Not one of your managed users.', user);
  ctx.status = 303;
  ctx.redirect(`${PAGE}?renamed=1`);
}

export async function deleteManagedUserFromForm(ctx: Ctx) {
  assertSameOrigin(ctx);
  const user = await requireWebUser(ctx, PAGE);
  if (!user) return;
  if (!(await removeUserData(ctx.deps, user.id, ctx.params.id ?? ''))) return notFound(ctx, 'Not one of your managed users.', user);
  ctx.status = 303;
  ctx.redirect(`${PAGE}?deleted=1`);
}
