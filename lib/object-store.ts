import type { Readable } from 'node:stream';
import { isUuid } from './ids.ts';

/**
 * Where originals, sample files and history archives are kept: the source of truth for files, as
 * PostgreSQL is for rows. Two backends with one contract (lib/object-store-local.ts, the data
 * directory; lib/object-store-s3.ts, an S3-compatible store), so every caller is written once:
 *
 * - `put`, `putFile`: the object appears whole or not at all (a temporary file renamed; an S3 PUT or
 *   a completed multipart upload), and writing the same key again replaces it, so a retried job
 *   writes the same key to the same end;
 * - `get`, `open`, `download`: an absent key is `ObjectMissing`; `download` writes its local file
 *   whole or not at all;
 * - a store that cannot be reached (or answers 5xx) is `StoreUnavailable`: the caller answers 503 or
 *   lets its job wait, never loses what it was given.
 *
 * Keys are made here only, from generated ids, never from user input:
 *
 *   users/{user_id}/sources/{source_id}.{fit|csv|gpx|tcx}   an original, for /download and reprocessing
 *   users/{user_id}/activities/{activity_id}.parquet        an activity's 1 Hz samples
 *   backfills/{backfill_id}.zip                             a history archive until it is read
 */
export interface ObjectStore {
  readonly kind: 'local' | 's3';
  /** Where, for logs and the CLI: a directory or endpoint/bucket (never a secret). */
  readonly where: string;
  put(key: string, bytes: Uint8Array): Promise<void>;
  /** The file's bytes as the object; with `move`, the file is consumed (renamed where the backend can, else removed after). */
  putFile(key: string, file: string, opts?: { move?: boolean }): Promise<void>;
  get(key: string): Promise<Buffer>;
  /** The object as a stream with its size, for answers that pass it on. */
  open(key: string): Promise<{ size: number; body: Readable }>;
  /** The object into a local file, atomically (a temporary file beside it, renamed). */
  download(key: string, file: string): Promise<void>;
  /** Its size and entity tag (MD5 for a one-part object; lib/object-digest.ts computes the same of a file), or null. */
  head(key: string): Promise<{ size: number; etag: string } | null>;
  /** Every object under `prefix`, in key order. */
  list(prefix: string): AsyncIterable<{ key: string; size: number }>;
  /** Remove objects; absent ones are no error. */
  remove(keys: readonly string[]): Promise<void>;
  /** Remove every object under `prefix`; how many there were. */
  removePrefix(prefix: string): Promise<number>;
  /** The local file that is the object itself (the directory backend), or undefined (a remote store: use a copy). */
  fileOf?(key: string): string;
  /** Multipart uploads begun before `before` and never completed (a writer killed mid-way): their parts removed; how many. */
  abortIncompleteUploads?(before: Date): Promise<number>;
  /** Close connections. */
  close(): void;
}

/** The key names nothing stored. */
export class ObjectMissing extends Error {
  readonly code = 'object_missing';
  constructor(readonly key: string) {
    super(`no stored object ${key}`);
  }
}

/** The store could not be reached or failed (5xx, timeout, refused connection): try again later. */
export class StoreUnavailable extends Error {
  readonly code = 'store_unavailable';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** What a missing key was, in words a client can act on. */
export function describeMissing(key: string): string {
  const sample = /^users\/[^/]+\/activities\/([^/.]+)\.parquet$/.exec(key);
  if (sample)
    return `The samples of activity ${sample[1]} are missing from the object store (removed outside the service): upload its file again, or delete the activity`;
  const source = /^users\/[^/]+\/sources\/([^/.]+)\.\w+$/.exec(key);
  if (source) return `The original file of source ${source[1]} is missing from the object store (removed outside the service)`;
  return 'A stored file is missing from the object store (removed outside the service)';
}

export function isObjectMissing(err: unknown): err is ObjectMissing {
  return err instanceof ObjectMissing;
}

export function isStoreUnavailable(err: unknown): err is StoreUnavailable {
  return err instanceof StoreUnavailable;
}

function id(value: string): string {
  if (!isUuid(value)) throw new Error(`not a generated id: ${JSON.stringify(value)}`);
  return value;
}

export type OriginalType = 'fit' | 'csv' | 'gpx' | 'tcx';

export function sourceKey(userId: string, sourceId: string, type: OriginalType): string {
  return `users/${id(userId)}/sources/${id(sourceId)}.${type}`;
}

export function sampleKey(userId: string, activityId: string): string {
  return `users/${id(userId)}/activities/${id(activityId)}.parquet`;
}

export function archiveKey(backfillId: string): string {
  return `backfills/${id(backfillId)}.zip`;
}

/** Everything of one user's. */
export function userPrefix(userId: string): string {
  return `users/${id(userId)}/`;
}

/** What a key may look like (for keys read back from a listing): the shapes above, nothing else. */
export const KEY_PATTERN =
  /^(users\/[0-9a-f-]{36}\/(sources\/[0-9a-f-]{36}\.(fit|csv|gpx|tcx)|activities\/[0-9a-f-]{36}\.parquet)|backfills\/[0-9a-f-]{36}\.zip)$/;
