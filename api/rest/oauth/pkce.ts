import { createHash } from 'node:crypto';
import { constantTimeEqual } from '../../../lib/secrets.ts';
import type { AuthenticatedClient } from './client-auth.ts';
import { InvalidClient, InvalidGrant } from '../../services/oauth/errors.ts';

const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;

/**
 * PKCE at the code exchange (RFC 7636 §4.6): a code issued with a challenge needs the verifier that
 * hashes (S256) to it; a code issued without one takes no verifier and only a confidential client.
 */
export function checkCodeVerifier(challenge: string | null, verifier: string | undefined, client: AuthenticatedClient): void {
  if (challenge) {
    if (!verifier) throw new InvalidGrant('code_verifier is required (the authorization request used PKCE)');
    if (!VERIFIER.test(verifier)) throw new InvalidGrant('code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~');
    const hashed = createHash('sha256').update(verifier).digest('base64url');
    if (!constantTimeEqual(hashed, challenge)) throw new InvalidGrant('code_verifier does not match the code_challenge');
  } else {
    if (verifier) throw new InvalidGrant('code_verifier was given but the authorization request had no code_challenge');
    if (!client.confidential) throw new InvalidClient('Client authentication is required: a client secret, or PKCE');
  }
}
