/**
 * A request as handlers, guards and pages see it: `Ctx` (Koa's context with the process's `Deps` and
 * the router's path parameters), `Mw`, and the `Principal` the authentication middleware sets.
 */
import type { ParameterizedContext, Middleware } from 'koa';
import type { Deps } from '../services/deps.ts';
import type { Scope } from '../services/auth/scopes.ts';

/** Who is calling, set by the authentication middleware. */
export interface Principal {
  userId: string;
  scopes: Scope[];
  /** OAuth client id of a third-party application token; undefined for first-party credentials. */
  clientId: string | undefined;
  /** Web session id when the credential is the first-party session (cookie or refreshed token). */
  sessionId: string | undefined;
  /** The grant (application authorization or personal token) a bearer token was issued under. */
  grantId: string | undefined;
  via: 'bearer' | 'cookie';
  /**
   * The user's `read_version`, read with the check of the grant or session on this request (before
   * the handler runs); undefined when the credential was checked another way (a refreshed session).
   */
  readVersion: string | undefined;
  /** The user's `data_version` (the key of computed answers), read with it; undefined when that is. */
  dataVersion: string | undefined;
  /**
   * A delegated token (docs/coaching.md): `userId` is the user acted as, `actorId` who acts, through
   * `teamId` (null: the actor manages the user). Undefined for every other credential.
   */
  delegation?: { id: string; actorId: string; teamId: string | null };
}

export interface AppState {
  requestId: string;
  principal?: Principal;
}

export interface AppContextExtras {
  deps: Deps;
}

/** Path parameters, set by the router (empty outside routed middleware). */
interface RouterParams {
  params: Record<string, string>;
}

export type Ctx = ParameterizedContext<AppState, AppContextExtras & RouterParams>;
export type Mw = Middleware<AppState, AppContextExtras & RouterParams>;
