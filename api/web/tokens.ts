import type { Ctx } from '../http/context.ts';
import type { Grant } from '../../db/database.ts';
import { deleteGrant, findGrant, listPersonalTokens } from '../../db/grants.ts';
import { createPersonalToken } from '../services/oauth/issue.ts';
import { SCOPE_DESCRIPTIONS, type Scope } from '../services/auth/scopes.ts';
import { assertSameOrigin } from '../http/origin-check.ts';
import { html } from './html.ts';
import { field, formError, page, settingsNav } from './layout.ts';
import { formBody, type FieldErrors, type FormValues } from './forms.ts';
import { textProblem } from '../../lib/text.ts';
import { headerOf, notFound, notice, requireWebUser, sendHtml, when, type WebUser } from './web-common.ts';
import { SHOWN_ONCE_PARAM, stashShownOnce, takeShownOnce } from './shown-once.ts';

/** The scopes a personal token may carry (it always gets a refresh token, so offline_access is implied). */
export const PERSONAL_TOKEN_SCOPES: Scope[] = ['data:read', 'data:write', 'profile'];

interface TokensState {
  notice?: string;
  values?: FormValues;
  scopes?: Scope[];
  errors?: FieldErrors;
  created?: { label: string; access_token: string; refresh_token: string; expires_in: number; scope: string };
}

function tokensPage(ctx: Ctx, user: WebUser, tokens: Grant[], s: TokensState = {}) {
  const base = ctx.deps.config.BASE_URL;
  const e = s.errors ?? {};
  const checked = new Set(s.scopes ?? []);
  return page(
    { title: 'Personal tokens', user: headerOf(user) },
    html`<h1>Personal tokens</h1>
${settingsNav('/settings/tokens')}
${notice(s.notice)}
${
  s.created
    ? html`<div class="secret-once" role="status">
<p>Token “${s.created.label}” created with the scopes <code>${s.created.scope}</code>. Copy both now: they are shown only this once.</p>
<p>Access token (valid ${Math.round(s.created.expires_in / 60)} minutes):</p>
<p><code id="new-access-token" class="token">${s.created.access_token}</code></p>
<p>Refresh token (no expiry; works until you revoke the token):</p>
<p><code id="new-refresh-token" class="token">${s.created.refresh_token}</code></p>
<p id="refresh-howto">To get a new access token: <code>POST ${base}/api/v1/oauth/token</code> with the form body <code>grant_type=refresh_token&amp;refresh_token=…</code> (no <code>client_id</code>).</p>
</div>`
    : ''
}
<p>Tokens for your own scripts: send the access token as <code>Authorization: Bearer …</code>. Revoking a token stops its access token and its refresh token at once.</p>
${
  tokens.length
    ? html`<table class="wide" id="tokens">
<thead><tr><th>Label</th><th>Scopes</th><th>Created</th><th>Last used</th><th></th></tr></thead>
<tbody>${tokens.map(
        (t) => html`<tr data-token-id="${t.id}">
<td>${t.label ?? ''}</td><td>${t.scopes.map((sc) => html`<code>${sc}</code> `)}</td><td>${when(t.created_at)}</td><td>${when(t.last_used_at)}</td>
<td><form method="post" action="/settings/tokens/${t.id}/revoke" class="inline"><button type="submit" class="danger small" id="revoke-token-${t.id}">Revoke</button></form></td>
</tr>`,
      )}</tbody>
</table>`
    : html`<p id="no-tokens">You have no personal tokens.</p>`
}
<h2>Create token</h2>
<form method="post" action="/settings/tokens" class="stack" novalidate>
  ${formError(Object.values(e).some(Boolean) ? 'Please correct the fields marked below.' : undefined)}
  ${field({ name: 'label', label: 'Label (what the token is for)', value: s.values?.label, error: e.label })}
  <fieldset${e.scopes ? html` aria-invalid="true" aria-describedby="scopes-error"` : ''}>
    <legend>Scopes</legend>
    ${PERSONAL_TOKEN_SCOPES.map(
      (
        sc,
      ) => html`<div class="check"><input type="checkbox" id="scope-${sc.replace(':', '-')}" name="scopes" value="${sc}"${checked.has(sc) ? html` checked` : ''}>
<label for="scope-${sc.replace(':', '-')}"><code>${sc}</code>: ${SCOPE_DESCRIPTIONS[sc]}</label></div>`,
    )}
  </fieldset>
  ${e.scopes ? html`<p class="field-error" id="scopes-error">${e.scopes}</p>` : ''}
  <button type="submit">Create token</button>
</form>`,
  );
}

/** The checked scope boxes: a repeated form field arrives as an array. */
function postedScopes(ctx: Ctx): { scopes: Scope[]; unknown: boolean } {
  const raw = ((ctx.request.body ?? {}) as Record<string, unknown>).scopes;
  const list = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).map(String);
  const scopes = PERSONAL_TOKEN_SCOPES.filter((s) => list.includes(s));
  return { scopes, unknown: list.some((s) => !(PERSONAL_TOKEN_SCOPES as string[]).includes(s)) };
}

const TOKENS_PAGE = '/settings/tokens';

type CreatedToken = NonNullable<TokensState['created']>;

export async function showTokens(ctx: Ctx) {
  const user = await requireWebUser(ctx);
  if (!user) return;
  const tokens = await listPersonalTokens(ctx.deps.db, user.id);
  if (ctx.query[SHOWN_ONCE_PARAM] !== undefined) {
    // The page a new token's POST redirected to: its secrets, the first time only.
    ctx.set('Cache-Control', 'no-store');
    const created = await takeShownOnce<CreatedToken>(ctx, user.id, TOKENS_PAGE);
    const gone = 'This token was shown once and cannot be shown again; if you did not copy it, revoke it and create another.';
    sendHtml(ctx, 200, tokensPage(ctx, user, tokens, created ? { created } : { notice: gone }));
    return;
  }
  const revoked = ctx.query.revoked !== undefined ? 'The token was revoked.' : undefined;
  sendHtml(ctx, 200, tokensPage(ctx, user, tokens, { notice: revoked }));
}

export async function createToken(ctx: Ctx) {
  assertSameOrigin(ctx);
  const user = await requireWebUser(ctx, '/settings/tokens');
  if (!user) return;
  const { db, tokens } = ctx.deps;
  const values = formBody(ctx);
  const label = (values.label ?? '').trim();
  const { scopes, unknown } = postedScopes(ctx);
  const errors: FieldErrors = {};
  const labelProblem = textProblem(label);
  if (labelProblem) errors.label = `Label ${labelProblem}.`;
  else if (!label) errors.label = 'Label is required.';
  else if (label.length > 100) errors.label = 'Label must be at most 100 characters.';
  if (unknown) errors.scopes = `Choose among ${PERSONAL_TOKEN_SCOPES.join(', ')}.`;
  else if (!scopes.length) errors.scopes = 'Choose at least one scope.';
  if (Object.keys(errors).length) {
    sendHtml(ctx, 422, tokensPage(ctx, user, await listPersonalTokens(db, user.id), { values, scopes, errors }));
    return;
  }
  const { response } = await createPersonalToken(db, tokens, user.id, scopes, label);
  const created: CreatedToken = {
    label,
    access_token: response.access_token,
    refresh_token: response.refresh_token!,
    expires_in: response.expires_in,
    scope: response.scope,
  };
  // Shown once, on the page this redirects to (api/web/shown-once.ts): never in a URL, and a reload
  // creates nothing. Without Redis, on this answer instead.
  const next = await stashShownOnce(ctx, user.id, TOKENS_PAGE, created);
  if (next) {
    ctx.status = 303;
    ctx.redirect(next);
    return;
  }
  ctx.set('Cache-Control', 'no-store');
  sendHtml(ctx, 201, tokensPage(ctx, user, await listPersonalTokens(db, user.id), { created }));
}

export async function revokeToken(ctx: Ctx) {
  assertSameOrigin(ctx);
  const user = await requireWebUser(ctx, '/settings/tokens');
  if (!user) return;
  const grant = await findGrant(ctx.deps.db, ctx.params.id ?? '');
  // Only the user's own personal tokens; anything else is as absent as a missing one.
  if (!grant || grant.user_id !== user.id || grant.application_id !== null) return notFound(ctx, 'Token not found.', user);
  await deleteGrant(ctx.deps.db, grant.id);
  ctx.status = 303;
  ctx.redirect('/settings/tokens?revoked=1');
}
