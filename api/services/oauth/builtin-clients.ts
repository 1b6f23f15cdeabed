import type { Application } from '../../../db/database.ts';

/**
 * A client the service registers for itself (the API reference's, api/rest/docs-client.ts): it belongs to
 * no user, so nobody vouches for where its redirects lead beyond what the service registered. Its
 * redirect URI matches exactly, it always asks for consent (no silent prompt=none) and it never
 * gets a refresh token (offline_access is dropped from what it asks).
 */
export function isBuiltinApp(app: Pick<Application, 'owner_id'>): boolean {
  return app.owner_id === null;
}
