import { APP_METADATA_MAX_BYTES, appMetadataRoutes } from '../../app-metadata.ts';
import { ownTest, TestParams } from './test.ts';

export const [putTestAppMetadataRoute, deleteTestAppMetadataRoute] = appMetadataRoutes({
  owner: 'test',
  path: '/api/v1/tests/{test_id}',
  noun: 'a test',
  params: TestParams,
  tag: 'tests',
  maxBytes: APP_METADATA_MAX_BYTES,
  own: async (ctx, params) => (await ownTest(ctx, params.test_id)).id,
});
