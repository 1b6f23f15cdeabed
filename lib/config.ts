import { z } from 'zod';
import { decodeSecretsKey } from './secret-box.ts';

/**
 * Every setting the service reads, parsed once from the environment. Defaults work on a developer
 * machine with PostgreSQL and Redis on localhost; docker-compose.yml overrides the hosts.
 */
const boolean = z.enum(['true', 'false', '1', '0', 'yes', 'no']).transform((v) => v === 'true' || v === '1' || v === 'yes');

export const ConfigSchema = z
  .object({
    NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
    HOST: z.string().min(1).default('127.0.0.1'),
    PORT: z.coerce.number().int().min(0).max(65535).default(8000),
    /** Public URL of the service: the OAuth issuer, the origin that web forms must come from. */
    BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
    DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).default('postgres://postgres@127.0.0.1:5432/training_data'),
    DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
    REDIS_URL: z.url({ protocol: /^rediss?$/ }).default('redis://127.0.0.1:6379'),
    /** Prefix of every BullMQ key, so several deployments (or test files) can share one Redis. */
    QUEUE_PREFIX: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, - and _ only')
      .default('tds'),
    DATA_DIR: z.string().min(1).default('./data'),
    /**
     * Where originals, sample files and history archives are kept (lib/object-store.ts): `local`, under
     * DATA_DIR (the default); `s3`, an S3-compatible store (the S3_* settings), DATA_DIR then holding only
     * what each host derives and caches, within DISK_CACHE_MAX_MB.
     */
    STORAGE: z.enum(['local', 's3']).default('local'),
    /** The store's URL (e.g. http://127.0.0.1:7480 for Ceph RGW, MinIO's); unset: AWS S3 of S3_REGION. */
    S3_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
    S3_BUCKET: z
      .string()
      .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'an S3 bucket name: 3 to 63 lower-case letters, digits, dots and hyphens')
      .optional(),
    S3_REGION: z.string().min(1).max(64).default('us-east-1'),
    S3_ACCESS_KEY_ID: z.string().min(1).max(256).optional(),
    S3_SECRET_ACCESS_KEY: z.string().min(1).max(256).optional(),
    /** Path-style addressing (http://host/bucket/key), as Ceph RGW and MinIO need without wildcard DNS. */
    S3_FORCE_PATH_STYLE: boolean.default(false),
    /**
     * With STORAGE=s3: megabytes of DATA_DIR each host may fill with what it derives and caches (copies of
     * sample files, channel columns, fatigue grids); past it the least recently used go first.
     */
    DISK_CACHE_MAX_MB: z.coerce.number().int().min(16).max(16_777_216).default(10_240),
    /** 32 bytes (base64 or base64url) sealing the signing keys and webhook secrets stored in PostgreSQL; default: DATA_DIR/secrets.key, generated on first start. */
    SECRETS_KEY: z
      .string()
      .refine((v) => decodeSecretsKey(v) !== undefined, 'must be 32 bytes in base64 or base64url (e.g. `openssl rand -base64 32`)')
      .optional(),
    LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
    /** Trust X-Forwarded-For / X-Forwarded-Proto from a reverse proxy in front of the API. */
    TRUST_PROXY: boolean.default(false),
    /** Web sessions (cookie `token`) last this long without a new sign-in. */
    SESSION_TTL_HOURS: z.coerce
      .number()
      .int()
      .min(1)
      .max(24 * 365)
      .default(24 * 30),
    /** Failed sign-ins allowed per email address (and 4× that per client address) in the window. */
    SIGNIN_MAX_FAILURES: z.coerce.number().int().min(1).max(1000).default(5),
    SIGNIN_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86400).default(900),
    /** Largest JSON or form body accepted, in bytes. */
    BODY_LIMIT_BYTES: z.coerce
      .number()
      .int()
      .min(1024)
      .default(1024 * 1024),
    /** How long a graceful shutdown waits for in-flight requests and jobs before closing them. */
    SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(0).default(10_000),
    /** Largest activity file accepted by an upload, in bytes (also the cap on a gzip file's decompressed size). */
    UPLOAD_MAX_FILE_BYTES: z.coerce
      .number()
      .int()
      .min(1024)
      .default(64 * 1024 * 1024),
    /** Largest history archive (zip) accepted by POST /api/v1/activities/backfill, in bytes. */
    BACKFILL_MAX_ARCHIVE_BYTES: z.coerce
      .number()
      .int()
      .min(1024)
      .default(4 * 1024 * 1024 * 1024),
    /**
     * A request answered before its body was read (413, 422, 401) has the rest of its body read and
     * discarded, so its keep-alive connection stays usable: at most this many bytes (default 4 ×
     * UPLOAD_MAX_FILE_BYTES) and seconds; a longer body is not read and its connection is closed.
     */
    REJECTED_BODY_DRAIN_BYTES: z.coerce.number().int().min(0).optional(),
    REJECTED_BODY_DRAIN_SECONDS: z.coerce.number().min(0).max(3600).default(30),
    /** Files one worker process ingests at once (uploads and backfills share the ingest queue). */
    INGEST_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(2),
    /** A file's parse in the engine (decode, resample, summary, curves) that takes longer fails with `ingest_timeout`; its thread is stopped. */
    /** A worker process of its own (`npm run worker`) over this resident memory takes no new ingest, backfill or curves job until it is under 80 % of it; 0: no cap. */
    WORKER_MAX_RSS_MB: z.coerce.number().int().min(0).max(1_048_576).default(2048),
    INGEST_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(120_000),
    /**
     * Housekeeping queues again the ingest of a source still `processing` this long after it was
     * stored whose job is gone or over (Redis restarted empty, a worker killed twice, retries spent
     * while PostgreSQL was down); a source whose job waits or runs is never queued twice.
     */
    STALE_SOURCE_SECONDS: z.coerce
      .number()
      .int()
      .min(1)
      .max(7 * 86400)
      .default(15 * 60),
    /** How often the workers run housekeeping (the schedule is one per deployment, however many worker processes). */
    HOUSEKEEPING_EVERY_SECONDS: z.coerce
      .number()
      .int()
      .min(1)
      .max(7 * 86400)
      .default(3600),
    /** How long a job stays claimed without its worker's heartbeat: a killed worker's job runs again after this. */
    JOB_LOCK_MS: z.coerce.number().int().min(1_000).max(600_000).default(30_000),
    /** Threads of the engine's piscina pool in each process (0: one per CPU). */
    ENGINE_THREADS: z.coerce.number().int().min(0).max(256).default(0),
    /** Longest a curve or time-series computation may run before the request is answered 503. */
    COMPUTE_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
    /**
     * The event loop counts as blocked when a 100 ms timer comes this much later than due: one
     * warning names the requests in flight, and /readyz answers 503 for EVENT_LOOP_WINDOW_MS after.
     */
    EVENT_LOOP_BLOCKED_MS: z.coerce.number().int().min(20).max(60_000).default(500),
    /** How long /readyz stays 503 after the event loop was blocked; also the span of the delay it reports. */
    EVENT_LOOP_WINDOW_MS: z.coerce.number().int().min(1_000).max(600_000).default(10_000),
    /** How long computed curve responses stay cached in Redis (0: no cache); a change to the user's activities invalidates them at once. */
    CURVE_CACHE_SECONDS: z.coerce
      .number()
      .int()
      .min(0)
      .max(7 * 86400)
      .default(600),
    /** Larger computed responses are not cached. */
    CURVE_CACHE_MAX_BYTES: z.coerce
      .number()
      .int()
      .min(0)
      .default(8 * 1024 * 1024),
    /** How long pages of the activity list (and the latest activity) stay cached in Redis (0: no cache); a change to what they show invalidates them at once. */
    READ_CACHE_SECONDS: z.coerce.number().int().min(0).max(86400).default(300),
    /** Megabytes of those cached pages each API process also keeps in memory, so a repeated poll needs no Redis round trip (0: Redis only). */
    READ_CACHE_MEMORY_MB: z.coerce.number().int().min(0).max(65536).default(64),
    /**
     * Both Redis caches (computed curves, polled pages) together hold at most this many megabytes:
     * past it the entries closest to expiry go first. Each user's entries of a superseded data
     * version are dropped when a newer one is stored (api/services/activities/cache-store.ts).
     */
    CACHE_MAX_MB: z.coerce.number().int().min(1).max(65_536).default(256),
    /** At most this many cached entries per user and cache (a page or a curve per query). */
    CACHE_MAX_ENTRIES_PER_USER: z.coerce.number().int().min(1).max(100_000).default(200),
    /**
     * Requests to the token-authenticated API allowed per credential (an application's grant, a
     * personal token, a web session) per API_RATE_WINDOW_SECONDS; past it 429 with Retry-After.
     * 0: no limit.
     */
    API_RATE_LIMIT: z.coerce.number().int().min(0).max(1_000_000).default(3_000),
    API_RATE_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(60),
    /**
     * Failed credentials allowed per client address (an IPv6 client is its /64) per
     * AUTH_FAILURE_WINDOW_SECONDS: token-endpoint requests refused (400, 401) and bearer tokens that are
     * not ours or revoked (an expired one of ours is not counted). Past it, 429 with Retry-After for the
     * token endpoint and for failing bearer tokens from that address. 0: no limit.
     */
    AUTH_FAILURE_LIMIT: z.coerce.number().int().min(0).max(1_000_000).default(60),
    AUTH_FAILURE_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(60),
    /** The backfill-status stream writes a line this often and closes after BACKFILL_STATUS_SECONDS. */
    BACKFILL_STATUS_INTERVAL_MS: z.coerce.number().int().min(10).max(60_000).default(2_000),
    BACKFILL_STATUS_SECONDS: z.coerce.number().int().min(1).max(3600).default(60),
    /** Accept plain-http loopback webhook endpoints (http://localhost…, http://127.0.0.1…): development only. */
    WEBHOOK_ALLOW_HTTP_LOOPBACK: boolean.default(false),
    /** A webhook attempt fails unless a 2xx arrives within this time. */
    WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(5_000),
    /** The first retry of a failed delivery waits this long; each next one twice as long… */
    WEBHOOK_RETRY_BASE_MS: z.coerce.number().int().min(10).default(10_000),
    /** …until the next wait would exceed this: then the delivery has failed. */
    WEBHOOK_RETRY_MAX_DELAY_MS: z.coerce
      .number()
      .int()
      .min(10)
      .default(24 * 3600 * 1000),
  })
  .superRefine((c, ctx) => {
    if (c.STORAGE !== 's3') return;
    for (const name of ['S3_BUCKET', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY'] as const)
      if (!c[name]) ctx.addIssue({ code: 'custom', path: [name], message: 'required when STORAGE=s3' });
    // DATA_DIR/secrets.key would be one host's own, and lost with its disk.
    if (!c.SECRETS_KEY)
      ctx.addIssue({
        code: 'custom',
        path: ['SECRETS_KEY'],
        message:
          'required when STORAGE=s3: every host must hold the same key (a local deployment moving to S3: the contents of DATA_DIR/secrets.key)',
      });
  })
  .transform((c) => ({ ...c, BASE_URL: (c.BASE_URL ?? `http://localhost:${c.PORT}`).replace(/\/+$/, '') }));

export type Config = z.output<typeof ConfigSchema>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Parse the environment once; an invalid value throws a ConfigError naming the variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  // Empty strings mean "unset", as in most shells' `VAR= cmd`.
  const defined = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = ConfigSchema.safeParse(defined);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => {
        const name = String(issue.path[0] ?? 'environment');
        const value = defined[name];
        const shown = name.endsWith('_URL') ? redactUrl(value ?? '') : name.endsWith('_KEY') ? `${(value ?? '').length} characters` : value;
        return `${name}: ${issue.message}${value === undefined ? '' : ` (got ${JSON.stringify(shown)})`}`;
      }),
    );
  }
  return parsed.data;
}

/** A URL fit for logs and messages: its password replaced by ***. */
export function redactUrl(value: string): string {
  try {
    const url = new URL(value);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return value;
  }
}
