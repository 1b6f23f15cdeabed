import type { SecretBox } from '../lib/secret-box.ts';
import type { ParameterizedContext, Middleware } from 'koa';
import type { Redis } from 'ioredis';
import type { Config } from '../lib/config.ts';
import type { Logger } from '../lib/log.ts';
import type { Db } from '../db/database.ts';
import type { Queues } from '../workers/queues.ts';
import type { KeyStore } from './auth/keys.ts';
import type { TokenIssuer } from './auth/tokens.ts';
import type { Scope } from './auth/scopes.ts';
import type { EnginePool } from '../engine/pool.ts';
import type { SampleStore } from '../engine/samples/sample-file.ts';
import type { FrameWriter } from '../engine/frames/parquet-writer.ts';
import type { ChannelColumns } from '../engine/samples/channel-columns.ts';
import type { LoopMonitor } from '../lib/event-loop.ts';

/** The engine as the API uses it: the thread pool, the DuckDB sample store, the Parquet frame writer and the channel columns. */
export interface ApiEngine {
  pool: EnginePool;
  samples: SampleStore;
  frames: FrameWriter;
  columns: ChannelColumns;
}

/** Everything a request handler may use; built once per process in api/server.ts. */
export interface Deps {
  config: Config;
  db: Db;
  redis: Redis;
  queues: Queues;
  /** Seals the secrets the server reads back (lib/secret-box.ts). */
  box: SecretBox;
  keys: KeyStore;
  tokens: TokenIssuer;
  log: Logger;
  now: () => Date;
  engine: ApiEngine;
  /** The process's event-loop delay (lib/event-loop.ts), measured once the API listens: /readyz is 503 while it reads blocked. */
  loop: LoopMonitor;
}

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
