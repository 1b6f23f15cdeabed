import Koa from 'koa';
import { Router } from '@koa/router';
import { koaBody, HttpMethodEnum } from 'koa-body';
import type { AppContextExtras, AppState, Mw } from './http/context.ts';
import type { Deps } from './services/deps.ts';
import { routerPath, type Route } from './http/route.ts';
import { buildOpenApi } from './rest/openapi.ts';
import { requestContext } from './http/middleware/request-context.ts';
import { errorHandler } from './http/middleware/error-handler.ts';
import { renderErrorPage } from './web/error-page.ts';
import { corsForApi } from './http/middleware/cors.ts';
import { securityHeaders } from './http/middleware/security-headers.ts';
import { refuseUnstorableAddress } from './http/middleware/unstorable-address.ts';
import { drainUnread } from './http/middleware/drain-unread.ts';
import { compression } from './http/middleware/compression.ts';
import { privateCaching } from './http/middleware/private-caching.ts';
import { healthRoutes } from './rest/routes/health.ts';
import { userinfo } from './rest/routes/oauth/userinfo.ts';
import { tokenRoutes } from './rest/routes/oauth/token.ts';
import { revokeRoutes } from './rest/routes/oauth/revoke.ts';
import { applicationRoutes } from './rest/routes/applications.ts';
import { delegationRoutes } from './rest/routes/oauth/delegation.ts';
import { userRoutes } from './rest/routes/users/index.ts';
import { teamRoutes } from './rest/routes/teams/index.ts';
import { wellknownRoutes } from './rest/routes/wellknown.ts';
import { activityRoutes } from './rest/routes/activities/index.ts';
import { sourceRoutes } from './rest/routes/sources.ts';
import { profileRoutes } from './rest/routes/profile/index.ts';
import { traceRoutes } from './rest/routes/traces/index.ts';
import { testRoutes } from './rest/routes/tests/index.ts';
import { dailyRoutes } from './rest/routes/dailies/index.ts';
import { docsPage, favicon, oauth2Redirect, siteAsset, swaggerAsset, vendorAsset } from './rest/routes/docs.ts';
import { authorizeRoute } from './web/authorize.ts';
import { addWebPages } from './web/routes.ts';

/** Every API operation, in the order the OpenAPI document lists them. */
export const apiRoutes: Route[] = [
  ...healthRoutes,
  ...wellknownRoutes,
  authorizeRoute,
  ...tokenRoutes,
  ...revokeRoutes,
  userinfo,
  ...applicationRoutes,
  ...delegationRoutes,
  ...userRoutes,
  ...teamRoutes,
  ...activityRoutes,
  ...sourceRoutes,
  ...traceRoutes,
  ...testRoutes,
  ...profileRoutes,
  ...dailyRoutes,
];

export const VERSION = '0.1.0';

export function createApp(deps: Deps, routes: Route[] = apiRoutes): Koa<AppState, AppContextExtras> {
  const app = new Koa<AppState, AppContextExtras>({ proxy: deps.config.TRUST_PROXY });
  app.context.deps = deps;
  // Errors are answered by errorHandler; Koa's default handler would print them a second time.
  app.silent = true;

  const router = new Router<AppState, AppContextExtras>();
  for (const route of routes) {
    const methods = Array.isArray(route.spec.method) ? route.spec.method : [route.spec.method];
    // List paths are written with a trailing slash (`/api/v1/activities/`); the path without it answers the same.
    const paths =
      route.spec.path.length > 1 && route.spec.path.endsWith('/') ? [route.spec.path, route.spec.path.slice(0, -1)] : [route.spec.path];
    for (const method of methods) for (const path of paths) router[method](routerPath(path), ...(route.middleware as Mw[]));
  }

  const openapi = JSON.stringify(buildOpenApi(routes, { baseUrl: deps.config.BASE_URL, version: VERSION }));
  router.get('/openapi.json', function openapiDocument(ctx) {
    ctx.type = 'json';
    ctx.body = openapi;
  });
  router.get('/docs', docsPage);
  router.get('/docs/assets/:file', swaggerAsset);
  router.get('/docs/:file', oauth2Redirect);
  router.get('/static/:file', siteAsset);
  router.get('/static/vendor/:file', vendorAsset);
  router.get('/favicon.ico', favicon);

  addWebPages(router);

  const body = koaBody({
    json: true,
    urlencoded: true,
    multipart: false,
    text: false,
    jsonStrict: true,
    jsonLimit: deps.config.BODY_LIMIT_BYTES,
    formLimit: deps.config.BODY_LIMIT_BYTES,
    parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH, HttpMethodEnum.DELETE],
  });

  const { REJECTED_BODY_DRAIN_BYTES, REJECTED_BODY_DRAIN_SECONDS, UPLOAD_MAX_FILE_BYTES } = deps.config;
  const drainBounds = { maxBytes: REJECTED_BODY_DRAIN_BYTES ?? 4 * UPLOAD_MAX_FILE_BYTES, maxMs: REJECTED_BODY_DRAIN_SECONDS * 1000 };
  app.use(drainUnread(drainBounds));
  app.use(requestContext);
  app.use(corsForApi()); // the API, discovery and JWKS answer any origin, without credentials; web pages stay same-origin
  app.use(compression());
  app.use(privateCaching);
  app.use(errorHandler(renderErrorPage));
  app.use(securityHeaders);
  app.use(body);
  app.use(refuseUnstorableAddress);
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
