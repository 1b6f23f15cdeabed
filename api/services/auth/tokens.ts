import { randomUUID } from 'node:crypto';
import { SignJWT, jwtVerify, errors as joseErrors, type CryptoKey, type JWTPayload } from 'jose';
import { z } from 'zod';
import type { KeyStore } from './keys.ts';
import { ACCESS_TOKEN_TTL_SECONDS } from '../../../lib/lifetimes.ts';
import { Scope } from './scopes.ts';

/**
 * The claims of our access tokens (docs/app-developers.md, "Access tokens"): iss, sub, aud (client id; absent on
 * personal and web-session tokens), exp, iat, jti, scopes. Every token is bound to something that
 * can end it: `sid` to a web-session row (signing out ends it), `gid` to a grant row (an
 * application's authorization or a personal token; revoking it ends the token at once), `did` to a
 * delegation (a delegated token, with `act`: docs/coaching.md).
 */
export const AccessTokenClaims = z.object({
  iss: z.string(),
  sub: z.string(),
  aud: z.string().optional(),
  exp: z.number(),
  iat: z.number(),
  jti: z.string(),
  scopes: z.array(Scope),
  sid: z.string().optional(),
  gid: z.string().optional(),
  /** A delegated token: who acts (RFC 8693 §4.1), `sub` being whom they act as; bound to a delegation row by `did`. */
  act: z.object({ sub: z.string() }).optional(),
  did: z.string().optional(),
});
export type AccessTokenClaims = z.infer<typeof AccessTokenClaims>;

export interface TokenIssuer {
  issuer: string;
  keys: KeyStore;
  now: () => Date;
}

export async function mintAccessToken(
  t: TokenIssuer,
  grant: { sub: string; scopes: Scope[]; aud?: string | undefined; sid?: string; gid?: string; act?: string; did?: string },
): Promise<{ token: string; expiresIn: number; claims: AccessTokenClaims }> {
  const { kid, key } = await t.keys.signingKey();
  const iat = Math.floor(t.now().getTime() / 1000);
  const claims: AccessTokenClaims = {
    iss: t.issuer,
    sub: grant.sub,
    ...(grant.aud ? { aud: grant.aud } : {}),
    iat,
    exp: iat + ACCESS_TOKEN_TTL_SECONDS,
    jti: randomUUID(),
    scopes: grant.scopes,
    ...(grant.sid ? { sid: grant.sid } : {}),
    ...(grant.gid ? { gid: grant.gid } : {}),
    ...(grant.act && grant.did ? { act: { sub: grant.act }, did: grant.did } : {}),
  };
  const token = await new SignJWT(claims as JWTPayload).setProtectedHeader({ alg: 'RS256', kid, typ: 'at+jwt' }).sign(key);
  return { token, expiresIn: ACCESS_TOKEN_TTL_SECONDS, claims };
}

export class InvalidTokenError extends Error {
  constructor(
    message: string,
    readonly expired = false,
  ) {
    super(message);
  }
}

/**
 * A token whose signature, issuer and type were checked is remembered for this long (real time),
 * by its exact string, so that a client polling with one token pays for the RS256 verification once
 * a minute rather than on every request. What can end a token is still checked on every use: its
 * expiry here (against the issuer's clock), its signing key (a key no longer published, or reloaded,
 * drops the entry), and its grant or web session by the caller (api/http/authenticate.ts).
 */
const VERIFIED_TTL_MS = 60_000;
/** Tokens remembered per issuer; the oldest is dropped first (about 1 KB each). */
const VERIFIED_MAX_ENTRIES = 10_000;

interface Verified {
  claims: AccessTokenClaims;
  kid: string;
  /** The key object that verified the signature: a reload of the keys makes new ones. */
  key: CryptoKey;
  until: number;
}

const verifiedTokens = new WeakMap<TokenIssuer, Map<string, Verified>>();

function verifiedOf(t: TokenIssuer): Map<string, Verified> {
  let map = verifiedTokens.get(t);
  if (!map) verifiedTokens.set(t, (map = new Map()));
  return map;
}

/** A remembered verification of exactly this token, still signed by a published key; undefined otherwise. */
async function rememberedClaims(t: TokenIssuer, token: string): Promise<AccessTokenClaims | undefined> {
  const map = verifiedTokens.get(t);
  const hit = map?.get(token);
  if (!hit) return undefined;
  if (hit.until > Date.now() && (await t.keys.verificationKey(hit.kid)) === hit.key) return hit.claims;
  map!.delete(token);
  return undefined;
}

function remember(t: TokenIssuer, token: string, verified: Omit<Verified, 'until'>): void {
  const map = verifiedOf(t);
  if (map.size >= VERIFIED_MAX_ENTRIES) map.delete(map.keys().next().value!);
  map.set(token, { ...verified, until: Date.now() + VERIFIED_TTL_MS });
}

/**
 * Verify signature (RS256 only, key by `kid`), issuer and expiry. `expiredTolerance` accepts an
 * expired token up to that many seconds late: used only to refresh a web session from its cookie.
 * Without it, a verification made in the last minute is reused (see VERIFIED_TTL_MS); the expiry is
 * checked each time, as jose does (expired when `exp` ≤ now, in whole seconds).
 */
export async function verifyAccessToken(
  t: TokenIssuer,
  token: string,
  opts: { expiredTolerance?: number } = {},
): Promise<AccessTokenClaims> {
  const tolerance = opts.expiredTolerance ?? 0;
  if (!tolerance) {
    const claims = await rememberedClaims(t, token);
    if (claims) {
      if (claims.exp <= Math.floor(t.now().getTime() / 1000)) throw new InvalidTokenError('the access token has expired', true);
      return claims;
    }
  }
  try {
    let used: { kid: string; key: CryptoKey } | undefined;
    const { payload } = await jwtVerify(
      token,
      async (header) => {
        const key = header.kid ? await t.keys.verificationKey(header.kid) : undefined;
        if (!key) throw new InvalidTokenError('unknown signing key');
        used = { kid: header.kid!, key };
        return key;
      },
      // typ at+jwt (RFC 9068): an ID token, signed by the same key, is not an access token.
      { algorithms: ['RS256'], issuer: t.issuer, typ: 'at+jwt', currentDate: t.now(), clockTolerance: tolerance },
    );
    const parsed = AccessTokenClaims.safeParse(payload);
    if (!parsed.success) throw new InvalidTokenError('malformed token claims');
    const claims = deepFreeze(parsed.data);
    if (!tolerance && used) remember(t, token, { claims, ...used });
    return claims;
  } catch (err) {
    if (err instanceof InvalidTokenError) throw err;
    if (err instanceof joseErrors.JWTExpired) throw new InvalidTokenError('the access token has expired', true);
    if (err instanceof joseErrors.JOSEError) throw new InvalidTokenError('the access token is invalid');
    throw err;
  }
}

/** Remembered claims are shared by every request that presents the token: nobody may change them. */
function deepFreeze(claims: AccessTokenClaims): AccessTokenClaims {
  Object.freeze(claims.scopes);
  if (claims.act) Object.freeze(claims.act);
  return Object.freeze(claims);
}

/**
 * An OpenID Connect ID token, issued with the access token when `openid` was granted. It proves who
 * signed in to the client (`aud`); it is not an access token (typ JWT, no `scopes`).
 */
export async function mintIdToken(
  t: TokenIssuer,
  c: {
    sub: string;
    aud: string;
    nonce?: string | null;
    profile?: { name: string; given_name: string; family_name: string; email: string };
  },
): Promise<string> {
  const { kid, key } = await t.keys.signingKey();
  const iat = Math.floor(t.now().getTime() / 1000);
  const claims: JWTPayload = {
    iss: t.issuer,
    sub: c.sub,
    aud: c.aud,
    iat,
    exp: iat + ACCESS_TOKEN_TTL_SECONDS,
    ...(c.nonce ? { nonce: c.nonce } : {}),
    ...(c.profile ?? {}),
  };
  return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' }).sign(key);
}
