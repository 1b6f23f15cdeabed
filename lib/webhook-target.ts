import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import { isLoopbackAddress, isPublicAddress, LOOPBACK_HOSTS, unbracket } from './ip-address.ts';
import { webhookUrlProblem } from './webhook-url.ts';

/**
 * Where a webhook may be delivered (docs/app-developers.md, "Webhooks": https only, loopback http only when configured
 * for development, private-network targets refused).
 *
 * The save-time rule (`webhookUrlProblem`) sees only the URL, so a host name that resolves to
 * 10.0.0.5 or 169.254.169.254 passes it. At delivery time `resolveWebhookTarget` resolves the host,
 * refuses it when ANY of its addresses is not public, and returns the address it checked: the caller
 * connects to exactly that address (`postWebhook` pins it), so a DNS answer that changes between the
 * check and the connection (DNS rebinding) cannot redirect the request.
 */

/** Resolves a host name to all its addresses, like `dns.promises.lookup(name, { all: true })`. */
export type LookupAll = (hostname: string) => Promise<{ address: string; family: number }[]>;

export type WebhookTarget = { url: URL; address: string; family: 4 | 6 };
export type WebhookTargetResult = ({ ok: true } & WebhookTarget) | { ok: false; reason: string };

const systemLookup: LookupAll = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

export async function resolveWebhookTarget(
  url: string,
  opts: { allowHttpLoopback: boolean; lookup?: LookupAll },
): Promise<WebhookTargetResult> {
  // The scheme and host rules are the save-time ones.
  const problem = webhookUrlProblem(url, { allowHttpLoopback: opts.allowHttpLoopback });
  if (problem) return { ok: false, reason: problem };
  const parsed = new URL(url);
  const host = unbracket(parsed.hostname);
  // localhost, 127.0.0.1 and [::1] get past the save-time rule only when loopback delivery is allowed;
  // they must then really mean this machine. Any other name must resolve to public addresses only.
  const loopbackHost = opts.allowHttpLoopback && LOOPBACK_HOSTS.has(parsed.hostname);

  let addresses: { address: string; family: number }[];
  if (isIP(host)) {
    addresses = [{ address: host, family: isIP(host) }];
  } else {
    try {
      addresses = await (opts.lookup ?? systemLookup)(host);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException)?.code;
      return { ok: false, reason: `could not resolve ${host}: ${code ?? (err as Error)?.message ?? String(err)}` };
    }
    if (addresses.length === 0) return { ok: false, reason: `could not resolve ${host}: no addresses` };
  }

  for (const { address } of addresses) {
    const allowed = loopbackHost ? isLoopbackAddress(address) : isPublicAddress(address);
    if (!allowed) {
      return {
        ok: false,
        reason: loopbackHost
          ? `${host} resolves to ${address}, which is not a loopback address`
          : `${host} resolves to ${address}, which is not a public address`,
      };
    }
  }
  const address = addresses[0]!.address;
  return { ok: true, url: parsed, address, family: isIP(address) === 6 ? 6 : 4 };
}
