import { z } from 'zod';

export const SCOPES = ['data:read', 'data:write', 'profile', 'offline_access', 'openid', 'admin'] as const;
export const Scope = z.enum(SCOPES);
export type Scope = z.infer<typeof Scope>;

/** What the first-party web session may do: everything a user can do with their own data. */
export const WEB_SESSION_SCOPES: Scope[] = ['data:read', 'data:write', 'profile'];

/**
 * Parse a scope string: space-separated (canonical) or comma-separated (deprecated, still accepted).
 * Returns the unknown names separately so callers can report them.
 */
export function parseScopes(input: string): { scopes: Scope[]; unknown: string[] } {
  const names = [...new Set(input.split(/[\s,]+/).filter(Boolean))];
  const scopes: Scope[] = [];
  const unknown: string[] = [];
  for (const name of names) {
    const parsed = Scope.safeParse(name);
    if (parsed.success) scopes.push(parsed.data);
    else unknown.push(name);
  }
  return { scopes, unknown };
}

/** What each scope lets an application do, in the words of the consent screen. */
export const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  'data:read': 'Read your activities, traces, daily measures and training profile',
  'data:write': 'Add, change and delete your activities, traces and daily measures',
  profile: 'See your name and email address',
  offline_access: 'Keep this access while you are away, until you revoke it',
  openid: 'Confirm who you are',
  admin: 'Administer the service',
};
