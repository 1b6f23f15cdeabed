import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import type { Config } from './config.ts';
import path from 'node:path';
import type { ObjectStore } from './object-store.ts';
import { createLocalFiles, type LocalFiles } from './object-cache.ts';
import { createLocalObjectStore } from './object-store-local.ts';
import { createS3ObjectStore, s3Client, type S3Settings } from './object-store-s3.ts';

/** The object store and the local files of its objects, as one process uses them. */
export interface StoredFiles {
  store: ObjectStore;
  local: LocalFiles;
}

/** The store the configuration names, and its local files (copies under DATA_DIR/cache within DISK_CACHE_MAX_MB for S3). */
export function createStoredFiles(config: Config): StoredFiles {
  const store = createObjectStore(config);
  const local = createLocalFiles(store, {
    dir: path.resolve(config.DATA_DIR, 'cache'),
    budgetBytes: config.DISK_CACHE_MAX_MB * 1024 * 1024,
  });
  return { store, local };
}

/** The object store the configuration names (STORAGE). */
export function createObjectStore(config: Config): ObjectStore {
  return config.STORAGE === 's3' ? createS3ObjectStore(s3Settings(config)) : createLocalObjectStore(config.DATA_DIR);
}

export function s3Settings(config: Config): S3Settings {
  return {
    endpoint: config.S3_ENDPOINT,
    bucket: config.S3_BUCKET!,
    region: config.S3_REGION,
    accessKeyId: config.S3_ACCESS_KEY_ID!,
    secretAccessKey: config.S3_SECRET_ACCESS_KEY!,
    forcePathStyle: config.S3_FORCE_PATH_STYLE,
  };
}

/** How far apart the store's clock and ours may be: S3 refuses a request signed more than 15 minutes off. */
const MAX_SKEW_MS = 15 * 60_000;
const CHECK_TIMEOUT_MS = 5_000;

/**
 * Whether the configured S3 store can be used, checked once at start: one line naming the setting
 * at fault, or null. In order: the endpoint answers, and as S3 does (an `x-amz-request-id` header);
 * its clock is within 15 minutes of ours; the credentials are accepted; the bucket exists. A local
 * store always can.
 */
export async function objectStoreProblem(config: Config, now: () => number = Date.now): Promise<string | null> {
  if (config.STORAGE !== 's3') return null;
  const s = s3Settings(config);
  const endpoint = (s.endpoint ?? `https://s3.${s.region}.amazonaws.com`).replace(/\/+$/, '');
  let answer: Response;
  try {
    answer = await fetch(`${endpoint}/${s.bucket}`, { method: 'HEAD', signal: AbortSignal.timeout(CHECK_TIMEOUT_MS), redirect: 'manual' });
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message;
    return `S3_ENDPOINT: no answer from ${endpoint} (${cause})`;
  }
  if (!answer.headers.get('x-amz-request-id'))
    return `S3_ENDPOINT: ${endpoint} answers HTTP ${answer.status}, but not as an S3 store does (no x-amz-request-id header)`;
  const date = Date.parse(answer.headers.get('date') ?? '');
  if (Number.isFinite(date) && Math.abs(date - now()) > MAX_SKEW_MS)
    return `S3_ENDPOINT: the store's clock and this host's differ by ${describeSkew(date - now())}, more than the 15 min S3 allows; set this host's clock (NTP)`;
  // One attempt, no clock correction: a refusal is reported as it is.
  const client = s3Client(s, { attempts: 1, timeoutMs: CHECK_TIMEOUT_MS });
  try {
    await client.send(new ListObjectsV2Command({ Bucket: s.bucket, MaxKeys: 1 }));
    return null;
  } catch (err) {
    return refusal(err, s, endpoint);
  } finally {
    client.destroy();
  }
}

function refusal(err: unknown, s: S3Settings, endpoint: string): string {
  const e = err as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  const status = e.$metadata?.httpStatusCode;
  switch (e.name) {
    case 'NoSuchBucket':
      return `S3_BUCKET: there is no bucket ${JSON.stringify(s.bucket)} at ${endpoint}; create it first`;
    case 'InvalidAccessKeyId':
      return `S3_ACCESS_KEY_ID: ${endpoint} knows no access key ${JSON.stringify(s.accessKeyId)}`;
    case 'SignatureDoesNotMatch':
      return `S3_SECRET_ACCESS_KEY: ${endpoint} refused the requests' signature: the secret key does not belong to S3_ACCESS_KEY_ID`;
    case 'AccessDenied':
      return `S3_ACCESS_KEY_ID: access key ${JSON.stringify(s.accessKeyId)} may not read bucket ${JSON.stringify(s.bucket)}`;
    case 'RequestTimeTooSkewed':
      return `S3_ENDPOINT: ${endpoint} refused this host's clock (RequestTimeTooSkewed); set this host's clock (NTP)`;
    case 'PermanentRedirect':
    case 'AuthorizationHeaderMalformed':
      return `S3_REGION: bucket ${JSON.stringify(s.bucket)} is not in region ${JSON.stringify(s.region)} (${e.name})`;
    default:
      return `S3_ENDPOINT: ${endpoint} did not list bucket ${JSON.stringify(s.bucket)} (${e.name ?? 'error'}${status ? `, HTTP ${status}` : ''}: ${(e.message ?? '').split('\n')[0]})`;
  }
}

function describeSkew(ms: number): string {
  const minutes = Math.round(Math.abs(ms) / 60_000);
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}
