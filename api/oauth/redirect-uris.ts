import { LOOPBACK_HOSTS } from '../../lib/ip-address.ts';

/**
 * Redirect URI rules (SPEC "Application setup" 4, RFC 8252 for native apps):
 * - `https` with a host;
 * - loopback `http` (localhost, 127.0.0.1 or [::1]), any port;
 * - a private-use scheme for native apps (`com.example.app:/callback`), matched exactly;
 * - never public plain `http`, a `#fragment`, credentials in the URI, or a scheme a browser would
 *   run or read locally (javascript:, data:, file:, …).
 * `https` and loopback URIs match by sub-path: a registered `https://app.example/cb` accepts
 * `https://app.example/cb` and `https://app.example/cb/more`, not `https://app.example/cbx`; a
 * loopback URI accepts any port; a query is accepted when the registered URI has none.
 */

const FORBIDDEN_SCHEMES = new Set([
  'javascript', 'data', 'vbscript', 'file', 'blob', 'about', 'filesystem', 'view-source',
  'ftp', 'ws', 'wss', 'mailto', 'tel', 'sms', 'chrome', 'chrome-extension', 'intent',
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
 * (scheme and host are case-insensitive); paths are compared segment-wise.
 */
export function matchRedirectUri(registered: readonly string[], requested: string): string | undefined {
  if (requested.includes('#')) return undefined;
  const req = parse(requested);
  if (!req || req.username || req.password) return undefined;
  const kind = redirectKind(req);
  if (!kind) return undefined;
  for (const candidate of registered) {
    const reg = parse(candidate);
    if (!reg || redirectKind(reg) !== kind) continue;
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
