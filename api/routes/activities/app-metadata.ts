import { z } from 'zod';
import { defineRoute } from '../../route.ts';
import { PayloadTooLarge, UnprocessableEntity } from '../../errors.ts';
import { ActivityParams, ownActivity } from './activity.ts';
import { deleteAppMetadata, putAppMetadata } from '../../../db/activities.ts';

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
 * Check an app-metadata body (API.md): a JSON object of at most `maxBytes` (serialised, UTF-8) and
 * `APP_METADATA_MAX_DEPTH` levels. Shared with traces and the profile.
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

const APP_ONLY = { scopes: ['data:write'], appOnly: true } as const;
const NOTE =
  'Needs an application token (one with `aud`) with data:write; first-party credentials get 403. Each application reads and ' +
  'writes only its own object, returned as `app_metadata` when that application reads the activity.';

export const putActivityAppMetadataRoute = defineRoute(
  {
    method: 'put',
    path: '/api/v1/activities/{activity_id}/app-metadata',
    operationId: 'put_activity_app_metadata',
    summary: "Replace the calling application's metadata on an activity",
    description: `${NOTE} The body replaces the stored object: a JSON object of at most 1 KB (413 beyond) and 32 levels (422 beyond).`,
    tags: ['activities'],
    auth: APP_ONLY,
    params: ActivityParams,
    responses: {
      200: { description: 'The stored object', schema: z.record(z.string(), z.unknown()) },
      404: { description: 'No such activity of this user' },
      413: { description: 'Larger than 1 KB' },
    },
  },
  async (ctx, { params }) => {
    const activity = await ownActivity(ctx, params.activity_id);
    const data = checkAppMetadata(Boolean(ctx.is('json')), ctx.request.body, APP_METADATA_MAX_BYTES);
    await putAppMetadata(ctx.deps.db, activity.id, ctx.state.principal!.clientId!, data, ctx.deps.now());
    ctx.body = data;
  },
);

export const deleteActivityAppMetadataRoute = defineRoute(
  {
    method: 'delete',
    path: '/api/v1/activities/{activity_id}/app-metadata',
    operationId: 'delete_activity_app_metadata',
    summary: "Delete the calling application's metadata on an activity",
    description: `${NOTE} Answers 204 whether or not there was any.`,
    tags: ['activities'],
    auth: APP_ONLY,
    params: ActivityParams,
    responses: { 204: { description: 'Deleted' }, 404: { description: 'No such activity of this user' } },
  },
  async (ctx, { params }) => {
    const activity = await ownActivity(ctx, params.activity_id);
    await deleteAppMetadata(ctx.deps.db, activity.id, ctx.state.principal!.clientId!);
    ctx.status = 204;
  },
);
