import { createWriteStream } from 'node:fs';
import { open, rm } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { MULTIPART_THRESHOLD, PART_BYTES } from './object-digest.ts';
import { KEY_PATTERN, ObjectMissing, type ObjectStore, StoreUnavailable } from './object-store.ts';
import { writeAtomically } from './storage.ts';

/** What the S3 backend is given (lib/config.ts's S3_* settings). */
export interface S3Settings {
  endpoint: string | undefined;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  forcePathStyle: boolean;
}

/** How long a request may wait for a connection, and for the next bytes, before it counts as an outage. */
const CONNECT_TIMEOUT_MS = 2_000;
const SOCKET_TIMEOUT_MS = 30_000;
/** Deletions of a prefix in flight at once. */
const DELETE_CONCURRENCY = 16;

// The pinned SDK runs on Node.js 20; its notice that later versions will need 22 would print in every process.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/** A client of the store: three attempts and the timeouts above, unless `opts` says otherwise (the start-up check: one attempt, 5 s). */
export function s3Client(s: S3Settings, opts: { attempts?: number; timeoutMs?: number } = {}): S3Client {
  return new S3Client({
    endpoint: s.endpoint,
    region: s.region,
    forcePathStyle: s.forcePathStyle,
    credentials: { accessKeyId: s.accessKeyId, secretAccessKey: s.secretAccessKey },
    // Content-MD5 is sent where it matters (each put and part); the SDK's default aws-chunked
    // checksums are refused by gateways that predate them (Ceph RGW 16: 411).
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: opts.attempts ?? 3,
    requestHandler: { connectionTimeout: opts.timeoutMs ?? CONNECT_TIMEOUT_MS, requestTimeout: opts.timeoutMs ?? SOCKET_TIMEOUT_MS },
  });
}

/**
 * An S3-compatible store (AWS S3, Ceph RGW, MinIO…) as the object store: each object one S3 object
 * under the same key in one bucket. A put is one PUT with its Content-MD5 (the store refuses bytes
 * that arrive damaged) up to MULTIPART_THRESHOLD, above it a multipart upload of PART_BYTES parts,
 * each with its MD5, completed only when all arrived (aborted otherwise): either way the object
 * becomes visible whole or not at all. Failures that mean "not now" (no connection, timeouts, 5xx,
 * SlowDown) are StoreUnavailable once the SDK's three attempts are spent.
 */
export function createS3ObjectStore(s: S3Settings): ObjectStore {
  const client = s3Client(s);
  const Bucket = s.bucket;
  const send = async <T>(key: string, run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (err) {
      throw classify(err, key);
    }
  };
  const putBytes = (key: string, bytes: Uint8Array) =>
    send(key, () =>
      client.send(new PutObjectCommand({ Bucket, Key: key, Body: bytes, ContentLength: bytes.length, ContentMD5: md5Base64(bytes) })),
    );
  const store: ObjectStore = {
    kind: 's3',
    where: `${s.endpoint ?? `s3.${s.region}.amazonaws.com`}/${s.bucket}`,
    put: async (key, bytes) => {
      if (bytes.length > MULTIPART_THRESHOLD)
        await putParts(client, key, Bucket, (at, n) => Promise.resolve(bytes.subarray(at, at + n)), bytes.length, send);
      else await putBytes(key, bytes);
    },
    async putFile(key, file, opts = {}) {
      const handle = await open(file, 'r');
      try {
        const { size } = await handle.stat();
        const read = async (at: number, n: number) => {
          const buffer = Buffer.allocUnsafe(n);
          const { bytesRead } = await handle.read(buffer, 0, n, at);
          if (bytesRead !== n) throw new Error(`${file} changed while it was stored`);
          return buffer;
        };
        if (size > MULTIPART_THRESHOLD) await putParts(client, key, Bucket, read, size, send);
        else await putBytes(key, await read(0, size));
      } finally {
        await handle.close();
      }
      if (opts.move) await rm(file, { force: true });
    },
    async get(key) {
      const out = await send(key, () => client.send(new GetObjectCommand({ Bucket, Key: key })));
      return send(key, async () => Buffer.from(await out.Body!.transformToByteArray()));
    },
    async open(key) {
      const out = await send(key, () => client.send(new GetObjectCommand({ Bucket, Key: key })));
      return { size: out.ContentLength ?? 0, body: out.Body as Readable };
    },
    download: (key, file) =>
      writeAtomically(file, async (tmp) => {
        const out = await send(key, () => client.send(new GetObjectCommand({ Bucket, Key: key })));
        await send(key, () => pipeline(out.Body as Readable, createWriteStream(tmp)));
      }),
    async head(key) {
      try {
        const out = await send(key, () => client.send(new HeadObjectCommand({ Bucket, Key: key })));
        return { size: out.ContentLength ?? 0, etag: (out.ETag ?? '').replaceAll('"', '') };
      } catch (err) {
        if (err instanceof ObjectMissing) return null;
        throw err;
      }
    },
    async *list(prefix) {
      let token: string | undefined;
      do {
        const page = await send(prefix, () => client.send(new ListObjectsV2Command({ Bucket, Prefix: prefix, ContinuationToken: token })));
        for (const o of page.Contents ?? []) if (o.Key && KEY_PATTERN.test(o.Key)) yield { key: o.Key, size: o.Size ?? 0 };
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
    },
    async remove(keys) {
      await Promise.all(keys.map((key) => send(key, () => client.send(new DeleteObjectCommand({ Bucket, Key: key })))));
    },
    async removePrefix(prefix) {
      let removed = 0;
      let batch: string[] = [];
      for await (const { key } of store.list(prefix)) {
        batch.push(key);
        if (batch.length === DELETE_CONCURRENCY) {
          await store.remove(batch);
          removed += batch.length;
          batch = [];
        }
      }
      await store.remove(batch);
      return removed + batch.length;
    },
    async abortIncompleteUploads(before) {
      let aborted = 0;
      let KeyMarker: string | undefined;
      let UploadIdMarker: string | undefined;
      do {
        const page = await send('', () => client.send(new ListMultipartUploadsCommand({ Bucket, KeyMarker, UploadIdMarker })));
        for (const u of page.Uploads ?? [])
          if (u.Key && u.UploadId && u.Initiated && u.Initiated < before) {
            await send(u.Key, () => client.send(new AbortMultipartUploadCommand({ Bucket, Key: u.Key, UploadId: u.UploadId })));
            aborted++;
          }
        KeyMarker = page.IsTruncated ? page.NextKeyMarker : undefined;
        UploadIdMarker = page.IsTruncated ? page.NextUploadIdMarker : undefined;
      } while (KeyMarker);
      return aborted;
    },
    close: () => client.destroy(),
  };
  return store;
}

/** A multipart upload of `size` bytes read by `read`, parts of PART_BYTES two at a time; aborted on any failure. */
async function putParts(
  client: S3Client,
  key: string,
  Bucket: string,
  read: (at: number, n: number) => Promise<Uint8Array>,
  size: number,
  send: <T>(key: string, run: () => Promise<T>) => Promise<T>,
): Promise<void> {
  const { UploadId } = await send(key, () => client.send(new CreateMultipartUploadCommand({ Bucket, Key: key })));
  const count = Math.ceil(size / PART_BYTES);
  const parts: { ETag: string; PartNumber: number }[] = [];
  try {
    let next = 0;
    const lane = async () => {
      while (next < count) {
        const n = next++;
        const body = await read(n * PART_BYTES, Math.min(PART_BYTES, size - n * PART_BYTES));
        const out = await send(key, () =>
          client.send(
            new UploadPartCommand({
              Bucket,
              Key: key,
              UploadId,
              PartNumber: n + 1,
              Body: body,
              ContentLength: body.length,
              ContentMD5: md5Base64(body),
            }),
          ),
        );
        parts[n] = { ETag: out.ETag!, PartNumber: n + 1 };
      }
    };
    await Promise.all([lane(), lane()]);
    await send(key, () =>
      client.send(new CompleteMultipartUploadCommand({ Bucket, Key: key, UploadId, MultipartUpload: { Parts: parts } })),
    );
  } catch (err) {
    await client.send(new AbortMultipartUploadCommand({ Bucket, Key: key, UploadId })).catch(() => undefined);
    throw err;
  }
}

function md5Base64(bytes: Uint8Array): string {
  return createHash('md5').update(bytes).digest('base64');
}

/** What an SDK failure means here: the key is absent, the store is out of reach for now, or anything else (as it is). */
export function classify(err: unknown, key: string): unknown {
  if (err instanceof ObjectMissing || err instanceof StoreUnavailable) return err;
  const e = err as { name?: string; code?: string; $metadata?: { httpStatusCode?: number }; message?: string };
  const status = e.$metadata?.httpStatusCode;
  if (e.name === 'NoSuchKey' || e.name === 'NotFound' || (status === 404 && e.name !== 'NoSuchBucket')) return new ObjectMissing(key);
  const transient =
    (status !== undefined && status >= 500) ||
    e.name === 'SlowDown' ||
    e.name === 'TimeoutError' ||
    e.name === 'RequestTimeout' ||
    ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ERR_STREAM_PREMATURE_CLOSE'].includes(
      e.code ?? '',
    ) ||
    /socket hang up|ECONNREFUSED|ECONNRESET|timed? ?out|premature close/i.test(e.message ?? '');
  return transient
    ? new StoreUnavailable(`the object store did not answer (${e.name ?? e.code ?? 'error'}: ${e.message ?? ''})`, { cause: err })
    : err;
}
