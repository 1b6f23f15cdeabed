import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import compress from 'koa-compress';
import type { Ctx, Mw } from '../context.ts';

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
 *   coding. If-None-Match compares weakly (api/rest/conditional.ts), so either form revalidates.
 * - BREACH (guessing a secret from compressed sizes over many requests that reflect a guess) finds
 *   no secret to guess: API reads hold the user's data but no credential (tokens travel in headers;
 *   the token endpoint's answers need the client's code or refresh token, which a third party does
 *   not have), secrets shown once are answers to POSTs (the SameSite=Lax cookie is not sent on
 *   cross-site POSTs), and the consent page's ticket is single-use.
 * - A JSON object body is serialised twice (Koa measures it for the threshold, then koa-compress
 *   encodes it); the large polled bodies (cached pages, frames, tagged JSON) are Buffers already.
 * - An answer with a strong ETag and a Buffer body (a polled page, a frame, a curve) is coded once per
 *   coding and the coding kept (CODED_MEMORY_BYTES, least recently used dropped first), keyed by the
 *   tag, which names exactly these bytes (api/rest/conditional.ts): a client that polls with
 *   `Accept-Encoding` costs no compression after the first poll. (Compressing the 86 KB activity list
 *   on every request cut its polled throughput from 4,705 to 1,530 req/s.) It is compressed in libuv's
 *   threads, off the event loop, at the same levels and with the same choice of coding.
 */
const THRESHOLD = 1024;
/** Fast levels: a 2 MB frame in tens of milliseconds. */
const GZIP_LEVEL = 6;
const BR_QUALITY = 4;
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
    br: (type) => ({
      params: { [constants.BROTLI_PARAM_QUALITY]: BR_QUALITY },
      ...(type === NDJSON ? { flush: constants.BROTLI_OPERATION_FLUSH } : {}),
    }),
    // gzip and br only, whatever zlib of this Node offers (Node 22 has zstd).
    deflate: false,
    zstd: false,
  });
  const coded = new CodedMemory(CODED_MEMORY_BYTES);
  return async function compression(ctx, next) {
    await encode(ctx, async () => {
      await next();
      await useKeptCoding(ctx, coded);
    });
    // Again after the answer: the error handler drops the headers an answer had before an error.
    ctx.vary('Accept-Encoding');
    const etag = ctx.response.get('ETag');
    if (etag && !etag.startsWith('W/') && ctx.response.get('Content-Encoding')) ctx.set('ETag', `W/${etag}`);
  };
}

/** The codings kept per process, in bytes. */
const CODED_MEMORY_BYTES = 32 * 1024 * 1024;
type Coding = 'br' | 'gzip';
const CODERS: Record<Coding, (body: Buffer) => Promise<Buffer>> = {
  br: (body) =>
    promisify(brotliCompress)(body, {
      params: { [constants.BROTLI_PARAM_QUALITY]: BR_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: body.length },
    }),
  gzip: (body) => promisify(gzip)(body, { level: GZIP_LEVEL }),
};

/** Coded bodies by `<coding> <strong ETag>`, least recently used dropped first past `limitBytes`. */
class CodedMemory {
  readonly #bodies = new Map<string, Buffer>();
  #bytes = 0;

  constructor(readonly limitBytes: number) {}

  get(key: string): Buffer | undefined {
    const body = this.#bodies.get(key);
    if (body) {
      this.#bodies.delete(key);
      this.#bodies.set(key, body);
    }
    return body;
  }

  put(key: string, body: Buffer): void {
    if (body.length > this.limitBytes || this.#bodies.has(key)) return;
    this.#bodies.set(key, body);
    this.#bytes += body.length;
    for (const [oldest, b] of this.#bodies) {
      if (this.#bytes <= this.limitBytes) break;
      this.#bodies.delete(oldest);
      this.#bytes -= b.length;
    }
  }
}

/** Send a tagged Buffer answer in its kept coding (made now when missing); koa-compress then leaves it. */
async function useKeptCoding(ctx: Ctx, coded: CodedMemory): Promise<void> {
  const etag = ctx.response.get('ETag');
  const body = ctx.body;
  if (!etag || etag.startsWith('W/') || !Buffer.isBuffer(body) || body.length < THRESHOLD || ctx.method !== 'GET' || ctx.status !== 200)
    return;
  if (ctx.response.get('Content-Encoding') || !COMPRESSIBLE.test(ctx.response.type)) return;
  const coding = codingFor(ctx.get('accept-encoding'));
  if (!coding) return;
  const key = `${coding} ${etag}`;
  let bytes = coded.get(key);
  if (!bytes) coded.put(key, (bytes = await CODERS[coding](body)));
  ctx.set('Content-Encoding', coding);
  ctx.body = bytes;
}

/**
 * The coding koa-compress would choose for these codings: the highest q, br on a tie; none when no
 * Accept-Encoding is sent or identity is preferred.
 */
function codingFor(acceptEncoding: string): Coding | undefined {
  if (!acceptEncoding) return undefined;
  const q = new Map<string, number>();
  for (const part of acceptEncoding.split(',')) {
    const [name = '', ...params] = part
      .trim()
      .toLowerCase()
      .split(';')
      .map((p) => p.trim());
    const weight = params.find((p) => p.startsWith('q='));
    const value = weight ? Number(weight.slice(2)) : 1;
    if (name) q.set(name, Number.isFinite(value) ? value : 0);
  }
  const of = (coding: string) => q.get(coding) ?? q.get('*') ?? 0;
  const best = Math.max(of('br'), of('gzip'));
  if (best <= 0 || (q.get('identity') ?? 0) > best) return undefined;
  return of('br') >= of('gzip') ? 'br' : 'gzip';
}
