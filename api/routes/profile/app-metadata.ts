import { z } from 'zod';
import { defineRoute } from '../../route.ts';
import { checkAppMetadata } from '../activities/app-metadata.ts';
import { appMetadataOf, deleteAppMetadata, putAppMetadata } from '../../../db/app-metadata.ts';

/** API.md "App metadata": the profile's object may be larger than an activity's or a trace's. */
export const PROFILE_APP_METADATA_MAX_BYTES = 4096;

const NOTE =
  'Needs an application token (one with `aud`); first-party credentials (the web session, personal tokens) get 403. Each application ' +
  "reads and writes only its own object on the user's profile; other applications' objects are never visible.";

const Metadata = z.record(z.string(), z.unknown());

export const getProfileAppMetadataRoute = defineRoute(
  {
    method: 'get',
    path: '/api/v1/profile/app-metadata',
    operationId: 'get_profile_app_metadata',
    summary: "The calling application's metadata on the user's profile",
    description: `${NOTE} Needs data:read. Answers 200 with the stored object, or with JSON \`null\` when this application has none.`,
    tags: ['profile'],
    auth: { scopes: ['data:read'], appOnly: true },
    responses: {
      200: { description: 'The stored object, or null', schema: Metadata.nullable() },
      403: { description: 'Scope data:read missing, or not an application token' },
    },
  },
  async (ctx) => {
    const { userId, clientId } = ctx.state.principal!;
    const found = await appMetadataOf(ctx.deps.db, 'profile', clientId, [userId]);
    const data = found.get(userId);
    if (data === undefined) {
      ctx.type = 'json';
      ctx.body = 'null';
      return;
    }
    ctx.body = data;
  },
);

export const putProfileAppMetadataRoute = defineRoute(
  {
    method: 'put',
    path: '/api/v1/profile/app-metadata',
    operationId: 'put_profile_app_metadata',
    summary: "Replace the calling application's metadata on the user's profile",
    description:
      `${NOTE} Needs data:write. The body replaces the stored object: a JSON object (anything else → 422) of at most 4 KB serialised ` +
      '(413 beyond) and 32 levels deep (422 beyond). Answers 200 with the stored object.',
    tags: ['profile'],
    auth: { scopes: ['data:write'], appOnly: true },
    responses: {
      200: { description: 'The stored object', schema: Metadata },
      403: { description: 'Scope data:write missing, or not an application token' },
      413: { description: 'Larger than 4 KB' },
      422: { description: 'Not a JSON object, or deeper than 32 levels' },
    },
  },
  async (ctx) => {
    const { userId, clientId } = ctx.state.principal!;
    const data = checkAppMetadata(Boolean(ctx.is('json')), ctx.request.body, PROFILE_APP_METADATA_MAX_BYTES);
    await putAppMetadata(ctx.deps.db, 'profile', userId, clientId!, data, ctx.deps.now());
    ctx.body = data;
  },
);

export const deleteProfileAppMetadataRoute = defineRoute(
  {
    method: 'delete',
    path: '/api/v1/profile/app-metadata',
    operationId: 'delete_profile_app_metadata',
    summary: "Delete the calling application's metadata on the user's profile",
    description: `${NOTE} Needs data:write. Answers 204 whether or not there was any; other applications' objects stay.`,
    tags: ['profile'],
    auth: { scopes: ['data:write'], appOnly: true },
    responses: {
      204: { description: 'Deleted' },
      403: { description: 'Scope data:write missing, or not an application token' },
    },
  },
  async (ctx) => {
    const { userId, clientId } = ctx.state.principal!;
    await deleteAppMetadata(ctx.deps.db, 'profile', userId, clientId!);
    ctx.status = 204;
  },
);
