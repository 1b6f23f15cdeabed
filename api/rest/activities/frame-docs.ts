import { z } from 'zod';
import { PARQUET_MEDIA_TYPE } from './content-negotiation.ts';
import type { ResponseSpec } from '../../http/route.ts';
import { VALIDATOR_HEADERS } from '../conditional.ts';
import { CONTENT_ENCODING_HEADER } from '../../http/middleware/compression.ts';

/** Column-oriented JSON of a frame: one array per column, in column order. */
export const FrameJson = z.record(z.string(), z.array(z.union([z.number(), z.string(), z.null()]))).meta({
  description:
    'Column-oriented frame: `{"column": [values…], …}`; instants as `…Z` strings, local times without offset, missing values null',
});

/** A frame response: Parquet (zstd) by default, column-oriented JSON on request; validated (ETag, 304: api/rest/conditional.ts). */
export function frameResponse(description: string, headers?: Record<string, string>): ResponseSpec {
  const disposition = {
    'Content-Disposition': 'Parquet answers: `attachment; filename="<what>.parquet"` (the path after /api/v1/activities/ joined with `-`)',
  };
  return {
    description,
    contentType: PARQUET_MEDIA_TYPE,
    alternatives: { 'application/json': FrameJson },
    headers: { ...disposition, ...VALIDATOR_HEADERS, 'Content-Encoding': CONTENT_ENCODING_HEADER, ...headers },
  };
}
