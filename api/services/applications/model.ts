import { z } from 'zod';
import type { Application } from '../../../db/database.ts';
import type { Config } from '../../../lib/config.ts';
import { DEFAULT_REDIRECT_URIS, redirectUriProblem } from '../oauth/redirect-uris.ts';

/** The privacy policy of client-side applications (their data never leaves the user's browser or device). */
export function clientSidePrivacyUrl(config: Config): string {
  return `${config.BASE_URL}/privacy/client-side`;
}

/** Private until description, URL, image and privacy statement are all set (docs/app-developers.md, "OAuth 2.0" step 1). */
export function isPrivate(app: Pick<Application, 'description' | 'url' | 'image' | 'privacy_statement'>): boolean {
  return !app.description || !app.url || !app.image || !app.privacy_statement;
}

export function isClientSideApp(app: Pick<Application, 'privacy_statement'>, config: Config): boolean {
  return app.privacy_statement === clientSidePrivacyUrl(config);
}

const RESERVED_SLUGS = new Set([
  'api',
  'oauth',
  'apps',
  'settings',
  'pages',
  'docs',
  'static',
  'signin',
  'signup',
  'signout',
  'admin',
  'privacy',
  'well-known',
  'openapi',
  'healthz',
  'readyz',
  'www',
  'help',
  'about',
  'new',
  'edit',
  'login',
  'logout',
]);

/** Why `slug` cannot name a page, or undefined. */
export function slugProblem(slug: string): string | undefined {
  if (slug.length < 3 || slug.length > 63) return 'must be 3 to 63 characters';
  if (!/^[a-z0-9-]+$/.test(slug)) return 'may contain only lowercase letters, digits and hyphens';
  if (slug.startsWith('-') || slug.endsWith('-')) return 'must not start or end with a hyphen';
  if (RESERVED_SLUGS.has(slug)) return `"${slug}" is reserved`;
  return undefined;
}

export const Slug = z
  .string()
  .superRefine((s, ctx) => {
    const problem = slugProblem(s);
    if (problem) ctx.addIssue({ code: 'custom', message: `slug ${problem}`, params: { type: 'slug_invalid' } });
  })
  .describe('Lowercase letters, digits and hyphens, 3–63 characters, not starting or ending with a hyphen, not a reserved word');

export const RedirectUri = z
  .string()
  .min(1)
  .superRefine((uri, ctx) => {
    const problem = redirectUriProblem(uri);
    if (problem) ctx.addIssue({ code: 'custom', message: `redirect URI ${problem}`, params: { type: 'redirect_uri_invalid' } });
  });

export function pageUrl(config: Config, slug: string): string {
  return `${config.BASE_URL}/pages/${slug}/`;
}

/** The redirect URIs an application is registered with: the given ones (loopback when none) plus its page. */
export function registeredRedirectUris(config: Config, given: string[] | null | undefined, slug: string | null | undefined): string[] {
  const uris = given?.length ? [...given] : [...DEFAULT_REDIRECT_URIS];
  if (slug) uris.push(pageUrl(config, slug));
  return [...new Set(uris)];
}

export const Page = z
  .object({
    slug: z.string(),
    published: z.boolean().describe('True once the page is live: the application is published (and so public)'),
    application: z.object({ id: z.string(), name: z.string(), is_private: z.boolean() }),
    url: z.string().describe('Read-only: where the page is served, `{base_url}/pages/{slug}/`'),
  })
  .meta({ id: 'PageResponse' });

export const ApplicationOut = z
  .object({
    id: z.string().describe('The OAuth client id'),
    name: z.string(),
    description: z.string().nullable(),
    image: z.string().nullable(),
    url: z.string().nullable(),
    redirect_uris: z.array(z.string()).nullable(),
    privacy_statement: z.string().nullable(),
    published: z.boolean(),
    webhook_endpoints: z.array(z.string()).nullable(),
    client_secret: z.string().nullable().describe('Only in the response that created it; stored hashed'),
    page: Page.nullable(),
    is_private: z.boolean().describe('Read-only: true while any of description, URL, image, privacy statement is missing'),
    is_clientside_app: z.boolean().describe('Read-only: true when privacy_statement is the standard client-side privacy policy URL'),
  })
  .meta({ id: 'Application' });

export const ApplicationListItem = z
  .object({ id: z.string(), name: z.string(), page_slug: z.string().nullable() })
  .meta({ id: 'ApplicationListItem' });

export function pageOf(app: Application, config: Config): z.infer<typeof Page> | null {
  if (!app.page_slug) return null;
  return {
    slug: app.page_slug,
    published: app.published,
    application: { id: app.id, name: app.name, is_private: isPrivate(app) },
    url: pageUrl(config, app.page_slug),
  };
}

export function applicationOut(app: Application, config: Config, clientSecret: string | null = null): z.infer<typeof ApplicationOut> {
  return {
    id: app.id,
    name: app.name,
    description: app.description,
    image: app.image,
    url: app.url,
    redirect_uris: app.redirect_uris,
    privacy_statement: app.privacy_statement,
    published: app.published,
    webhook_endpoints: app.webhook_endpoints,
    client_secret: clientSecret,
    page: pageOf(app, config),
    is_private: isPrivate(app),
    is_clientside_app: isClientSideApp(app, config),
  };
}
