import { ownedAppMetadataRoutes } from '../../app-metadata.ts';
import { ActivityParams, ownActivity } from './activity.ts';

export { APP_METADATA_MAX_BYTES, APP_METADATA_MAX_DEPTH, checkAppMetadata, jsonDepth } from '../../app-metadata.ts';

export const [putActivityAppMetadataRoute, deleteActivityAppMetadataRoute] = ownedAppMetadataRoutes({
  owner: 'activity',
  path: '/api/v1/activities/{activity_id}',
  params: ActivityParams,
  tag: 'activities',
  own: async (ctx, params) => (await ownActivity(ctx, params.activity_id)).id,
});
