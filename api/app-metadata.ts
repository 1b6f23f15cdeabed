import { z } from 'zod';
import type { Ctx } from './context.ts';
import { defineRoute, type Route } from './route.ts';
import { PayloadTooLarge, UnprocessableEntity } from './errors.ts';
import { deleteAppMetadata, putAppMetadata, type AppMetadataOwner } from '../db/app-metadata.ts';

/** API.md "App metadata": at most 1 KB on activities and traces (4 KB on the profile), 32 levels deep. */
export const APP_METADATA_MAX_BYTES = 1024;
export const APP_METADATA_MAX_DEPTH = 32;

/** Nesting depth of a JSON value: 1 for an object of scalars. */
export function jsonDepth(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  let deepest = 0;
  for (const child of Object.values(value)) deepest = Math.max(deepest, jsonDepth(child));
  return deepest + 1;
}

/**
 * Check an app-metadata body: a JSON object of at most `maxBytes` (serialised, UTF-8) and
 * `APP_METADATA_MAX_DEPTH` levels; 422 when it is not an object or too deep, 413 when too large.
 */
export function checkAppMetadata(contentIsJson: boolean, body: unknown, maxBytes: number): Record<string, unknown> {
  const notObject = () => new UnprocessableEntity([{ loc: ['body'], msg: 'app_metadata must be a JSON object', type: 'type_error.dict' }]);
  if (!contentIsJson || body === null || typeof body !== 'object' || Array.isArray(body)) throw notObject();
  const size = Buffer.byteLength(JSON.stringify(body));
  if (size > maxBytes) throw new PayloadTooLarge(`app_metadata is ${size} bytes; at most ${maxBytes} are allowed`);
  if (jsonDepth(body) > APP_METADATA_MAX_DEPTH) {
    throw new UnprocessableEntity([{ loc: ['body'], msg: `app_metadata may be at most ${APP_METADATA_MAX_DEPTH} levels deep`, type: 'value_error.depth' }]);
  }
  return body as Record<string, unknown>;
}

export const APP_ONLY = { scopes: ['data:write'], appOnly: true } as const;
export const APP_METADATA_NOTE =
  'Needs an application token (one with `aud`) with data:write; first-party credentials get 403. Each application reads and ' +
  'writes only its own object, returned as `app_metadata` when that application reads the resource.';

/**
 * PUT and DELETE `{resource path}/app-metadata` for a resource the caller owns (activities, traces):
 * `own` answers the resource's id or throws 404.
 */
export function ownedAppMetadataRoutes<P extends z.ZodObject>(opts: {
  owner: AppMetadataOwner;
  /** The resource's path, e.g. `/api/v1/traces/{trace_id}`. */
  path: string;
  params: P;
  tag: string;
  own: (ctx: Ctx, params: z.output<P>) => Promise<string>;
}): [Route, Route] {
  const { owner, path, params, tag, own } = opts;
  const notFound = { description: `No such ${owner} of this user` };
  const put = defineRoute(
    {
      method: 'put',
      path: `${path}/app-metadata`,
      operationId: `put_${owner}_app_metadata`,
      summary: `Replace the calling application's metadata on ${owner === 'activity' ? 'an' : 'a'} ${owner}`,
      description: `${APP_METADATA_NOTE} The body replaces the stored object: a JSON object of at most 1 KB (413 beyond) and 32 levels (422 beyond).`,
      tags: [tag],
      auth: APP_ONLY,
      params,
      responses: {
        200: { description: 'The stored object', schema: z.record(z.string(), z.unknown()) },
        404: notFound,
        413: { description: 'Larger than 1 KB' },
      },
    },
    async (ctx, input) => {
      const id = await own(ctx, input.params as z.output<P>);
      const data = checkAppMetadata(Boolean(ctx.is('json')), ctx.request.body, APP_METADATA_MAX_BYTES);
      await putAppMetadata(ctx.deps.db, owner, id, ctx.state.principal!.clientId!, data, ctx.deps.now());
      ctx.body = data;
    },
  );
  const remove = defineRoute(
    {
      method: 'delete',
      path: `${path}/app-metadata`,
      operationId: `delete_${owner}_app_metadata`,
      summary: `Delete the calling application's metadata on ${owner === 'activity' ? 'an' : 'a'} ${owner}`,
      description: `${APP_METADATA_NOTE} Answers 204 whether or not there was any.`,
      tags: [tag],
      auth: APP_ONLY,
      params,
      responses: { 204: { description: 'Deleted' }, 404: notFound },
    },
    async (ctx, input) => {
      const id = await own(ctx, input.params as z.output<P>);
      await deleteAppMetadata(ctx.deps.db, owner, id, ctx.state.principal!.clientId!);
      ctx.status = 204;
    },
  );
  return [put, remove];
}
