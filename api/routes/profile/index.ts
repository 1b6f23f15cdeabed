import type { Route } from '../../route.ts';
import { intensityDurationModelRoute } from './intensity-duration-model.ts';

export const profileRoutes: Route[] = [intensityDurationModelRoute];
