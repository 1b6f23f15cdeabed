import { LOOPBACK_HOSTS } from '../../../lib/ip-address.ts';

/**
 * Redirect URI rules (docs/app-developers.md, "OAuth 2.0" step 2; RFC 8252 for native apps):
 * - `https` with a host;
 * - loopback `http` (localhost, 127.0.0.1 or [::1]), any port;
 * - a private-use scheme for native apps (`com.example.app:/callback`), matched exactly;
 * - never public plain `http`, a `#fragment`, credentials in the URI, or a scheme a browser would
 *   run or read locally (javascript:, data:, file:, …).
 * `https` and loopback URIs match by sub-path: a registered `https://app.example/cb` accepts
 * `https://app.example/cb` and `https://app.example/cb/more`, not `https://app.example/cbx`; a
 * loopback URI accepts any port; a query is accepted when the registered URI has none.
 *
 * The sub-path rule must hold for the server behind the URI too, which may resolve the path otherwise
 * than the WHATWG parser does (`/cb/..;/evil` is `/evil` to Tomcat, `%2f` is `/` to some proxies). So
 * an `https` or loopback URI, registered or requested, must be written plainly: `scheme://host/path`,
 * no user-info (not even an empty `@`), no backslash, and a path without dot-segments (`.`, `..`),
 * `;` parameters or percent-encoded `.`, `/`, `\`, `;` or `%`. And no URI may carry its own `code`,
 * `state` or `iss` query parameter, which the answer appends (a second one would be ambiguous).
 */

const FORBIDDEN_SCHEMES = new Set([
  'javascript',
  'data',
  'vbscript',
  'file',
  'blob',
  'about',
  'filesystem',
  'view-source',
  'ftp',
  'ws',
  'wss',
  'mailto',
  'tel',
  'sms',
  'chrome',
  'chrome-extension',
  'intent',
]);

export type RedirectKind = 'https' | 'loopback' | 'private-use';

/** Why `uri` cannot be registered, or undefined when it can. */
export function redirectUriProblem(uri: string): string | undefined {
  const parsed = parse(uri);
  if (!parsed) return 'must be an absolute URI';
  if (uri.includes('#')) return 'must not contain a #fragment';
  if (parsed.username || parsed.password) return 'must not contain credentials';
  const kind = redirectKind(parsed);
  if (!kind) {
    if (parsed.protocol === 'http:') return 'plain http is allowed only for loopback hosts (localhost, 127.0.0.1); use https';
    return `the scheme ${parsed.protocol} is not allowed`;
  }
  if (kind === 'https' && !parsed.hostname) return 'must name a host';
  if (kind !== 'private-use') {
    const problem = hierarchicalProblem(uri);
    if (problem) return problem;
  }
  const reserved = [...new Set(parsed.searchParams.keys())].filter((k) => ANSWER_PARAMETERS.has(k));
  if (reserved.length) return `must not carry its own ${reserved.join(', ')} query parameter (the answer adds it)`;
  return undefined;
}

/** The query parameters of the answer (RFC 6749 §4.1.2, RFC 9207): a redirect URI must not have its own. */
const ANSWER_PARAMETERS = new Set(['code', 'state', 'iss']);

/** `scheme://authority path ?query`, as written (before any normalisation). */
const HIERARCHICAL = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)([^?#]*)/i;

/** Why an https or loopback URI, as written, could resolve elsewhere than its parsed form says. */
function hierarchicalProblem(uri: string): string | undefined {
  if (uri.includes('\\')) return 'must not contain a backslash';
  const m = HIERARCHICAL.exec(uri);
  if (!m?.[1]) return 'must be written scheme://host/path';
  if (m[1].includes('@')) return 'must not contain credentials (user-info before an @)';
  const path = m[2]!;
  if (path.includes(';')) return 'must not contain ; path parameters';
  if (/%(2f|5c)/i.test(path)) return 'must not contain an encoded slash or backslash (%2F, %5C)';
  if (/%(2e|3b|25)/i.test(path)) return 'must not contain a percent-encoded dot, semicolon or percent sign (%2E, %3B, %25)';
  if (path.split('/').some((segment) => segment === '.' || segment === '..')) return 'must not contain dot-segments (. or ..) in its path';
  return undefined;
}

export function redirectKind(url: URL): RedirectKind | undefined {
  const scheme = url.protocol.slice(0, -1);
  if (scheme === 'https') return url.hostname ? 'https' : undefined;
  if (scheme === 'http') return LOOPBACK_HOSTS.has(url.hostname) ? 'loopback' : undefined;
  if (!/^[a-z][a-z0-9+.-]*$/.test(scheme) || FORBIDDEN_SCHEMES.has(scheme)) return undefined;
  return 'private-use';
}

/**
 * The registered URI that `requested` falls under, or undefined. Comparison is on the parsed URI
 * (scheme and host lower-cased, the default port dropped); paths are compared segment-wise.
 */
export function matchRedirectUri(registered: readonly string[], requested: string): string | undefined {
  // The requested URI must itself be one that could be registered (no dot-segments, user-info, …).
  if (redirectUriProblem(requested) !== undefined) return undefined;
  const req = parse(requested)!;
  const kind = redirectKind(req)!;
  for (const candidate of registered) {
    const reg = parse(candidate);
    if (!reg || redirectKind(reg) !== kind || redirectUriProblem(candidate) !== undefined) continue;
    if (kind === 'private-use') {
      if (candidate === requested) return candidate;
      continue;
    }
    if (reg.protocol !== req.protocol || reg.hostname !== req.hostname) continue;
    if (kind === 'https' && reg.port !== req.port) continue;
    if (!underPath(reg.pathname, req.pathname)) continue;
    if (reg.search && reg.search !== req.search) continue;
    return candidate;
  }
  return undefined;
}

function underPath(base: string, path: string): boolean {
  if (path === base) return true;
  const prefix = base.endsWith('/') ? base : `${base}/`;
  return path.startsWith(prefix) && !/(^|\/)\.\.?(\/|$)/.test(path.slice(prefix.length));
}

function parse(uri: string): URL | undefined {
  if (typeof uri !== 'string' || uri.length === 0 || uri.length > 2000 || /\s/.test(uri)) return undefined;
  try {
    return new URL(uri);
  } catch {
    return undefined;
  }
}

/** Registered when an application gives no redirect URIs: loopback on any port. */
export const DEFAULT_REDIRECT_URIS = ['http://localhost', 'http://127.0.0.1'];
