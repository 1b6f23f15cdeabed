import { constants } from 'node:zlib';
import compress from 'koa-compress';
import type { Mw } from '../context.ts';

/**
 * Response compression (koa-compress), negotiated on `Accept-Encoding`: br (quality 4) or gzip
 * (level 6), the client's preference first and br on a tie; fast levels, so a 2 MB JSON frame costs
 * milliseconds, not tens of them. Every answer says `Vary: Accept-Encoding`.
 *
 * - Compressed: JSON (API bodies, `/openapi.json`, frames as JSON), NDJSON, HTML, CSS, JavaScript
 *   (the Swagger UI bundle, /static) and other text (a CSV original file), when the body is at least
 *   THRESHOLD bytes or of unknown length (a stream).
 * - Not compressed: Parquet (already zstd), FIT original files (compact binary records: gzip saves
 *   little on them and the download keeps its Content-Length), images, HEAD, 204/304, small bodies,
 *   requests without `Accept-Encoding` (identity), and anything else binary.
 * - NDJSON streams (the backfill progress) flush after every write (gzip `Z_SYNC_FLUSH`, brotli
 *   `BROTLI_OPERATION_FLUSH`), so each line reaches the client when it is written; other streams
 *   (longitudinal JSON) compress in blocks.
 * - A compressed answer's strong ETag becomes weak (`W/"…"`, as nginx does): its bytes differ per
 *   coding. If-None-Match compares weakly (api/conditional.ts), so either form revalidates.
 * - BREACH (guessing a secret from compressed sizes over many requests that reflect a guess) finds
 *   no secret to guess: API reads hold the user's data but no credential (tokens travel in headers;
 *   the token endpoint's answers need the client's code or refresh token, which a third party does
 *   not have), secrets shown once are answers to POSTs (the SameSite=Lax cookie is not sent on
 *   cross-site POSTs), and the consent page's ticket is single-use.
 * - A JSON object body is serialised twice (Koa measures it for the threshold, then koa-compress
 *   encodes it); the large polled bodies (cached pages, frames, tagged JSON) are Buffers already.
 */
export const THRESHOLD = 1024;
/** Fast levels: a 2 MB frame in tens of milliseconds (the read cache codes its pages with the same). */
export const GZIP_LEVEL = 6;
export const BR_QUALITY = 4;
const COMPRESSIBLE = /^(?:text\/[\w.+-]+|application\/(?:json|x-ndjson|javascript|xml|[\w.-]+\+(?:json|xml))|image\/svg\+xml)$/i;
const NDJSON = 'application/x-ndjson';

/** `Content-Encoding` of a compressible answer, for the route specs (OpenAPI). */
export const CONTENT_ENCODING_HEADER =
  '`br` or `gzip` as `Accept-Encoding` allows (JSON, NDJSON, text from 1 KiB; never Parquet), with `Vary: Accept-Encoding`; absent when sent as is';

export function compression(): Mw {
  const encode = compress({
    filter: (type) => COMPRESSIBLE.test(type),
    threshold: THRESHOLD,
    gzip: (type) => ({ level: GZIP_LEVEL, ...(type === NDJSON ? { flush: constants.Z_SYNC_FLUSH } : {}) }),
    br: (type) => ({ params: { [constants.BROTLI_PARAM_QUALITY]: BR_QUALITY }, ...(type === NDJSON ? { flush: constants.BROTLI_OPERATION_FLUSH } : {}) }),
    // gzip and br only, whatever zlib of this Node offers (Node 22 has zstd).
    deflate: false,
    zstd: false,
  });
  return async function compression(ctx, next) {
    await encode(ctx, next);
    // Again after the answer: the error handler drops the headers an answer had before an error.
    ctx.vary('Accept-Encoding');
    const etag = ctx.response.get('ETag');
    if (etag && !etag.startsWith('W/') && ctx.response.get('Content-Encoding')) ctx.set('ETag', `W/${etag}`);
  };
}
