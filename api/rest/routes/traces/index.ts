import type { Route } from '../../../http/route.ts';
import { listTracesRoute } from './list.ts';
import { createTraceRoute, deleteTraceRoute, getTraceRoute, replaceTraceRoute } from './trace.ts';
import { deleteTraceAppMetadataRoute, putTraceAppMetadataRoute } from './app-metadata.ts';

/** /api/v1/traces…, in the order the OpenAPI document lists them. */
export const traceRoutes: Route[] = [
  listTracesRoute,
  createTraceRoute,
  getTraceRoute,
  replaceTraceRoute,
  deleteTraceRoute,
  putTraceAppMetadataRoute,
  deleteTraceAppMetadataRoute,
];
