import { isIpLiteral, isPublicAddress, LOOPBACK_HOSTS, unbracket } from './ip-address.ts';

/**
 * Which URLs may receive an application's webhooks (docs/app-developers.md, "Webhooks"): https to a public host;
 * loopback http only when WEBHOOK_ALLOW_HTTP_LOOPBACK is set (development). Checked on save, where
 * only IP literals can be judged: delivery (`resolveWebhookTarget`) checks the resolved addresses again.
 */
export const MAX_URL_LENGTH = 2000;

export type WebhookUrlRules = { allowHttpLoopback: boolean };

/** Why `value` cannot receive webhooks, or undefined: https to a public host; loopback http only when allowed. */
export function webhookUrlProblem(value: string, rules: WebhookUrlRules): string | undefined {
  if (value.length > MAX_URL_LENGTH) return `must be at most ${MAX_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute https URL';
  }
  if (url.username || url.password) return 'must not contain a user name or password';
  if (url.hash) return 'must not contain a #fragment';
  if (LOOPBACK_HOSTS.has(url.hostname)) {
    if (!rules.allowHttpLoopback) return 'must not point at this machine (localhost); use a public https URL';
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL';
    return undefined;
  }
  if (url.protocol !== 'https:') {
    return rules.allowHttpLoopback ? 'must use https (plain http only for localhost and 127.0.0.1)' : 'must use https';
  }
  if (!url.hostname) return 'must name a host';
  if (isIpLiteral(url.hostname) && !isPublicAddress(unbracket(url.hostname))) return 'must not point at a private network address';
  return undefined;
}
