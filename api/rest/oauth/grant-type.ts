import type { Ctx } from '../../http/context.ts';
import type { AuthenticatedClient, OAuthForm } from './client-auth.ts';
import type { TokenResponse } from '../../services/oauth/issue.ts';

/**
 * One grant type of the token endpoint (RFC 6749 §4): reads its own parameters from the form (a
 * missing one is invalid_request, answered before the client is authenticated) and returns the
 * exchange to run.
 */
export type GrantType = (form: OAuthForm) => RunGrant;

/**
 * A grant's exchange, its parameters read: checks what was presented against the client (authenticated,
 * or undefined when the request named none; the grant decides whether it may) and issues the tokens.
 */
export type RunGrant = (ctx: Ctx, client: AuthenticatedClient | undefined) => Promise<TokenResponse>;
