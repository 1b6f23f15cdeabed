import { z } from 'zod';
import type { Ctx } from '../http/context.ts';
import { defineRoute, type ResponseSpec, type Route } from '../http/route.ts';
import { PayloadTooLarge, UnprocessableEntity } from '../services/errors.ts';
import { deleteAppMetadata, putAppMetadata, type AppMetadataOwner } from '../../db/app-metadata.ts';

/** docs/app-developers.md, "App metadata": at most 1 KB on activities and traces, 4 KB on the profile, 32 levels deep. */
export const APP_METADATA_MAX_BYTES = 1024;
export const PROFILE_APP_METADATA_MAX_BYTES = 4096;
export const APP_METADATA_MAX_DEPTH = 32;

/** Nesting depth of a JSON value: 1 for an object of scalars. */
function jsonDepth(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  let deepest = 0;
  for (const child of Object.values(value)) deepest = Math.max(deepest, jsonDepth(child));
  return deepest + 1;
}

/**
 * Check an app-metadata body: a JSON object of at most `maxBytes` (serialised, UTF-8) and
 * `APP_METADATA_MAX_DEPTH` levels; 422 when it is not an object or too deep, 413 when too large.
 */
function checkAppMetadata(contentIsJson: boolean, body: unknown, maxBytes: number): Record<string, unknown> {
  const notObject = () => new UnprocessableEntity([{ loc: ['body'], msg: 'app_metadata must be a JSON object', type: 'type_error.dict' }]);
  if (!contentIsJson || body === null || typeof body !== 'object' || Array.isArray(body)) throw notObject();
  const size = Buffer.byteLength(JSON.stringify(body));
  if (size > maxBytes) throw new PayloadTooLarge(`app_metadata is ${size} bytes; at most ${maxBytes} are allowed`);
  if (jsonDepth(body) > APP_METADATA_MAX_DEPTH) {
    throw new UnprocessableEntity([
      { loc: ['body'], msg: `app_metadata may be at most ${APP_METADATA_MAX_DEPTH} levels deep`, type: 'value_error.depth' },
    ]);
  }
  return body as Record<string, unknown>;
}

const APP_ONLY = { scopes: ['data:write'], appOnly: true } as const;
/** How the descriptions say the size limit. */
const kb = (bytes: number) => `${bytes / 1024} KB`;

/**
 * PUT and DELETE `{path}/app-metadata` (activities, traces, the profile): `own` answers the owner's
 * id (the resource's, or the user's for the profile) or throws 404. Each application writes only its
 * own object; it needs an application token with data:write.
 */
export function appMetadataRoutes<P extends z.ZodObject>(opts: {
  owner: AppMetadataOwner;
  /** The owner's path, e.g. `/api/v1/traces/{trace_id}`. */
  path: string;
  /** What the metadata is on, for the summaries: "an activity", "the user's profile". */
  noun: string;
  params?: P;
  tag: string;
  maxBytes: number;
  own: (ctx: Ctx, params: z.output<P>) => Promise<string>;
}): [Route, Route] {
  const { owner, path, noun, params, tag, maxBytes, own } = opts;
  const note =
    'Needs an application token (one with `aud`) with data:write; first-party credentials get 403. Each application reads and ' +
    `writes only its own object, returned as \`app_metadata\` when that application reads ${noun}; other applications' objects stay.`;
  const notFound: Record<number, ResponseSpec> = params ? { 404: { description: `No such ${owner} of this user` } } : {};
  const put = defineRoute(
    {
      method: 'put',
      path: `${path}/app-metadata`,
      operationId: `put_${owner}_app_metadata`,
      summary: `Replace the calling application's metadata on ${noun}`,
      description: `${note} The body replaces the stored object: a JSON object of at most ${kb(maxBytes)} (413 beyond) and ${APP_METADATA_MAX_DEPTH} levels (422 beyond, as is anything but an object).`,
      tags: [tag],
      auth: APP_ONLY,
      ...(params ? { params } : {}),
      responses: {
        200: { description: 'The stored object', schema: z.record(z.string(), z.unknown()) },
        ...notFound,
        413: { description: `Larger than ${kb(maxBytes)}` },
        422: { description: 'Not a JSON object, or too deep' },
      },
    },
    async (ctx, input) => {
      const id = await own(ctx, input.params as z.output<P>);
      const data = checkAppMetadata(Boolean(ctx.is('json')), ctx.request.body, maxBytes);
      await putAppMetadata(ctx.deps.db, owner, id, ctx.state.principal!.clientId!, data, ctx.deps.now());
      ctx.body = data;
    },
  );
  const remove = defineRoute(
    {
      method: 'delete',
      path: `${path}/app-metadata`,
      operationId: `delete_${owner}_app_metadata`,
      summary: `Delete the calling application's metadata on ${noun}`,
      description: `${note} Answers 204 whether or not there was any.`,
      tags: [tag],
      auth: APP_ONLY,
      ...(params ? { params } : {}),
      responses: { 204: { description: 'Deleted' }, ...notFound },
    },
    async (ctx, input) => {
      const id = await own(ctx, input.params as z.output<P>);
      await deleteAppMetadata(ctx.deps.db, owner, id, ctx.state.principal!.clientId!);
      ctx.status = 204;
    },
  );
  return [put, remove];
}
