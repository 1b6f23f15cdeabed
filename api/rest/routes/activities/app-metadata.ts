import { APP_METADATA_MAX_BYTES, appMetadataRoutes } from '../../app-metadata.ts';
import { ActivityParams, ownActivity } from './activity.ts';

export const [putActivityAppMetadataRoute, deleteActivityAppMetadataRoute] = appMetadataRoutes({
  owner: 'activity',
  path: '/api/v1/activities/{activity_id}',
  noun: 'an activity',
  params: ActivityParams,
  tag: 'activities',
  maxBytes: APP_METADATA_MAX_BYTES,
  own: async (ctx, params) => (await ownActivity(ctx, params.activity_id)).id,
});
