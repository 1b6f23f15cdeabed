import { createReadStream, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Ctx } from '../../http/context.ts';

const require = createRequire(import.meta.url);
const SWAGGER_DIR = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const STATIC_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'web', 'static');

/** Files served from the swagger-ui-dist package (no CDN): name → content type. */
const SWAGGER_ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'application/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};
/** The web app's own files (api/web/static): every file there with one of these extensions is served. */
const TYPES: Record<string, string> = {
  '.css': 'text/css; charset=utf-8',
  '.js': 'application/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};
const SITE_ASSETS: Record<string, string> = Object.fromEntries(
  readdirSync(STATIC_DIR)
    .filter((name) => Object.hasOwn(TYPES, path.extname(name)))
    .map((name) => [name, TYPES[path.extname(name)]!]),
);
/** The charting library (uPlot), served from the package (no CDN), under /static/vendor/. */
const UPLOT_DIR = path.join(path.dirname(require.resolve('uplot/package.json')), 'dist');
const VENDOR_ASSETS: Record<string, string> = {
  'uPlot.iife.min.js': TYPES['.js']!,
  'uPlot.min.css': TYPES['.css']!,
};

const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>API documentation · Training data service</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
<link rel="stylesheet" href="/static/docs.css">
<link rel="icon" href="/docs/assets/favicon-32x32.png">
</head>
<body>
<nav class="docs-nav" id="docs-nav" aria-label="Site">
<a class="home" id="docs-home" href="/">Training data service</a>
<a href="/activities">Activities</a>
<a href="/settings/tokens">Personal tokens</a>
<a href="/settings/applications">API applications</a>
</nav>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/swagger-ui-standalone-preset.js"></script>
<script src="/static/docs-init.js"></script>
</body>
</html>`;

/**
 * What Swagger UI needs and nothing more: its scripts and styles from here (it also sets inline
 * styles), images of its own or as data: URIs, fetches to this origin (the document, the API, the
 * token endpoint). The Authorize dialog opens /oauth/authorize in a popup, which is a navigation.
 */
const DOCS_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; " +
  "form-action 'none'; frame-ancestors 'none'; base-uri 'none'";

export function docsPage(ctx: Ctx) {
  ctx.type = 'html';
  ctx.set('Content-Security-Policy', DOCS_CSP);
  ctx.body = DOCS_PAGE;
}

/**
 * Swagger UI's OAuth 2.0 redirect page (`/docs/oauth2-redirect.html`, the docs client's redirect URI)
 * and its script, from the package: it hands the code back to the /docs window that opened the popup.
 */
const REDIRECT_FILES: Record<string, string> = {
  'oauth2-redirect.html': 'text/html; charset=utf-8',
  'oauth2-redirect.js': 'application/javascript; charset=utf-8',
};
export function oauth2Redirect(ctx: Ctx) {
  const name = ctx.params.file ?? '';
  const type = Object.hasOwn(REDIRECT_FILES, name) ? REDIRECT_FILES[name] : undefined;
  if (!type) return;
  ctx.type = type;
  ctx.set('Cache-Control', 'no-store');
  ctx.body = createReadStream(path.join(SWAGGER_DIR, name));
}

function serve(dir: string, assets: Record<string, string>) {
  return function serveAsset(ctx: Ctx) {
    const name = ctx.params.file ?? '';
    const type = Object.hasOwn(assets, name) ? assets[name] : undefined;
    if (!type) return; // falls through to 404
    ctx.type = type;
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = createReadStream(path.join(dir, name));
  };
}

export const swaggerAsset = serve(SWAGGER_DIR, SWAGGER_ASSETS);
export const siteAsset = serve(STATIC_DIR, SITE_ASSETS);
export const vendorAsset = serve(UPLOT_DIR, VENDOR_ASSETS);

/** GET /favicon.ico: browsers that ask for it (pages link /static/favicon.svg) get the same SVG, not a 404. */
export function favicon(ctx: Ctx) {
  ctx.type = TYPES['.svg']!;
  ctx.set('Cache-Control', 'public, max-age=86400');
  ctx.body = createReadStream(path.join(STATIC_DIR, 'favicon.svg'));
}
