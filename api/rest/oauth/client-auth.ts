import type { Ctx } from '../../http/context.ts';
import type { Application } from '../../../db/database.ts';
import { findApplication, verifyClientSecret } from '../../../db/applications.ts';
import { InvalidClient, InvalidRequest } from '../../services/oauth/errors.ts';
import { textProblem } from '../../../lib/text.ts';

/** A posted OAuth form: every parameter a single string (RFC 6749 §3.2: none may repeat). */
export type OAuthForm = Record<string, string | undefined>;

/** Read the form body of a token or revocation request, refusing anything but single string values. */
export function readOAuthForm(ctx: Ctx): OAuthForm {
  if (!ctx.is('application/x-www-form-urlencoded')) {
    throw new InvalidRequest('The body must be application/x-www-form-urlencoded');
  }
  const body = (ctx.request.body ?? {}) as Record<string, unknown>;
  const form: OAuthForm = {};
  for (const [name, value] of Object.entries(body)) {
    if (Array.isArray(value)) throw new InvalidRequest(`The parameter ${name} is given more than once`);
    if (typeof value !== 'string') throw new InvalidRequest(`The parameter ${name} is malformed`);
    const problem = textProblem(value) ?? textProblem(name);
    if (problem) throw new InvalidRequest(`The parameter ${name.replace(/[^\x20-\x7e]/g, '?')} ${problem}`);
    // An empty value counts as absent (e.g. `client_secret=` from clients that always send it).
    if (value !== '') form[name] = value;
  }
  return form;
}

export interface ClientCredentials {
  clientId: string | undefined;
  secret: string | undefined;
  method: 'none' | 'client_secret_basic' | 'client_secret_post';
}

/** The client's credentials from HTTP Basic (client_secret_basic) or the form (client_secret_post, none). */
export function clientCredentials(ctx: Ctx, form: OAuthForm): ClientCredentials {
  const header = ctx.get('authorization');
  if (/^Basic\s/i.test(header)) {
    if (form.client_secret) throw new InvalidRequest('Use one client authentication method, not both Basic and client_secret');
    const decoded = Buffer.from(header.replace(/^Basic\s+/i, ''), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 1) throw new InvalidClient('The Basic credentials are malformed');
    let clientId: string;
    let secret: string;
    try {
      // RFC 6749 §2.3.1: both parts are form-urlencoded before being joined.
      clientId = decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' '));
      secret = decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' '));
    } catch {
      throw new InvalidClient('The Basic credentials are malformed');
    }
    if (textProblem(clientId) || textProblem(secret)) throw new InvalidClient('The Basic credentials are malformed');
    if (form.client_id && form.client_id !== clientId) throw new InvalidRequest('client_id does not match the Basic credentials');
    return { clientId, secret: secret || undefined, method: secret ? 'client_secret_basic' : 'none' };
  }
  return { clientId: form.client_id, secret: form.client_secret, method: form.client_secret ? 'client_secret_post' : 'none' };
}

export interface AuthenticatedClient {
  app: Application;
  /** True when the client proved a secret; false for a public client (identified by client_id only). */
  confidential: boolean;
}

/** Look the client up and check its secret when one is given (a wrong secret is 401 invalid_client). */
export async function authenticateClient(ctx: Ctx, creds: ClientCredentials): Promise<AuthenticatedClient> {
  const { db } = ctx.deps;
  if (!creds.clientId) throw new InvalidRequest('client_id is required');
  const app = await findApplication(db, creds.clientId);
  if (!app) throw new InvalidClient('Unknown client');
  if (creds.secret === undefined) return { app, confidential: false };
  if (!(await verifyClientSecret(db, app.id, creds.secret, ctx.deps.now()))) throw new InvalidClient('Client authentication failed');
  return { app, confidential: true };
}

/**
 * The client of a token request, authenticated, when the request names one (client_id or Basic);
 * undefined when it names none, which only some grants accept (a personal token's refresh). Which
 * grants need the secret is the grants' decision: a code without PKCE (pkce.ts), and the refresh
 * token of a grant whose code was exchanged with the secret (grant-refresh-token.ts). A
 * secret is not needed when PKCE is used (docs/app-developers.md, "OAuth 2.0"
 * step 5), so an application's mobile or browser part (no secret)
 * and its server (with one) can share it.
 */
export async function authenticateClientIfNamed(ctx: Ctx, form: OAuthForm): Promise<AuthenticatedClient | undefined> {
  const creds = clientCredentials(ctx, form);
  return creds.clientId ? authenticateClient(ctx, creds) : undefined;
}
