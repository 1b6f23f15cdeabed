import { z } from 'zod';
import { defineRoute } from '../../http/route.ts';
import { Conflict, NotFound } from '../../services/errors.ts';
import {
  ApplicationListItem,
  ApplicationOut,
  applicationOut,
  Page,
  pageOf,
  pageUrl,
  RedirectUri,
  registeredRedirectUris,
  Slug,
} from '../../services/applications/model.ts';
import {
  createApplication,
  createClientSecret,
  findOwnedApplication,
  listOwnedApplications,
  SlugTakenError,
  updateApplication,
} from '../../../db/applications.ts';

const CreateApplication = z
  .object({
    name: z.string().trim().min(1).max(100),
    description: z.string().max(500).nullable().optional(),
    redirect_uris: z
      .array(RedirectUri)
      .max(20)
      .nullable()
      .optional()
      .describe(
        'https, loopback http (any port) or a private-use scheme. https and loopback URIs must be written plainly: no user-info, ' +
          'no backslash, no dot-segments, `;` parameters or percent-encoded `.` `/` `\\` `;` `%` in the path. No URI may have its own ' +
          '`code`, `state` or `iss` query parameter. Each refused URI is a 422 naming its index.',
      ),
    page: Slug.nullable().optional().describe('A page slug; the page URL is added to the redirect URIs'),
    generate_secret: z.boolean().default(false).describe('Also make a client secret, returned once in `client_secret`'),
  })
  .meta({ id: 'ApplicationCreate' });

const FIRST_PARTY = { scopes: [], firstParty: true } as const;
const FIRST_PARTY_NOTE = "Needs a first-party credential: the web session or a personal token. A third-party application's token gets 403.";

export const createApplicationRoute = defineRoute(
  {
    method: 'post',
    path: '/api/v1/applications',
    operationId: 'create_application',
    summary: 'Create an application (private, for development)',
    description:
      `${FIRST_PARTY_NOTE} The application is created private and unpublished; a public application needs a description, ` +
      'URL, image and privacy statement, set in Settings → API. With no redirect URIs, `http://localhost` and ' +
      '`http://127.0.0.1` (any port) are registered; with `page`, the page URL is added. Redirect URIs: `https`, loopback ' +
      '`http` on any port, or a private-use scheme (exact match); `https` and loopback match by sub-path; public `http` and ' +
      '`#fragment`s are refused. A taken page slug is 409.',
    tags: ['applications'],
    auth: FIRST_PARTY,
    body: CreateApplication,
    responses: {
      201: { description: 'The application; `client_secret` is shown only here', schema: ApplicationOut },
      409: { description: 'The page slug belongs to another application' },
    },
  },
  async (ctx, { body }) => {
    const { db, config } = ctx.deps;
    const owner = ctx.state.principal!.userId;
    let app: Awaited<ReturnType<typeof createApplication>>;
    try {
      app = await createApplication(db, {
        owner_id: owner,
        name: body.name,
        description: body.description ?? null,
        redirect_uris: registeredRedirectUris(config, body.redirect_uris, body.page),
        page_slug: body.page ?? null,
      });
    } catch (err) {
      if (err instanceof SlugTakenError) throw new Conflict(`The page slug "${err.slug}" belongs to another application`);
      throw err;
    }
    const secret = body.generate_secret ? (await createClientSecret(db, app.id, 'Created with the application')).secret : null;
    ctx.status = 201;
    ctx.body = applicationOut(app, config, secret);
  },
);

export const listApplicationsRoute = defineRoute(
  {
    method: 'get',
    path: '/api/v1/applications',
    operationId: 'list_applications',
    summary: 'The applications you own, newest first',
    description: FIRST_PARTY_NOTE,
    tags: ['applications'],
    auth: FIRST_PARTY,
    responses: { 200: { description: 'Minimal fields of each application', schema: z.array(ApplicationListItem) } },
  },
  async (ctx) => {
    const apps = await listOwnedApplications(ctx.deps.db, ctx.state.principal!.userId);
    ctx.body = apps.map((a) => ({ id: a.id, name: a.name, page_slug: a.page_slug }));
  },
);

export const putPageRoute = defineRoute(
  {
    method: 'put',
    path: '/api/v1/applications/{application_id}/page',
    operationId: 'put_application_page',
    summary: "Bind the application's public page to a slug",
    description:
      `${FIRST_PARTY_NOTE} Idempotent: the same slug again changes nothing. A slug other than the current one, or one ` +
      'owned by another application, is 409; an invalid slug is 400 (not 422, per SPEC). The page URL ' +
      '`{base_url}/pages/{slug}/` is added to the redirect URIs. The page is live (`published`) once the application is ' +
      'published; until then only the owner sees it, as a preview.',
    tags: ['applications'],
    auth: FIRST_PARTY,
    params: z.object({ application_id: z.string() }),
    body: z.object({ slug: Slug }).meta({ id: 'PageRequest' }),
    validationStatus: 400,
    responses: {
      200: { description: 'The page', schema: Page },
      404: { description: 'No such application of yours' },
      409: { description: 'A different slug is already set, or the slug belongs to another application' },
    },
  },
  async (ctx, { params, body }) => {
    const { db, config } = ctx.deps;
    const app = await findOwnedApplication(db, params.application_id, ctx.state.principal!.userId);
    if (!app) throw new NotFound('Application not found');
    if (app.page_slug === body.slug) {
      ctx.body = pageOf(app, config);
      return;
    }
    if (app.page_slug) throw new Conflict(`The application's page already has the slug "${app.page_slug}"`);
    let updated: Awaited<ReturnType<typeof updateApplication>>;
    try {
      updated = await updateApplication(db, app.id, {
        page_slug: body.slug,
        redirect_uris: [...new Set([...app.redirect_uris, pageUrl(config, body.slug)])],
      });
    } catch (err) {
      if (err instanceof SlugTakenError) throw new Conflict(`The page slug "${err.slug}" belongs to another application`);
      throw err;
    }
    ctx.body = pageOf(updated, config);
  },
);

export const applicationRoutes = [createApplicationRoute, listApplicationsRoute, putPageRoute];
