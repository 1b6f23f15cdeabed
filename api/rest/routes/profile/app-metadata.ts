import { z } from 'zod';
import { defineRoute } from '../../../http/route.ts';
import { appMetadataRoutes, PROFILE_APP_METADATA_MAX_BYTES } from '../../app-metadata.ts';
import { appMetadataOf } from '../../../../db/app-metadata.ts';

const NOTE =
  'Needs an application token (one with `aud`); first-party credentials (the web session, personal tokens) get 403. Each application ' +
  "reads only its own object on the user's profile (our addition: SPEC gives no way to read it back).";

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

export const [putProfileAppMetadataRoute, deleteProfileAppMetadataRoute] = appMetadataRoutes({
  owner: 'profile',
  path: '/api/v1/profile',
  noun: "the user's profile",
  tag: 'profile',
  maxBytes: PROFILE_APP_METADATA_MAX_BYTES,
  own: async (ctx) => ctx.state.principal!.userId,
});
