import { z } from 'zod';
import type { Ctx } from '../http/context.ts';
import type { User } from '../../db/database.ts';
import { html } from './html.ts';
import { field, formError, page, settingsNav } from './layout.ts';
import { updateUserName, updateUserPassword, updateUserUnits } from '../../db/users.ts';
import { UNIT_SYSTEMS, type Units } from './static/units.js';
import { deleteOtherSessions } from '../../db/sessions.ts';
import { hashPassword, passwordProblem, verifyPassword } from '../services/auth/passwords.ts';
import { headerOf, requireWebUser } from './web-common.ts';
import { assertSameOrigin } from '../http/origin-check.ts';
import { SignUpForm } from './accounts.ts';
import { fieldErrors, formBody, storable, type FieldErrors } from './forms.ts';

const NameForm = SignUpForm.pick({ first_name: true, last_name: true });
const PasswordForm = z.object({ current_password: z.string(), new_password: z.string() });

type Errors = FieldErrors;
interface SettingsState {
  notice?: string;
  nameErrors?: Errors;
  passwordErrors?: Errors;
  unitsError?: string;
  nameValues?: { first_name?: string; last_name?: string };
}

function settingsPage(user: User, s: SettingsState = {}) {
  const name = s.nameValues ?? user;
  return page(
    { title: 'Settings', user: headerOf(user) },
    html`<h1>Settings</h1>
${settingsNav('/settings')}
${s.notice ? html`<p class="notice" role="status">${s.notice}</p>` : ''}
<h2>Account</h2>
<dl>
  <dt>Email</dt><dd id="account-email">${user.email}</dd>
  <dt>Name</dt><dd id="account-name">${user.first_name} ${user.last_name}</dd>
  <dt>Member since</dt><dd>${user.created_at.toISOString().slice(0, 10)}</dd>
</dl>
<form method="post" action="/settings/profile" class="stack" novalidate>
  ${field({ name: 'first_name', label: 'First name', value: name.first_name, autocomplete: 'given-name', error: s.nameErrors?.first_name })}
  ${field({ name: 'last_name', label: 'Last name', value: name.last_name, autocomplete: 'family-name', error: s.nameErrors?.last_name })}
  <button type="submit">Save name</button>
</form>
<h2>Units</h2>
<form method="post" action="/settings/units" class="stack" novalidate>
  ${formError(s.unitsError)}
  <fieldset id="units-choice"><legend>Distances and speeds</legend>
    ${UNIT_CHOICES.map(
      ([value, label]) =>
        html`<div class="check"><input type="radio" id="units-${value}" name="units" value="${value}"${user.units === value ? html` checked` : ''}><label for="units-${value}">${label}</label></div>`,
    )}
  </fieldset>
  <p class="hint" id="units-hint">As Strava shows them: pace for running, walking and hiking, pace per 100 for swimming, speed for the other sports. The API stays in metres and m/s.</p>
  <button type="submit">Save units</button>
</form>
<h2>Password</h2>
<form method="post" action="/settings/password" class="stack" novalidate>
  ${formError(s.passwordErrors?.form)}
  ${field({ name: 'current_password', label: 'Current password', type: 'password', autocomplete: 'current-password', error: s.passwordErrors?.current_password })}
  ${field({ name: 'new_password', label: 'New password', type: 'password', autocomplete: 'new-password', error: s.passwordErrors?.new_password })}
  <button type="submit">Change password</button>
</form>
<p>Changing your password signs you out everywhere else.</p>`,
  );
}

export async function showSettings(ctx: Ctx) {
  const user = await requireWebUser(ctx);
  if (!user) return;
  ctx.type = 'html';
  ctx.body = settingsPage(user, { notice: typeof ctx.query.saved === 'string' ? savedNotice(ctx.query.saved) : undefined });
}

function savedNotice(what: string) {
  return { name: 'Your name was saved.', password: 'Your password was changed.', units: 'Your units were saved.' }[what];
}

const UNIT_CHOICES: [Units, string][] = [
  ['metric', 'Metric: km, km/h, min/km, min/100 m'],
  ['imperial', 'Imperial: miles, mph, min/mi, min/100 yd'],
];

/** POST /settings/units: metric or imperial, for every page and chart. */
export async function saveUnits(ctx: Ctx) {
  assertSameOrigin(ctx);
  const user = await requireWebUser(ctx);
  if (!user) return;
  const units = formBody(ctx).units;
  if (!UNIT_SYSTEMS.includes(units as Units)) {
    ctx.status = 422;
    ctx.type = 'html';
    ctx.body = settingsPage(user, { unitsError: 'Choose metric or imperial units.' });
    return;
  }
  await updateUserUnits(ctx.deps.db, user.id, units as Units);
  ctx.status = 303;
  ctx.redirect('/settings?saved=units');
}

export async function saveName(ctx: Ctx) {
  assertSameOrigin(ctx);
  const user = await requireWebUser(ctx);
  if (!user) return;
  const values = formBody(ctx);
  const parsed = storable(NameForm).safeParse(values);
  if (!parsed.success) {
    ctx.status = 422;
    ctx.type = 'html';
    ctx.body = settingsPage(user, { nameErrors: fieldErrors(parsed.error), nameValues: values });
    return;
  }
  await updateUserName(ctx.deps.db, user.id, parsed.data);
  ctx.status = 303;
  ctx.redirect('/settings?saved=name');
}

export async function changePassword(ctx: Ctx) {
  assertSameOrigin(ctx);
  const user = await requireWebUser(ctx);
  if (!user) return;
  const parsed = storable(PasswordForm).safeParse(formBody(ctx));
  const values = parsed.data ?? { current_password: '', new_password: '' };
  const errors: Errors = {};
  if (!(await verifyPassword(values.current_password, user.password_hash)))
    errors.current_password = 'The current password is not correct.';
  const weak = passwordProblem(values.new_password, { email: user.email, names: [user.first_name, user.last_name] });
  if (weak) errors.new_password = weak;
  if (Object.keys(errors).length) {
    ctx.status = 422;
    ctx.type = 'html';
    ctx.body = settingsPage(user, { passwordErrors: errors });
    return;
  }
  await updateUserPassword(ctx.deps.db, user.id, await hashPassword(values.new_password));
  await deleteOtherSessions(ctx.deps.db, user.id, user.sessionId);
  ctx.status = 303;
  ctx.redirect('/settings?saved=password');
}
