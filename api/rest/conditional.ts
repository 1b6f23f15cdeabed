import { createHash } from 'node:crypto';
import type { Ctx } from '../http/context.ts';
import type { ResponseSpec } from '../http/route.ts';
import { readVersion } from '../../db/read-version.ts';

/**
 * Validators and conditional reads (RFC 9110 §8.8.3, §13.1.2) for the reads clients poll: lists,
 * `latest`, details, frames and curves.
 *
 * - A **version tag** is derived from what keys the caches (the user, their `read_version` or
 *   `data_version`, the path, the validated query and the representation: JSON or Parquet, the
 *   reading application where its app metadata shows), so a matching `If-None-Match` is answered
 *   304 before the body is looked up or computed. Every change the body shows bumps that version in
 *   the change's own transaction, and the version is read before the body is built, so a body is
 *   never older than its tag.
 * - A **body tag** (a hash of the JSON sent) is for reads without such a version (sources, dailies):
 *   the body is built, but a 304 saves sending it.
 *
 * Tags are strong (`"…"`, 32 base64url characters). A compressed answer carries its tag weak
 * (`W/"…"`, api/http/middleware/compression.ts): its bytes differ per coding. `If-None-Match` uses the weak
 * comparison, so the tag of a compressed and of an identity answer both revalidate.
 */

/** `Cache-Control` of every validated read: any cache may keep it for this user only, and must revalidate before each use. */
export const READ_CACHE_CONTROL = 'private, no-cache';

/**
 * Part of every version tag: bump it when a release changes how a representation is written
 * (a column, a rounding, a field), so that tags handed out before no longer match.
 */
const REPRESENTATION_GENERATION = 1;

const tagOf = (hash: ReturnType<typeof createHash>) => `"${hash.digest('base64url').slice(0, 32)}"`;

/** A strong tag naming the representation `parts` (the user, the version, the path, the query, the media type…) identify. */
export function versionTag(...parts: unknown[]): string {
  return tagOf(createHash('sha256').update(JSON.stringify([REPRESENTATION_GENERATION, ...parts])));
}

/**
 * The version tag of a read of activities or traces (lists, details): at the user's `read_version`
 * (db/read-version.ts: every change they show bumps it) for the reading application (each sees its own
 * app metadata). Call it before reading what the body shows, so that the body is never older than the tag.
 */
export async function readTag(ctx: Ctx, ...parts: unknown[]): Promise<string> {
  const { userId, clientId, readVersion: checked } = ctx.state.principal!;
  const version = checked ?? (await readVersion(ctx.deps.db, userId));
  return versionTag('reads', userId, version, clientId ?? null, ctx.path, ...parts);
}

/** A strong tag of exactly these bytes. */
export function bodyTag(body: Buffer): string {
  return tagOf(createHash('sha256').update(body));
}

/**
 * Mark this read with `etag` (and `Cache-Control: private, no-cache`); when the request's
 * `If-None-Match` names it, answer 304 with no body and return true: the caller then stops. The 304
 * repeats the tag in the form the request named it (`W/"…"` when the client holds a compressed
 * answer), so a cache updating its stored headers from the 304 keeps the tag its answer came with.
 */
export function notModified(ctx: Ctx, etag: string): boolean {
  ctx.set('ETag', etag);
  ctx.set('Cache-Control', READ_CACHE_CONTROL);
  const condition = ctx.get('if-none-match');
  const matched = condition ? matching(condition, etag) : undefined;
  if (!matched) return false;
  if (matched.startsWith('W/')) ctx.set('ETag', `W/${etag}`);
  ctx.status = 304;
  ctx.body = null;
  return true;
}

/** Send `value` as JSON with a body tag (304 when `If-None-Match` names it). */
export function sendTaggedJson(ctx: Ctx, value: unknown): void {
  const body = Buffer.from(JSON.stringify(value), 'utf8');
  if (notModified(ctx, bodyTag(body))) return;
  ctx.type = 'json';
  ctx.body = body;
}

/**
 * RFC 9110 §13.1.2, as the origin server: `*`, or any listed tag equal to ours by weak comparison
 * (`W/"x"` matches `"x"`); the listed tag that matched. (Not Koa's ctx.fresh, which, written for
 * caches, ignores the condition when the request says `Cache-Control: no-cache`, and fetch() adds that
 * to every request with an If-None-Match.)
 */
export function matching(condition: string, etag: string): string | undefined {
  if (condition.trim() === '*') return etag;
  const ours = etag.replace(/^W\//, '');
  return condition
    .split(',')
    .map((tag) => tag.trim())
    .find((tag) => tag.replace(/^W\//, '') === ours);
}

/** The response headers of a validated read, for the route specs (OpenAPI). */
export const VALIDATOR_HEADERS = {
  ETag:
    'A strong validator of this representation (`W/"…"` when the answer is compressed): send it in `If-None-Match` to be answered 304 ' +
    'without a body while nothing it shows changed',
  'Cache-Control':
    '`private, no-cache`: a cache may keep the answer for this user only, and must revalidate it (If-None-Match) before each use',
} as const;

export const NOT_MODIFIED: ResponseSpec = {
  description: 'Not Modified: `If-None-Match` named the current ETag (no body; the ETag and Cache-Control headers are sent)',
  headers: VALIDATOR_HEADERS,
};
