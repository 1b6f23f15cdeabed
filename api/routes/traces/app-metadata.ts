import { ownedAppMetadataRoutes } from '../../app-metadata.ts';
import { ownTrace, TraceParams } from './trace.ts';

export const [putTraceAppMetadataRoute, deleteTraceAppMetadataRoute] = ownedAppMetadataRoutes({
  owner: 'trace',
  path: '/api/v1/traces/{trace_id}',
  params: TraceParams,
  tag: 'traces',
  own: async (ctx, params) => (await ownTrace(ctx, params.trace_id)).id,
});
