import type { Route } from '../../../http/route.ts';
import { intensityDurationModelRoute } from './intensity-duration-model.ts';
import { profileTagsRoute } from './tags.ts';
import { profileSportsRoute } from './sports.ts';
import { templateWeekRoute } from './template-week.ts';
import { profileStatusRoute } from './status.ts';
import { getThresholdsRoute, putThresholdsRoute } from './thresholds.ts';
import { getZonesRoute, putZonesRoute } from './zones.ts';
import { deleteProfileAppMetadataRoute, getProfileAppMetadataRoute, putProfileAppMetadataRoute } from './app-metadata.ts';

export const profileRoutes: Route[] = [
  profileTagsRoute,
  profileSportsRoute,
  templateWeekRoute,
  profileStatusRoute,
  getThresholdsRoute,
  putThresholdsRoute,
  getZonesRoute,
  putZonesRoute,
  intensityDurationModelRoute,
  getProfileAppMetadataRoute,
  putProfileAppMetadataRoute,
  deleteProfileAppMetadataRoute,
];
