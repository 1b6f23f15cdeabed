import type { Route } from '../../../http/route.ts';
import { uploadRoute } from './upload.ts';
import { latestActivityRoute, listActivitiesRoute } from './list.ts';
import { backfillStatusRoute, startBackfillRoute } from './backfill.ts';
import { deleteActivityRoute, downloadActivityRoute, getActivityRoute } from './activity.ts';
import { deleteActivityAppMetadataRoute, putActivityAppMetadataRoute } from './app-metadata.ts';
import { activityDataRoute } from './data.ts';
import { activityMeanMaxRoute } from './mean-max.ts';
import { activityAwdRoute } from './awd.ts';
import { longitudinalDataRoute } from './longitudinal-data.ts';
import { longitudinalMeanMaxRoute } from './longitudinal-mean-max.ts';
import { longitudinalAwdRoute } from './longitudinal-awd.ts';
import { longitudinalTrainingLoadRoute } from './longitudinal-training-load.ts';
import { longitudinalZonesRoute } from './longitudinal-zones.ts';

/** The activity endpoints; fixed paths come before `{activity_id}` so the router tries them first. */
export const activityRoutes: Route[] = [
  listActivitiesRoute,
  latestActivityRoute,
  backfillStatusRoute,
  startBackfillRoute,
  longitudinalDataRoute,
  longitudinalMeanMaxRoute,
  longitudinalAwdRoute,
  longitudinalTrainingLoadRoute,
  longitudinalZonesRoute,
  uploadRoute,
  getActivityRoute,
  downloadActivityRoute,
  deleteActivityRoute,
  activityDataRoute,
  activityMeanMaxRoute,
  activityAwdRoute,
  putActivityAppMetadataRoute,
  deleteActivityAppMetadataRoute,
];
