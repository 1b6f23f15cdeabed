import type { Application } from '../../../db/database.ts';
import { parseScopes, type Scope } from '../auth/scopes.ts';
import { AuthorizeError } from './errors.ts';
import { matchRedirectUri, redirectUriProblem } from './redirect-uris.ts';
import { textProblem } from '../../../lib/text.ts';
import { isBuiltinApp } from './builtin-clients.ts';

/** What the user is asked to approve: a validated authorization request. */
export interface AuthorizationRequest {
  clientId: string;
  /** Where the answer goes (the URI as requested; it matched a registered one). */
  redirectUri: string;
  scopes: Scope[];
  state: string | undefined;
  codeChallenge: string | undefined;
  nonce: string | undefined;
  prompt: Set<'none' | 'login' | 'consent'>;
}

/** A problem found before the redirect URI is trusted: shown on our error page, never redirected. */
export class UntrustedRequestError extends Error {}

const PROMPTS = new Set(['none', 'login', 'consent']);
const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/**
 * Query parameters as single strings; a repeated parameter is an error (RFC 6749 §3.1), and so is
 * one whose text cannot be stored (a NUL character, a lone surrogate): `malformed` names them.
 */
export function singleParams(query: Record<string, string | string[] | undefined>): {
  params: Record<string, string>;
  repeated: string[];
  malformed: string[];
} {
  const params: Record<string, string> = {};
  const repeated: string[] = [];
  const malformed: string[] = [];
  for (const [k, v] of Object.entries(query)) {
    if (textProblem(k)) malformed.push(k.replace(/[^\x20-\x7e]/g, '?'));
    else if (Array.isArray(v)) repeated.push(k);
    else if (v !== undefined && textProblem(v)) malformed.push(k);
    else if (v !== undefined && v !== '') params[k] = v;
  }
  return { params, repeated, malformed };
}

/** Step 1: the redirect URI, checked against the application's registered URIs. */
export function trustedRedirectUri(app: Application, params: Record<string, string>, repeated: string[], malformed: string[] = []): string {
  if (repeated.includes('redirect_uri') || repeated.includes('client_id'))
    throw new UntrustedRequestError('client_id and redirect_uri may be given only once');
  if (malformed.includes('redirect_uri'))
    throw new UntrustedRequestError('redirect_uri contains characters no URI may hold (a NUL character or invalid Unicode).');
  const requested = params.redirect_uri;
  if (requested === undefined) {
    const only = app.redirect_uris.length === 1 ? app.redirect_uris[0]! : undefined;
    if (only && !only.startsWith('http://') && redirectUriProblem(only) === undefined) return only;
    throw new UntrustedRequestError('redirect_uri is required: this application has several redirect URIs (or only loopback ones)');
  }
  const problem = redirectUriProblem(requested);
  if (problem) throw new UntrustedRequestError(`The redirect_uri ${problem}, so we will not send you there.`);
  // A built-in client's URI as registered, character for character (no other loopback port, no sub-path).
  if (isBuiltinApp(app) ? !app.redirect_uris.includes(requested) : !matchRedirectUri(app.redirect_uris, requested)) {
    throw new UntrustedRequestError('The redirect_uri is not registered for this application, so we will not send you there.');
  }
  return requested;
}

/** Step 2, after the redirect URI is trusted: the rest of the request (errors go back to the client). */
export function parseAuthorizationRequest(
  app: Application,
  redirectUri: string,
  params: Record<string, string>,
  repeated: string[],
  appHasSecrets: boolean,
  malformed: string[] = [],
): AuthorizationRequest {
  if (repeated.length) throw new AuthorizeError('invalid_request', `Parameters given more than once: ${repeated.join(', ')}`);
  if (malformed.length)
    throw new AuthorizeError('invalid_request', `Parameters with a NUL character or invalid Unicode: ${malformed.join(', ')}`);
  const responseType = params.response_type ?? 'code';
  if (responseType !== 'code') throw new AuthorizeError('unsupported_response_type', 'Only response_type=code is supported');

  const parsed = parseScopes(params.scope ?? '');
  const { unknown } = parsed;
  if (unknown.length) throw new AuthorizeError('invalid_scope', `Unknown scope: ${unknown.join(' ')}`);
  if (parsed.scopes.includes('admin')) throw new AuthorizeError('invalid_scope', 'The admin scope is reserved');
  // A built-in client gets no refresh token: offline_access is left out of what it is granted (RFC 6749 §3.3).
  const scopes = isBuiltinApp(app) ? parsed.scopes.filter((s) => s !== 'offline_access') : parsed.scopes;
  if (!scopes.length)
    throw new AuthorizeError(
      'invalid_scope',
      isBuiltinApp(app) && parsed.scopes.length
        ? 'offline_access alone is not granted to this client; ask for data:read or another scope'
        : 'scope is required (e.g. "data:read offline_access")',
    );

  const challenge = params.code_challenge;
  const method = params.code_challenge_method;
  if (method !== undefined && method !== 'S256') throw new AuthorizeError('invalid_request', 'code_challenge_method must be S256');
  if (challenge !== undefined) {
    if (method === undefined) throw new AuthorizeError('invalid_request', 'code_challenge_method=S256 is required with code_challenge');
    if (!CHALLENGE.test(challenge))
      throw new AuthorizeError('invalid_request', 'code_challenge must be the base64url SHA-256 of the verifier (43 characters)');
  } else {
    if (method !== undefined) throw new AuthorizeError('invalid_request', 'code_challenge is required with code_challenge_method');
    if (!appHasSecrets)
      throw new AuthorizeError('invalid_request', 'code_challenge is required: this application has no client secret, so it must use PKCE');
  }

  const prompt = new Set((params.prompt ?? '').split(' ').filter(Boolean));
  for (const p of prompt)
    if (!PROMPTS.has(p)) throw new AuthorizeError('invalid_request', `prompt=${p} is not supported (none, login, consent)`);
  if (prompt.has('none') && prompt.size > 1)
    throw new AuthorizeError('invalid_request', 'prompt=none cannot be combined with other values');
  if (prompt.has('none') && isBuiltinApp(app)) throw new AuthorizeError('consent_required', 'This client always shows the consent screen');

  if ((params.state?.length ?? 0) > 2000 || (params.nonce?.length ?? 0) > 500)
    throw new AuthorizeError('invalid_request', 'state or nonce is too long');
  return {
    clientId: app.id,
    redirectUri,
    scopes,
    state: params.state,
    codeChallenge: challenge,
    nonce: params.nonce,
    prompt: prompt as AuthorizationRequest['prompt'],
  };
}

/** The redirect URI with the answer's parameters added (RFC 9207 `iss` included). */
export function answerUri(redirectUri: string, answer: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(answer)) if (v !== undefined) url.searchParams.append(k, v);
  return url.toString();
}
