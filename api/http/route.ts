import type { z } from 'zod';
import type { Ctx, Mw } from './context.ts';
import { BadRequest, UnprocessableEntity, validationItems, type ValidationItem } from '../services/errors.ts';
import { authenticate, type AuthRequirement } from './authenticate.ts';
import { rateLimit } from './rate-limit.ts';
import { textIssues } from '../../lib/text.ts';

type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface ResponseSpec {
  description: string;
  /** Body schema (JSON unless `contentType` says otherwise; for NDJSON, the schema of one line); omit for empty bodies. */
  schema?: z.ZodType;
  /** Non-JSON media types (Parquet, NDJSON, files); without `schema`, documented as binary. */
  contentType?: string;
  headers?: Record<string, string>;
  /** Further media types of the same response (content negotiation), each with its schema (binary when undefined). */
  alternatives?: Record<string, z.ZodType | undefined>;
}

/**
 * One endpoint: the single source of its validation, its handler's input types and its OpenAPI
 * operation. `path` is written the OpenAPI way (`/api/v1/activities/{activity_id}`).
 */
export interface RouteSpec {
  method: HttpMethod | HttpMethod[];
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  auth: AuthRequirement;
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: z.ZodType;
  /** Status of a validation failure: 422, or 400 where the API has always said so (an application page's slug). */
  validationStatus?: 400 | 422;
  /**
   * A form-encoded body the handler validates itself (the OAuth endpoints answer RFC 6749 errors,
   * not 422): documented in OpenAPI, not checked by the route.
   */
  oauthForm?: z.ZodObject;
  /** A multipart/form-data body the handler reads itself (file uploads): documented only. */
  multipartForm?: z.ZodObject;
  /** Query parameters the handler validates itself (the authorization endpoint): documented only. */
  oauthQuery?: z.ZodObject;
  /** OpenAPI security requirements, when the `auth` default does not describe them. */
  security?: Record<string, string[]>[];
  responses: Record<number, ResponseSpec>;
  deprecated?: boolean;
}

type Out<T> = T extends z.ZodType ? z.output<T> : Record<string, never>;
export interface Input<S extends RouteSpec> {
  params: Out<S['params']>;
  query: Out<S['query']>;
  body: Out<S['body']>;
}

export interface Route {
  spec: RouteSpec;
  /** Named steps: authenticate → rateLimit → validate → handle (their names show in stack traces). */
  middleware: Mw[];
}

export function defineRoute<const S extends RouteSpec>(spec: S, handler: (ctx: Ctx, input: Input<S>) => Promise<void> | void): Route {
  const validate: Mw = async function validateRequest(ctx, next) {
    // Text PostgreSQL cannot store (NUL, lone surrogates) and over-deep JSON, in every field: the
    // OAuth endpoints check their own forms and queries (RFC 6749 errors) and ignore the rest.
    const problems: ValidationItem[] = [
      ...unstorable(ctx.params, 'path'),
      ...(spec.oauthQuery || spec.oauthForm ? [] : unstorable(ctx.query, 'query')),
      ...(spec.oauthForm || spec.multipartForm ? [] : unstorable(ctx.request.body, 'body')),
    ];
    if (problems.length) throw spec.validationStatus === 400 ? new BadRequest(problems) : new UnprocessableEntity(problems);
    ctx.state.input = {
      params: parse(spec.params, ctx.params, 'path', problems),
      query: parse(spec.query, ctx.query, 'query', problems),
      body: parse(spec.body, ctx.request.body, 'body', problems),
    };
    if (problems.length) throw spec.validationStatus === 400 ? new BadRequest(problems) : new UnprocessableEntity(problems);
    await next();
  };
  const handle: Mw = async function handleRequest(ctx) {
    await handler(ctx, ctx.state.input as Input<S>);
  };
  return { spec, middleware: [authenticate(spec.auth), rateLimit, validate, handle] };
}

function unstorable(value: unknown, source: 'path' | 'query' | 'body'): ValidationItem[] {
  return textIssues(value).map((issue) => ({ loc: [source, ...issue.path], msg: issue.msg, type: issue.type }));
}

function parse(schema: z.ZodType | undefined, value: unknown, source: 'path' | 'query' | 'body', problems: ValidationItem[]) {
  if (!schema) return {};
  const result = schema.safeParse(value ?? (source === 'body' ? undefined : {}), { reportInput: true });
  if (result.success) return result.data;
  problems.push(...validationItems(result.error, source));
  return undefined;
}

/** `/a/{id}/b` → `/a/:id/b` for the router. */
export function routerPath(path: string): string {
  return path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');
}

declare module './context.ts' {
  interface AppState {
    input?: unknown;
  }
}
