import { z } from 'zod';
import type { Route, RouteSpec } from '../http/route.ts';
import { EVENT_TYPES, TEST_EVENT } from '../../db/events.ts';
import { applyWireSchema } from '../services/openapi-schema.ts';
import { oauth2Scheme, operationSecurity, REFRESHED_TOKEN_HEADER, sessionHeaders, TAGS } from './openapi-auth.ts';

type JsonSchema = Record<string, unknown>;

/**
 * The OpenAPI 3.1 document, generated from the routes' zod schemas (OpenAPI 3.1 schemas are JSON
 * Schema 2020-12, which zod emits). Schemas registered with `.meta({ id })` become components.
 */
export function buildOpenApi(routes: Route[], info: { baseUrl: string; version: string }) {
  const components: Record<string, JsonSchema> = {};
  const toSchema = (schema: z.ZodType, io: 'input' | 'output'): JsonSchema => {
    const json = z.toJSONSchema(schema, {
      target: 'draft-2020-12',
      io,
      unrepresentable: 'any',
      reused: 'inline',
      override: applyWireSchema,
    }) as JsonSchema;
    delete json.$schema;
    const defs = (json.$defs ?? {}) as Record<string, JsonSchema>;
    delete json.$defs;
    for (const [id, def] of Object.entries(defs)) register(id, rewriteRefs(def));
    const id = z.globalRegistry.get(schema)?.id as string | undefined;
    delete json.id;
    if (!id) return rewriteRefs(json);
    // zod already hoisted the root into $defs and answered a $ref; otherwise register it here.
    if (!components[id]) register(id, rewriteRefs(json));
    return { $ref: `#/components/schemas/${id}` };
  };
  // One name, one shape: a schema whose input and output differ must not silently replace the other.
  const register = (id: string, schema: JsonSchema) => {
    if (components[id] && JSON.stringify(components[id]) !== JSON.stringify(schema))
      throw new Error(`OpenAPI: two different schemas are named ${id}`);
    components[id] = schema;
  };
  toSchema(HTTPValidationErrorSchema, 'output');
  toSchema(ErrorSchema, 'output');

  const paths: Record<string, Record<string, unknown>> = {};
  for (const { spec } of routes) {
    const methods = Array.isArray(spec.method) ? spec.method : [spec.method];
    for (const method of methods) {
      (paths[spec.path] ??= {})[method] = operation(spec, toSchema, methods.length > 1 ? method : undefined);
      for (const tag of spec.tags)
        if (!TAGS.some((t) => t.name === tag)) throw new Error(`OpenAPI: ${spec.operationId} has the undeclared tag ${tag}`);
    }
  }

  return {
    openapi: '3.1.0',
    info: {
      title: 'Training data service',
      version: info.version,
      description:
        "Stores athletes' activities, traces and daily measures and serves them as JSON and Parquet; " +
        'an OAuth 2.0 authorization server for third-party applications.\n\n' +
        'Conventions: instants are UTC ISO 8601 with `Z`; `*_local` fields are naive local times; ' +
        'lists are newest first. Validation errors answer 422 `{"detail":[{"loc","msg","type"}]}`; other ' +
        'errors `{"detail": "…"}`. Text that cannot be stored is refused in every field (422 with its `loc`): ' +
        'a NUL character (`string_nul`), a lone UTF-16 surrogate (`string_unicode`), JSON nested over 64 levels ' +
        '(`value_error.depth`). Every number has a bound (its `maximum`, or its description where the bound depends on another ' +
        'parameter): past it the answer is 422 naming it, before any work starts. A computed answer (curves, frames, the model) ' +
        'that takes longer than COMPUTE_TIMEOUT_MS (30 s by default) is 503 with `Retry-After`, and its computation is stopped; ' +
        'so is one whose client closes the connection first. While PostgreSQL, Redis or the object store holding the files is out of reach, ' +
        'a request that needs it is 503 with `Retry-After` and stores nothing (an upload answered 202 had its file stored first); ' +
        'a file removed from the object store outside the service is 404 for its own routes and 409 naming the activity for a curve ' +
        'that needs it. A resource that is absent or belongs to another user is 404. Each credential ' +
        "(an application's grant, a personal token, a web session) may make API_RATE_LIMIT requests (3,000 by default) per " +
        'API_RATE_WINDOW_SECONDS (60): every answer carries `RateLimit-Policy`, `RateLimit-Limit`, `RateLimit-Remaining` and ' +
        '`RateLimit-Reset`; past the limit 429 with `Retry-After`. Every ' +
        'response carries `x-request-id`. The token and revocation endpoints answer RFC 6749 errors ' +
        '(`{"error","error_description"}`) instead.\n\n' +
        'Authorization: the code flow at `/oauth/authorize` (PKCE S256, or a client secret), tokens at ' +
        '`/api/v1/oauth/token`; discovery at `/.well-known/openid-configuration`. Access tokens last 15 minutes; ' +
        'GETs of user data need `data:read`, writes `data:write`; application management needs a first-party ' +
        'credential (the web session or a personal token).\n\n' +
        'CORS: `/api/v1/…` (with the token, revocation and userinfo endpoints), `/oauth/token`, `/oauth/revoke`, ' +
        '`/.well-known/…` and this document answer any origin (`Access-Control-Allow-Origin: *`, preflights 204 without a token, ' +
        'max-age 2 h; `refreshed-token`, `ETag`, `Link`, `Location`, `Retry-After`, `RateLimit-*`, `Content-Disposition`, ' +
        '`WWW-Authenticate`, `Deprecation` and `x-request-id` exposed), error answers included. `Access-Control-Allow-Credentials` is never sent: ' +
        'a browser app authenticates with `Authorization: Bearer` (a public client with PKCE), never with the session cookie. ' +
        'Web pages and forms are same-origin only.\n\n' +
        'Caching: every answer to a request with a credential carries `Cache-Control`: `private, no-cache` beside an `ETag` ' +
        '(revalidate with `If-None-Match`), `no-store` otherwise (downloads, pages, errors); token answers `no-store`.',
    },
    servers: [{ url: info.baseUrl }],
    tags: TAGS,
    paths,
    webhooks: { event: webhookOperation(toSchema) },
    components: {
      schemas: components,
      headers: { [REFRESHED_TOKEN_HEADER]: sessionHeaders.component },
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'An access token (RS256 JWT, 15 minutes).' },
        oauth2: oauth2Scheme(info.baseUrl),
        cookie: {
          type: 'apiKey',
          in: 'cookie',
          name: 'token',
          description:
            'The first-party web session. When its access token has expired, the answer carries the new one in the `refreshed-token` header.',
        },
        basic: { type: 'http', scheme: 'basic', description: 'Client authentication at the token endpoint.' },
      },
    },
  };
}

/** What an application's webhook endpoint receives (docs/app-developers.md, "Webhooks"; workers/webhooks.ts sends it). */
export const WebhookEvent = z
  .object({
    user_id: z.string().describe('The user whose data changed (the `sub` of their tokens)'),
    event_type: z
      .enum([...EVENT_TYPES, TEST_EVENT])
      .describe(
        "`activity_updated`: its stored curves changed on a recompute, or it was re-derived from its original under new ingest rules with a change; `test`: sent from Settings by the application's owner",
      ),
    resource_id: z.string().describe('The activity, trace, test or source id (the application id for the `test` event of Settings)'),
    timestamp: z.string().describe('When the change happened, UTC `Z`'),
    actor_id: z
      .string()
      .nullable()
      .describe(
        'Who made the change when it was made for the user through a delegated token (a coach, a manager: docs/coaching.md); null when the user made it',
      ),
  })
  .meta({ id: 'WebhookEvent' });

function webhookOperation(toSchema: (s: z.ZodType, io: 'input' | 'output') => JsonSchema) {
  return {
    post: {
      operationId: 'webhook_event',
      summary: 'A change to the data of a user who authorized your application',
      description:
        "POSTed to each of the application's `webhook_endpoints` for every change of a user who has authorized it (a consent exists; " +
        "revoking it stops deliveries, including pending retries). The body carries ids only: read the resource with the user's token. " +
        '`X-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(webhook_secret, "<t>.<raw body>")>` — verify it over the raw bytes and ' +
        'reject old `t` values. `X-Event-Id` is the same on every attempt and endpoint of one event: use it to drop duplicates (delivery ' +
        'is at least once). Any 2xx within 5 s is success; otherwise the attempt is repeated after 10 s, 20 s, 40 s, … until the next wait ' +
        'would exceed 24 hours (15 attempts). Redirects are not followed; only the first 512 bytes of a response are kept for the ' +
        'delivery log in Settings. Endpoints must be https on hosts that resolve to public addresses only.',
      tags: ['webhooks'],
      parameters: [
        { name: 'X-Signature', in: 'header', required: true, schema: { type: 'string' }, description: '`t=<unix>,v1=<hex HMAC-SHA256>`' },
        {
          name: 'X-Event-Id',
          in: 'header',
          required: true,
          schema: { type: 'string' },
          description: 'The event id, stable across retries',
        },
        { name: 'X-Event-Type', in: 'header', required: true, schema: { type: 'string' }, description: "The body's `event_type`" },
      ],
      requestBody: { required: true, content: { 'application/json': { schema: toSchema(WebhookEvent, 'output') } } },
      responses: { '2XX': { description: 'Received' } },
    },
  };
}

function operation(spec: RouteSpec, toSchema: (s: z.ZodType, io: 'input' | 'output') => JsonSchema, methodSuffix?: string) {
  const parameters = [
    ...objectParameters(spec.params, 'path', toSchema),
    ...objectParameters(spec.query ?? spec.oauthQuery, 'query', toSchema),
  ];
  const responses: Record<string, unknown> = {};
  for (const [status, r] of Object.entries(spec.responses)) {
    let content: Record<string, unknown> | undefined = r.schema
      ? { [r.contentType ?? 'application/json']: { schema: toSchema(r.schema, 'output') } }
      : r.contentType
        ? { [r.contentType]: { schema: { type: 'string', format: 'binary' } } }
        : undefined;
    if (r.alternatives) {
      content ??= {};
      for (const [type, schema] of Object.entries(r.alternatives))
        content[type] = { schema: schema ? toSchema(schema, 'output') : { type: 'string', format: 'binary' } };
    }
    let headers: Record<string, unknown> | undefined = r.headers
      ? Object.fromEntries(Object.entries(r.headers).map(([h, description]) => [h, { description, schema: { type: 'string' } }]))
      : undefined;
    if (Number(status) < 400 && sessionHeaders.appliesTo(spec)) headers = { ...headers, [REFRESHED_TOKEN_HEADER]: sessionHeaders.ref };
    responses[status] = { description: r.description, ...(content ? { content } : {}), ...(headers ? { headers } : {}) };
  }
  if (spec.query || spec.body || spec.params || spec.multipartForm) {
    responses[String(spec.validationStatus ?? 422)] ??= {
      description: 'Validation error',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/HTTPValidationError' } } },
    };
  }
  if (spec.auth !== 'none') {
    responses['401'] ??= { description: 'Missing, expired or invalid token (WWW-Authenticate: Bearer error="invalid_token")' };
    if (spec.auth.scopes.length) responses['403'] ??= { description: `Scope missing (${spec.auth.scopes.join(', ')})` };
  }
  return {
    operationId: methodSuffix ? `${spec.operationId}_${methodSuffix}` : spec.operationId,
    summary: spec.summary,
    ...(spec.description ? { description: spec.description } : {}),
    tags: spec.tags,
    ...(spec.deprecated ? { deprecated: true } : {}),
    ...(parameters.length ? { parameters } : {}),
    ...(spec.body ? { requestBody: { required: true, content: { 'application/json': { schema: toSchema(spec.body, 'input') } } } } : {}),
    ...(spec.oauthForm
      ? { requestBody: { required: true, content: { 'application/x-www-form-urlencoded': { schema: toSchema(spec.oauthForm, 'input') } } } }
      : {}),
    ...(spec.multipartForm
      ? { requestBody: { required: true, content: { 'multipart/form-data': { schema: toSchema(spec.multipartForm, 'input') } } } }
      : {}),
    responses,
    security: spec.security ?? operationSecurity(spec.auth),
  };
}

function objectParameters(schema: z.ZodObject | undefined, where: 'path' | 'query', toSchema: (s: z.ZodType, io: 'input') => JsonSchema) {
  if (!schema) return [];
  return Object.entries(schema.shape).map(([name, field]) => {
    const f = field as z.ZodType;
    const description = z.globalRegistry.get(f)?.description;
    return {
      name,
      in: where,
      required: where === 'path' || !f.safeParse(undefined).success,
      ...(description ? { description } : {}),
      schema: toSchema(f, 'input'),
    };
  });
}

function rewriteRefs(schema: JsonSchema): JsonSchema {
  return JSON.parse(JSON.stringify(schema).replaceAll('"#/$defs/', '"#/components/schemas/'));
}

/** The shared 422 body schema, referenced by every operation that validates input. */
export const ValidationErrorSchema = z
  .object({ loc: z.array(z.union([z.string(), z.number()])), msg: z.string(), type: z.string() })
  .meta({ id: 'ValidationError' });
export const HTTPValidationErrorSchema = z.object({ detail: z.array(ValidationErrorSchema) }).meta({ id: 'HTTPValidationError' });
export const ErrorSchema = z.object({ detail: z.string() }).meta({ id: 'Error' });
