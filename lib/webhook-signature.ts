import { createHmac } from 'node:crypto';

/**
 * The `X-Signature` header of a webhook delivery (docs/app-developers.md, "Webhooks"):
 * `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`.
 *
 * A receiver recomputes the HMAC over `"<t>." + the exact bytes it received`, compares it in constant
 * time with `v1`, and rejects a `t` too far from its own clock (replay). `rawBody` must be the very
 * string sent as the request body: re-serialising the JSON would change the signed bytes.
 */
export function signWebhook(secret: string, rawBody: string, unixSeconds: number): string {
  if (!Number.isSafeInteger(unixSeconds) || unixSeconds < 0) {
    throw new RangeError(`unixSeconds must be a non-negative integer, got ${unixSeconds}`);
  }
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.${rawBody}`, 'utf8').digest('hex');
  return `t=${unixSeconds},v1=${mac}`;
}
