import { APP_METADATA_MAX_BYTES, appMetadataRoutes } from '../../app-metadata.ts';
import { ownTrace, TraceParams } from './trace.ts';

export const [putTraceAppMetadataRoute, deleteTraceAppMetadataRoute] = appMetadataRoutes({
  owner: 'trace',
  path: '/api/v1/traces/{trace_id}',
  noun: 'a trace',
  params: TraceParams,
  tag: 'traces',
  maxBytes: APP_METADATA_MAX_BYTES,
  own: async (ctx, params) => (await ownTrace(ctx, params.trace_id)).id,
});
