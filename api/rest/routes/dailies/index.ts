import type { Route } from '../../../http/route.ts';
import { deleteDailyRoute, getDailiesRoute, upsertDailyRoute } from './measure.ts';

/** /api/v1/dailies/{measure}, in the order the OpenAPI document lists them. */
export const dailyRoutes: Route[] = [upsertDailyRoute, getDailiesRoute, deleteDailyRoute];
