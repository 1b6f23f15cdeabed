/**
 * What the services, handlers and pages of one process share: built once in api/server.ts and handed
 * to each. No HTTP type here: the CLI builds and passes the parts a service needs (signing keys, the
 * database) without an HTTP stack.
 */
import type { Redis } from 'ioredis';
import type { SecretBox } from '../../lib/secret-box.ts';
import type { Config } from '../../lib/config.ts';
import type { Logger } from '../../lib/log.ts';
import type { Db } from '../../db/database.ts';
import type { Queues } from '../../workers/queues.ts';
import type { KeyStore } from './auth/keys.ts';
import type { TokenIssuer } from './auth/tokens.ts';
import type { EnginePool } from '../../engine/pool.ts';
import type { SampleStore } from '../../engine/samples/sample-file.ts';
import type { FrameWriter } from '../../engine/frames/parquet-writer.ts';
import type { ChannelColumns } from '../../engine/samples/channel-columns.ts';
import type { LoopMonitor } from '../../lib/event-loop.ts';
import type { StoredFiles } from '../../lib/object-store-setup.ts';

/**
 * The engine as the API uses it: the thread pool, the DuckDB sample store, the Parquet frame writer,
 * the channel columns, and the files they read (the object store, and its objects as local files).
 */
export interface ApiEngine {
  pool: EnginePool;
  samples: SampleStore;
  frames: FrameWriter;
  columns: ChannelColumns;
  files: StoredFiles;
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
