import type { Route } from '../../../http/route.ts';
import { listTestsRoute } from './list.ts';
import { createTestRoute, deleteTestRoute, getTestRoute, replaceTestRoute } from './test.ts';
import { acceptTestAnalysisRoute, testAnalysisRoute } from './analysis.ts';
import { deleteTestAppMetadataRoute, putTestAppMetadataRoute } from './app-metadata.ts';

/** /api/v1/tests…, in the order the OpenAPI document lists them. */
export const testRoutes: Route[] = [
  listTestsRoute,
  createTestRoute,
  getTestRoute,
  replaceTestRoute,
  deleteTestRoute,
  testAnalysisRoute,
  acceptTestAnalysisRoute,
  putTestAppMetadataRoute,
  deleteTestAppMetadataRoute,
];
