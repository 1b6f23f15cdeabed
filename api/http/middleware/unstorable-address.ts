import type { Mw } from '../context.ts';
import { HttpError } from '../../services/errors.ts';
import { textProblem } from '../../../lib/text.ts';

/**
 * The web pages' addresses: a path segment or query parameter with text PostgreSQL cannot store (a
 * NUL character; a lone surrogate cannot arrive percent-encoded) is answered 422 with an error page
 * naming it, before any handler looks it up. API operations check theirs in defineRoute (a 422 with
 * `loc`), and the OAuth endpoints their own (RFC 6749 errors), so `/api/` and `/oauth/` pass.
 */
export const refuseUnstorableAddress: Mw = async function refuseUnstorableAddress(ctx, next) {
  if (!ctx.path.startsWith('/api/') && !ctx.path.startsWith('/oauth/')) {
    const problem = addressProblem(ctx.path, ctx.query);
    if (problem) throw new HttpError(422, problem);
  }
  await next();
};

function addressProblem(path: string, query: Record<string, string | string[] | undefined>): string | undefined {
  for (const segment of path.split('/')) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      continue; // not decodable: the router will not match it as a parameter either
    }
    const p = textProblem(decoded);
    if (p) return `The address ${p}.`;
  }
  for (const [name, value] of Object.entries(query)) {
    const p = textProblem(name) ?? [value ?? ''].flat().map(textProblem).find(Boolean);
    if (p) return `The query parameter ${name.replace(/[^\x20-\x7e]/g, '?')} ${p}.`;
  }
  return undefined;
}
