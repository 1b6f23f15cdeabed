import type { Ctx } from '../http/context.ts';

/**
 * `Link` (RFC 8288) on the offset-paginated lists: `rel="next"` unless this is the last page,
 * `rel="prev"` unless it is the first, and `rel="first"`. A list reads one row more than its `limit`
 * to know whether a next page exists (no count). The URLs are absolute, on BASE_URL (the service's
 * public address, also its token issuer: a proxy's internal address never leaks), with the path
 * and every query parameter as the client sent them, `offset` (and `limit` when given) replaced.
 */
export interface Page {
  limit: number;
  offset: number;
  /** Whether rows follow this page. */
  more: boolean;
}

/** Read one row more than the page holds: `rows` as read with `limit + 1`, cut to the page. */
export function pageOf<T>(rows: T[], limit: number): { rows: T[]; more: boolean } {
  return rows.length > limit ? { rows: rows.slice(0, limit), more: true } : { rows, more: false };
}

export function setPageLinks(ctx: Ctx, { limit, offset, more }: Page): void {
  const base = ctx.deps.config.BASE_URL.replace(/\/+$/, '');
  const at = (to: number) => {
    const query = new URLSearchParams(ctx.querystring);
    query.set('offset', String(to));
    if (query.has('limit')) query.set('limit', String(limit));
    return `<${base}${ctx.path}?${query.toString()}>`;
  };
  const links = [`${at(0)}; rel="first"`];
  if (offset > 0) links.push(`${at(Math.max(0, offset - limit))}; rel="prev"`);
  if (more) links.push(`${at(offset + limit)}; rel="next"`);
  ctx.set('Link', links.join(', '));
}

/** The `Link` header of a paginated list, for the route specs (OpenAPI). */
export const LINK_HEADER =
  'Pagination (RFC 8288): `<…offset=N…>; rel="next"` unless this is the last page, `rel="prev"` unless it is the first, and `rel="first"`; ' +
  "absolute URLs on the service's base URL, keeping every other query parameter";
