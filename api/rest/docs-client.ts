import type { Config } from '../../lib/config.ts';
import type { Db } from '../../db/database.ts';
import { upsertBuiltinApplication } from '../../db/applications.ts';
import { clientSidePrivacyUrl } from '../services/applications/model.ts';

/**
 * The API reference's own OAuth client: Swagger UI at /docs runs the authorization code flow with
 * PKCE as this public client (no secret exists for it), redirected to its one registered URI,
 * `<BASE_URL>/docs/oauth2-redirect.html`. It belongs to no user and is complete (description, URL,
 * image, privacy statement), so any user can authorize it, always through the consent screen, to that
 * exact URI and without offline_access (./oauth/builtin-clients.ts); its tokens are application
 * tokens like any other (revocable in Settings → Connected applications).
 */
export const DOCS_CLIENT_ID = 'api-docs';

export function docsRedirectUri(config: Pick<Config, 'BASE_URL'>): string {
  return `${config.BASE_URL}/docs/oauth2-redirect.html`;
}

/** Create the client, or align it with the current BASE_URL; run at every API start. */
export function ensureDocsClient(db: Db, config: Config): Promise<void> {
  return upsertBuiltinApplication(db, {
    id: DOCS_CLIENT_ID,
    name: 'API reference (Swagger UI)',
    description: "This service's API reference at /docs: try the API on your own data from your browser.",
    url: `${config.BASE_URL}/docs`,
    image: `${config.BASE_URL}/docs/assets/favicon-32x32.png`,
    privacy_statement: clientSidePrivacyUrl(config),
    redirect_uris: [docsRedirectUri(config)],
  });
}
