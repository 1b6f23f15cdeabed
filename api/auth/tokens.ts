import { randomUUID } from 'node:crypto';
import { SignJWT, jwtVerify, errors as joseErrors, type JWTPayload } from 'jose';
import { z } from 'zod';
import type { KeyStore } from './keys.ts';
import { ACCESS_TOKEN_TTL_SECONDS } from '../../lib/lifetimes.ts';
import { Scope } from './scopes.ts';

/**
 * The claims of our access tokens (API.md "Authentication"): iss, sub, aud (client id; absent on
 * personal and web-session tokens), exp, iat, jti, scopes. Every token is bound to something that
 * can end it: `sid` to a web-session row (signing out ends it), `gid` to a grant row (an
 * application's authorization or a personal token; revoking it ends the token at once).
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
});
export type AccessTokenClaims = z.infer<typeof AccessTokenClaims>;

export interface TokenIssuer {
  issuer: string;
  keys: KeyStore;
  now: () => Date;
}

export async function mintAccessToken(
  t: TokenIssuer,
  grant: { sub: string; scopes: Scope[]; aud?: string | undefined; sid?: string; gid?: string },
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
 * Verify signature (RS256 only, key by `kid`), issuer and expiry. `expiredTolerance` accepts an
 * expired token up to that many seconds late: used only to refresh a web session from its cookie.
 */
export async function verifyAccessToken(
  t: TokenIssuer,
  token: string,
  opts: { expiredTolerance?: number } = {},
): Promise<AccessTokenClaims> {
  try {
    const { payload } = await jwtVerify(
      token,
      async (header) => {
        const key = header.kid ? await t.keys.verificationKey(header.kid) : undefined;
        if (!key) throw new InvalidTokenError('unknown signing key');
        return key;
      },
      // typ at+jwt (RFC 9068): an ID token, signed by the same key, is not an access token.
      { algorithms: ['RS256'], issuer: t.issuer, typ: 'at+jwt', currentDate: t.now(), clockTolerance: opts.expiredTolerance ?? 0 },
    );
    const claims = AccessTokenClaims.safeParse(payload);
    if (!claims.success) throw new InvalidTokenError('malformed token claims');
    return claims.data;
  } catch (err) {
    if (err instanceof InvalidTokenError) throw err;
    if (err instanceof joseErrors.JWTExpired) throw new InvalidTokenError('the access token has expired', true);
    if (err instanceof joseErrors.JOSEError) throw new InvalidTokenError('the access token is invalid');
    throw err;
  }
}

/**
 * An OpenID Connect ID token, issued with the access token when `openid` was granted. It proves who
 * signed in to the client (`aud`); it is not an access token (typ JWT, no `scopes`).
 */
export async function mintIdToken(
  t: TokenIssuer,
  c: { sub: string; aud: string; nonce?: string | null; profile?: { name: string; given_name: string; family_name: string; email: string } },
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
