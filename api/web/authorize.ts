import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { defineRoute } from '../http/route.ts';
import type { Ctx } from '../http/context.ts';
import type { Application, User } from '../../db/database.ts';
import { findApplication, hasClientSecrets } from '../../db/applications.ts';
import { createAuthorizationCode, findConsent, recordConsent } from '../../db/grants.ts';
import { currentWebUser } from '../http/web-session.ts';
import { SCOPE_DESCRIPTIONS, type Scope } from '../services/auth/scopes.ts';
import { assertSameOrigin } from '../http/origin-check.ts';
import { AuthorizeError } from '../services/oauth/errors.ts';
import {
  answerUri,
  parseAuthorizationRequest,
  singleParams,
  trustedRedirectUri,
  UntrustedRequestError,
  type AuthorizationRequest,
} from '../services/oauth/authorization-request.ts';
import { matchRedirectUri } from '../services/oauth/redirect-uris.ts';
import { isPrivate } from '../services/applications/model.ts';
import { html } from './html.ts';
import { errorPage, page } from './layout.ts';
import { APP_ICON_SCRIPT, appIcon } from './app-icon.ts';
import { displayName, headerOf } from './web-common.ts';
import { formBody } from './forms.ts';

/** How long the consent screen stays valid. */
const CONSENT_TTL_SECONDS = 600;

/**
 * GET /oauth/authorize: validate the client and redirect URI (errors on our own page), then the
 * request (errors back to the client), sign the user in when needed, and answer with a code
 * (prompt=none with prior consent) or the consent screen.
 */
export async function authorize(ctx: Ctx) {
  const { db } = ctx.deps;
  const { params, repeated, malformed } = singleParams(ctx.query);
  if (malformed.includes('client_id')) return untrusted(ctx, 'Unknown client_id: it contains a NUL character or invalid Unicode.');
  const app = params.client_id && !repeated.includes('client_id') ? await findApplication(db, params.client_id) : undefined;
  if (!app) return untrusted(ctx, params.client_id ? 'Unknown client_id: no application has this id.' : 'client_id is required.');
  let redirect: ReturnType<typeof trustedRedirectUri>;
  try {
    redirect = trustedRedirectUri(app, params, repeated, malformed);
  } catch (err) {
    if (err instanceof UntrustedRequestError) return untrusted(ctx, err.message);
    throw err;
  }
  const state = repeated.includes('state') ? undefined : params.state;
  try {
    const request = parseAuthorizationRequest(app, redirect, params, repeated, await hasClientSecrets(db, app.id), malformed);
    const user = await currentWebUser(ctx);
    if (request.prompt.has('login') || !user) {
      if (request.prompt.has('none')) throw new AuthorizeError('login_required', 'The user is not signed in');
      // Back here after signing in, without prompt=login so that it is asked only once.
      const next = new URL(ctx.originalUrl, 'http://x');
      const prompt = [...request.prompt].filter((p) => p !== 'login').join(' ');
      if (prompt) next.searchParams.set('prompt', prompt);
      else next.searchParams.delete('prompt');
      ctx.status = 303;
      ctx.redirect(`/signin?${new URLSearchParams({ next: next.pathname + next.search, ...(user ? { reauth: '1' } : {}) })}`);
      return;
    }
    if (isPrivate(app) && app.owner_id !== user.id) {
      if (request.prompt.has('none'))
        throw new AuthorizeError('access_denied', 'This application is private: only its owner can connect it');
      return privateAppPage(ctx, app, user, request);
    }
    if (request.prompt.has('none')) {
      const consent = await findConsent(db, user.id, app.id);
      if (!consent || !request.scopes.every((s) => consent.scopes.includes(s))) {
        throw new AuthorizeError('consent_required', 'The user has not yet approved these scopes for this application');
      }
      ctx.redirect(await issueCode(ctx, user, request));
      return;
    }
    await consentScreen(ctx, app, user, request);
  } catch (err) {
    if (!(err instanceof AuthorizeError)) throw err;
    ctx.redirect(answerUri(redirect, { error: err.code, error_description: err.description, state, iss: ctx.deps.config.BASE_URL }));
  }
}

/** POST /oauth/authorize/decision: the consent form's Allow or Deny. */
export async function decide(ctx: Ctx) {
  assertSameOrigin(ctx);
  const user = await currentWebUser(ctx);
  if (!user) return untrusted(ctx, 'You are signed out. Start again from the application.', 401);
  const { ticket, decision } = formBody(ctx);
  const key = ticketKey(ctx, ticket ?? '');
  const stored = ticket && /^[A-Za-z0-9_-]{32}$/.test(ticket) ? await ctx.deps.redis.getdel(key) : null;
  const pending = stored ? (JSON.parse(stored) as PendingConsent) : undefined;
  // The ticket is single-use and bound to the session that was shown the screen (CSRF protection).
  if (!pending || pending.sessionId !== user.sessionId) {
    return untrusted(ctx, 'This authorization request has expired or was already answered. Start again from the application.', 400, user);
  }
  const { request } = pending;
  const app = await findApplication(ctx.deps.db, request.clientId);
  if (!app || !matchRedirectUri(app.redirect_uris, request.redirectUri))
    return untrusted(ctx, 'The application has changed; start again from it.', 400, user);
  const answer = (a: Record<string, string | undefined>) =>
    answerUri(request.redirectUri, { ...a, state: request.state, iss: ctx.deps.config.BASE_URL });
  ctx.status = 303;
  if (decision !== 'allow') {
    ctx.redirect(answer({ error: 'access_denied', error_description: 'The user declined to authorize the application' }));
    return;
  }
  if (isPrivate(app) && app.owner_id !== user.id) {
    ctx.redirect(answer({ error: 'access_denied', error_description: 'This application is private: only its owner can connect it' }));
    return;
  }
  await recordConsent(ctx.deps.db, user.id, app.id, request.scopes);
  ctx.redirect(await issueCode(ctx, user, request));
}

interface PendingConsent {
  sessionId: string;
  request: Omit<AuthorizationRequest, 'prompt'>;
}

function ticketKey(ctx: Ctx, ticket: string) {
  return `${ctx.deps.config.QUEUE_PREFIX}:consent:${ticket}`;
}

async function issueCode(ctx: Ctx, user: User, request: Omit<AuthorizationRequest, 'prompt'>): Promise<string> {
  const code = await createAuthorizationCode(
    ctx.deps.db,
    {
      application_id: request.clientId,
      user_id: user.id,
      redirect_uri: request.redirectUri,
      scopes: request.scopes,
      code_challenge: request.codeChallenge ?? null,
      nonce: request.nonce ?? null,
    },
    ctx.deps.now(),
  );
  return answerUri(request.redirectUri, { code, state: request.state, iss: ctx.deps.config.BASE_URL });
}

function untrusted(ctx: Ctx, message: string, status = 400, user?: User) {
  ctx.status = status;
  ctx.type = 'html';
  ctx.body = errorPage(status, message, user ? { name: displayName(user) } : undefined);
}

/** The form may send the browser to the redirect URI, so CSP form-action must allow its origin. */
function formAction(redirectUri: string): string {
  const url = new URL(redirectUri);
  const target = url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : url.protocol;
  return `'self' ${target}`;
}

async function consentScreen(ctx: Ctx, app: Application, user: User & { sessionId: string }, request: AuthorizationRequest) {
  const ticket = randomBytes(24).toString('base64url');
  const { prompt: _prompt, ...rest } = request;
  const pending: PendingConsent = { sessionId: user.sessionId, request: rest };
  await ctx.deps.redis.set(ticketKey(ctx, ticket), JSON.stringify(pending), 'EX', CONSENT_TTL_SECONDS);
  const target = new URL(request.redirectUri);
  ctx.set(
    'Content-Security-Policy',
    `default-src 'none'; style-src 'self'; img-src 'self' https: data:; script-src 'self'; form-action ${formAction(request.redirectUri)}; frame-ancestors 'none'; base-uri 'none'`,
  );
  ctx.set('Cache-Control', 'no-store');
  ctx.type = 'html';
  ctx.body = page(
    { title: `Authorize ${app.name}`, user: headerOf(user), scripts: [APP_ICON_SCRIPT] },
    html`<section class="consent">
${appIcon(app, 64)}
<h1><span id="app-name">${app.name}</span> wants to access your account</h1>
${
  isPrivate(app)
    ? html`<p class="notice" id="private-notice" role="note">This application is private: it is still in development and has not published its description, website, image and privacy statement. Only you, its owner, can connect it.</p>`
    : ''
}
${app.description ? html`<p>${app.description}</p>` : ''}
<p>Signed in as <strong>${user.email}</strong>. ${app.name} will be able to:</p>
<ul id="scopes">
  ${request.scopes.map((s: Scope) => html`<li data-scope="${s}">${SCOPE_DESCRIPTIONS[s]}</li>`)}
</ul>
${app.privacy_statement ? html`<p><a href="${app.privacy_statement}" rel="noopener">Privacy statement of ${app.name}</a></p>` : ''}
<p>You will be sent back to <strong>${target.protocol === 'http:' || target.protocol === 'https:' ? target.host : target.protocol}</strong>. You can revoke this access at any time in Settings → Connected applications.</p>
<form method="post" action="/oauth/authorize/decision" class="actions">
  <input type="hidden" name="ticket" value="${ticket}">
  <button type="submit" name="decision" value="allow" id="allow">Allow</button>
  <button type="submit" name="decision" value="deny" id="deny" class="secondary">Deny</button>
</form>
</section>`,
  );
}

function privateAppPage(ctx: Ctx, app: Application, user: User, request: AuthorizationRequest) {
  const back = answerUri(request.redirectUri, {
    error: 'access_denied',
    error_description: 'This application is private: only its owner can connect it',
    state: request.state,
    iss: ctx.deps.config.BASE_URL,
  });
  ctx.status = 403;
  ctx.type = 'html';
  ctx.body = page(
    { title: 'Private application', user: headerOf(user) },
    html`<h1>${app.name} is a private application</h1>
<p class="error" role="alert" id="private-refusal">This application is still in development: only its owner's account can connect it. Nothing was shared.</p>
<p><a href="${back}" id="back-to-app">Return to the application</a></p>`,
  );
}

const AuthorizeQuery = z.object({
  response_type: z.literal('code').optional().describe('`code` (the default when omitted)'),
  client_id: z.string().describe('The application id'),
  redirect_uri: z
    .string()
    .optional()
    .describe(
      'A registered redirect URI (or a sub-path of an https/loopback one); optional when exactly one non-loopback URI is registered. ' +
        'Refused (error page, no redirect) when its path has dot-segments, `;` parameters, encoded `.` `/` `\\` `;` `%` or a ' +
        'backslash, when it has user-info, or when it has its own `code`, `state` or `iss` query parameter.',
    ),
  scope: z
    .string()
    .describe('Space-separated scopes: data:read, data:write, profile, offline_access, openid (commas accepted, deprecated)'),
  state: z.string().optional().describe('Returned unchanged'),
  code_challenge: z
    .string()
    .optional()
    .describe('PKCE: base64url SHA-256 of the verifier; required unless the application has a client secret'),
  code_challenge_method: z.literal('S256').optional(),
  prompt: z
    .enum(['none', 'login', 'consent'])
    .optional()
    .describe('`consent` (default): show the consent screen; `login`: sign in again; `none`: no interaction'),
  nonce: z.string().optional().describe('OpenID Connect: copied into the ID token'),
});

/** The authorization endpoint as an API operation (documented in OpenAPI; it validates its own query). */
export const authorizeRoute = defineRoute(
  {
    method: 'get',
    path: '/oauth/authorize',
    operationId: 'authorize',
    summary: 'Start the authorization code flow (browser)',
    description:
      'Signs the user in when needed and shows the consent screen; then redirects to `redirect_uri` with `code`, `state` ' +
      'and `iss`. An unknown `client_id` or an unregistered or malformed `redirect_uri` is answered on an error page here (never ' +
      'redirected); other errors are redirected with `error`, `error_description` and `state` (`invalid_request`, ' +
      '`invalid_scope`, `unsupported_response_type`, `access_denied`, `login_required`, `consent_required`). A private ' +
      'application completes only for its owner. Codes expire after 60 seconds.',
    tags: ['oauth'],
    auth: 'none',
    oauthQuery: AuthorizeQuery,
    responses: {
      302: { description: 'To the redirect URI (code or error), or to sign-in', headers: { Location: 'Where to go next' } },
      200: { description: 'The consent screen', contentType: 'text/html' },
      400: { description: 'Unknown client or redirect URI: an error page', contentType: 'text/html' },
      403: { description: 'A private application and a user who is not its owner', contentType: 'text/html' },
    },
  },
  authorize,
);
