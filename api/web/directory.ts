import { createHash, randomBytes } from 'node:crypto';
import type { Ctx } from '../http/context.ts';
import type { Application } from '../../db/database.ts';
import { findApplicationBySlug, listPublishedApplications } from '../../db/applications.ts';
import { currentWebUser } from '../http/web-session.ts';
import { isPrivate, pageUrl, slugProblem } from '../services/applications/model.ts';
import { html } from './html.ts';
import { page } from './layout.ts';
import { APP_ICON_SCRIPT, appIcon } from './app-icon.ts';
import { displayName, headerOf, notFound, sendHtml } from './web-common.ts';

async function headerUser(ctx: Ctx) {
  const user = await currentWebUser(ctx);
  return user ? headerOf(user) : undefined;
}

/** Live on the directory and its page: published (and so public). */
function isLive(app: Application): boolean {
  return app.published && !isPrivate(app);
}

/** GET /apps: the public directory of published applications. */
export async function showDirectory(ctx: Ctx) {
  const apps = (await listPublishedApplications(ctx.deps.db)).filter(isLive);
  sendHtml(
    ctx,
    200,
    page(
      { title: 'Applications', user: await headerUser(ctx), scripts: [APP_ICON_SCRIPT] },
      html`<h1>Applications</h1>
<p>Applications that work with your training data. Connecting one asks for your consent first; you can revoke it at any time in <a href="/settings/connections">Settings</a>.</p>
${
  apps.length
    ? html`<ul class="directory" id="directory">${apps.map(
        (a) => html`<li data-application-id="${a.id}">
${appIcon(a, 64)}
<div>
<h2 class="app-name">${a.page_slug ? html`<a href="/pages/${a.page_slug}/">${a.name}</a>` : a.name}</h2>
${a.description ? html`<p>${a.description}</p>` : ''}
<p class="links">${a.url ? html`<a href="${a.url}" rel="noopener nofollow">${hostOf(a.url)}</a>` : ''}${a.page_slug ? html` · <a href="/pages/${a.page_slug}/">Page</a>` : ''}</p>
</div>
</li>`,
      )}</ul>`
    : html`<div id="no-applications">
<p>No applications are published yet.</p>
<p>An application is listed here once its developer publishes it: in <a href="/settings/applications">Settings → API applications</a>, a public application with a description, a URL, an image and a privacy statement can be marked <em>Published</em>. Your own scripts need no listing: create a <a href="/settings/tokens">personal token</a> and read the <a href="/docs">API docs</a>.</p>
</div>`
}`,
    ),
  );
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/**
 * A throwaway PKCE challenge for the page's Connect link. The page never exchanges the code it gets
 * back (it only says the connection worked), and the authorization endpoint requires PKCE of an
 * application without a client secret; with no verifier kept, a code in the page URL is useless.
 */
function throwawayChallenge(): string {
  return createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url');
}

/** GET /pages/{slug}: to the canonical address with a trailing slash, query kept. */
export async function redirectToPage(ctx: Ctx) {
  const slug = ctx.params.slug ?? '';
  if (slugProblem(slug)) return notFound(ctx, 'Page not found.', await currentWebUser(ctx));
  ctx.status = 301;
  ctx.redirect(`/pages/${slug}/${ctx.querystring ? `?${ctx.querystring}` : ''}`);
}

/** GET /pages/{slug}/: the application's landing page; an unpublished one only previewed by its owner. */
export async function showApplicationPage(ctx: Ctx) {
  const slug = ctx.params.slug ?? '';
  if (!ctx.path.endsWith('/')) return redirectToPage(ctx);
  const app = slugProblem(slug) ? undefined : await findApplicationBySlug(ctx.deps.db, slug);
  const user = await currentWebUser(ctx);
  const live = app !== undefined && isLive(app);
  if (!app || (!live && app.owner_id !== user?.id)) return notFound(ctx, 'Page not found.', user);

  const { config } = ctx.deps;
  const self = pageUrl(config, slug);
  const authorize = `/oauth/authorize?${new URLSearchParams({
    response_type: 'code',
    client_id: app.id,
    redirect_uri: self,
    scope: 'profile',
    code_challenge: throwawayChallenge(),
    code_challenge_method: 'S256',
  })}`;
  const one = (v: unknown) => (typeof v === 'string' ? v.slice(0, 500) : undefined);
  const code = one(ctx.query.code);
  const error = one(ctx.query.error);
  const errorText = one(ctx.query.error_description) ?? error;

  sendHtml(
    ctx,
    200,
    page(
      { title: app.name, user: user ? { name: displayName(user) } : undefined, scripts: [APP_ICON_SCRIPT] },
      html`${live ? '' : html`<p class="banner" id="preview-banner" role="status">Preview: not published. Only you see this page until the application is published.</p>`}
${
  error
    ? html`<p class="error" role="alert" id="connect-result">Not connected: ${errorText}</p>`
    : code
      ? html`<p class="notice" role="status" id="connect-result">Connected to ${app.name}</p>`
      : ''
}
<article class="app-page" data-application-id="${app.id}">
${appIcon(app, 96)}
<h1>${app.name}</h1>
${app.description ? html`<p class="description">${app.description}</p>` : ''}
<p class="links">
${app.url ? html`<a href="${app.url}" rel="noopener" id="app-url">${hostOf(app.url)}</a>` : ''}
${app.privacy_statement ? html` · <a href="${app.privacy_statement}" rel="noopener" id="privacy-statement">Privacy statement</a>` : ''}
</p>
<p><a class="button" id="connect" href="${authorize}">Connect</a></p>
</article>`,
    ),
  );
}

/** GET /privacy/client-side: the standard privacy policy of client-side applications. */
export async function clientSidePrivacy(ctx: Ctx) {
  sendHtml(
    ctx,
    200,
    page(
      { title: 'Privacy policy for client-side applications', user: await headerUser(ctx) },
      html`<h1>Privacy policy for client-side applications</h1>
<p>This policy applies to every application that names this page as its privacy statement.</p>
<ul>
  <li>The application runs entirely in your browser or on your device.</li>
  <li>It sends your data nowhere but to this service: what it reads from your account stays in your browser or on your device, and what it writes goes only to your account here.</li>
  <li>The application’s developer receives nothing: no copy of your data, no account details, no usage statistics.</li>
  <li>You can revoke the application’s access at any time under <a href="/settings/connections">Settings → Connected applications</a>; its tokens stop working at once.</li>
</ul>`,
    ),
  );
}
