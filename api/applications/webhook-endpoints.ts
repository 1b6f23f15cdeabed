import type { Config } from '../../lib/config.ts';
import { LOOPBACK_HOSTS } from '../oauth/redirect-uris.ts';

/**
 * Which URLs may receive an application's webhooks (API.md "Webhooks"): https to a public host;
 * loopback http only when WEBHOOK_ALLOW_HTTP_LOOPBACK is set (development). Checked on save, on IP
 * literals only: delivery must check the resolved addresses again.
 */
export const MAX_URL_LENGTH = 2000;

/** An IPv4 or IPv6 literal in a private, link-local, loopback or unspecified range. */
function isPrivateAddress(hostname: string): boolean {
  const v4 = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(hostname);
  if (v4) {
    const [a, b] = [Number(v4[1]), Number(v4[2])];
    return a === 0 || a === 10 || a === 127 || (a === 100 && b >= 64 && b <= 127) || (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168);
  }
  if (hostname.startsWith('[')) {
    const v6 = hostname.slice(1, -1).toLowerCase();
    return v6 === '::' || v6 === '::1' || /^f[cd]/.test(v6) || /^fe[89ab]/.test(v6) || v6.startsWith('::ffff:');
  }
  return false;
}

/** Why `value` cannot receive webhooks, or undefined: https to a public host; loopback http only when configured. */
export function webhookEndpointProblem(value: string, config: Config): string | undefined {
  if (value.length > MAX_URL_LENGTH) return `must be at most ${MAX_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute https URL';
  }
  if (url.username || url.password) return 'must not contain a user name or password';
  if (url.hash) return 'must not contain a #fragment';
  const loopback = LOOPBACK_HOSTS.has(url.hostname);
  if (loopback) {
    if (!config.WEBHOOK_ALLOW_HTTP_LOOPBACK) return 'must not point at this machine (localhost); use a public https URL';
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL';
    return undefined;
  }
  if (url.protocol !== 'https:') {
    return config.WEBHOOK_ALLOW_HTTP_LOOPBACK ? 'must use https (plain http only for localhost and 127.0.0.1)' : 'must use https';
  }
  if (!url.hostname) return 'must name a host';
  if (isPrivateAddress(url.hostname)) return 'must not point at a private network address';
  return undefined;
}
