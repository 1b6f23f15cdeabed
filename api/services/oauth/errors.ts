import { z } from 'zod';
import { HttpError } from '../errors.ts';

/** The body of every OAuthError, for the OpenAPI document. */
export const OAuthErrorBody = z
  .object({ error: z.string(), error_description: z.string() })
  .meta({ id: 'OAuthError', description: 'RFC 6749 §5.2 error' });

/**
 * RFC 6749 §5.2 / RFC 7009 errors of the token and revocation endpoints: the body is
 * `{"error": code, "error_description": text}` instead of `{"detail": …}`, one class per code.
 */
export class OAuthError extends HttpError {
  constructor(
    readonly code: string,
    readonly description: string,
    status = 400,
    headers: Record<string, string> = {},
  ) {
    super(status, description, { 'Cache-Control': 'no-store', Pragma: 'no-cache', ...headers });
  }

  get body() {
    return { error: this.code, error_description: this.description };
  }
}

export class InvalidRequest extends OAuthError {
  constructor(description: string) {
    super('invalid_request', description);
  }
}
/** Client authentication failed: 401, with a Basic challenge. */
export class InvalidClient extends OAuthError {
  constructor(description: string) {
    super('invalid_client', description, 401, { 'WWW-Authenticate': 'Basic realm="oauth", charset="UTF-8"' });
  }
}
export class InvalidGrant extends OAuthError {
  constructor(description: string) {
    super('invalid_grant', description);
  }
}
export class UnsupportedGrantType extends OAuthError {
  constructor(description: string) {
    super('unsupported_grant_type', description);
  }
}
export class InvalidScope extends OAuthError {
  constructor(description: string) {
    super('invalid_scope', description);
  }
}

/**
 * The `error` codes an authorization request can be answered with at its redirect URI
 * (RFC 6749 §4.1.2.1, OpenID Connect Core §3.1.2.6 for the prompt=none ones).
 */
export type AuthorizeErrorCode =
  | 'invalid_request'
  | 'unauthorized_client'
  | 'access_denied'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'server_error'
  | 'login_required'
  | 'consent_required';

/** An authorization request error found after the redirect URI was validated: goes back to it. */
export class AuthorizeError extends Error {
  constructor(
    readonly code: AuthorizeErrorCode,
    readonly description: string,
  ) {
    super(description);
  }
}

/** Too many refused requests from this address (api/http/failure-limit.ts): 429, RFC 8628's `slow_down`, with Retry-After. */
export class SlowDown extends OAuthError {
  constructor(description: string, retryAfterSeconds: number, headers: Record<string, string>) {
    super('slow_down', description, 429, { ...headers, 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) });
  }
}
