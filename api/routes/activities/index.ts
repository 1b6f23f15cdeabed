import type { Route } from '../../route.ts';
import { uploadRoute } from './upload.ts';
import { latestActivityRoute, listActivitiesRoute } from './list.ts';
import { backfillStatusRoute, startBackfillRoute } from './backfill.ts';
import { deleteActivityRoute, downloadActivityRoute, getActivityRoute } from './activity.ts';
import { deleteActivityAppMetadataRoute, putActivityAppMetadataRoute } from './app-metadata.ts';

/** The activity endpoints; fixed paths come before `{activity_id}` so the router tries them first. */
export const activityRoutes: Route[] = [
  listActivitiesRoute,
  latestActivityRoute,
  backfillStatusRoute,
  startBackfillRoute,
  uploadRoute,
  getActivityRoute,
  downloadActivityRoute,
  deleteActivityRoute,
  putActivityAppMetadataRoute,
  deleteActivityAppMetadataRoute,
];
