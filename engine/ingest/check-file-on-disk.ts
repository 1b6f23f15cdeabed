import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { open, rm } from 'node:fs/promises';

import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { TooLarge } from './check-file.ts';
import { declaredFormat, isGzip, sniff, type ActivityFormat } from './sniff.ts';

/**
 * The streaming form of checkFile, for uploads: the file stays on disk, a gzip file is decompressed
 * to a file beside it (capped at `maxBytes`), and the SHA-256 is computed as the bytes go by, so a
 * request's memory is a few stream buffers whatever the files' sizes.
 */

/** What a file on disk is, before anything is stored. */
export interface CheckedPath {
  filename: string;
  /** The decompressed content (a new file beside the upload for gzip; the upload itself otherwise). */
  path: string;
  size: number;
  /** Of the content at `path`; empty for a refused file. */
  sha256: string;
  format: ActivityFormat | undefined;
  /** Why the content is refused (unknown format), when it is. */
  unsupported?: string;
}

/** What sniff reads of a file's start. */
const HEAD_BYTES = 64 * 1024;

/** Decompress (gzip, capped at `maxBytes`), sniff and hash the file at `file`; throws TooLarge past the cap. */
export async function checkFileOnDisk(filename: string, file: string, maxBytes: number): Promise<CheckedPath> {
  const raw = await readHead(file, HEAD_BYTES);
  if (raw.size > maxBytes) throw new TooLarge(filename);
  const name = filename.replace(/\.gz$/i, '');
  let content = { path: file, size: raw.size, sha256: '', head: raw.head };
  if (isGzip(raw.head)) {
    const out = `${file}.inflated-${randomBytes(4).toString('hex')}`;
    try {
      const { size, sha256 } = await copyHashed(createReadStream(file).pipe(zlib.createGunzip()), out, maxBytes, filename);
      content = { path: out, size, sha256, head: (await readHead(out, HEAD_BYTES)).head };
    } catch (err) {
      await rm(out, { force: true });
      if (err instanceof TooLarge) throw err;
      // A damaged gzip file of a supported name is kept as it is and fails alone (invalid_gzip) in the worker.
      const declared = declaredFormat(filename);
      if (!declared)
        return { filename, path: file, size: raw.size, sha256: '', format: undefined, unsupported: 'the gzip stream is corrupt' };
      return {
        filename: name,
        path: file,
        size: raw.size,
        sha256: (await copyHashed(createReadStream(file), undefined, maxBytes, filename)).sha256,
        format: declared,
      };
    }
  }
  const sniffed = sniff(name, content.head);
  if (!('format' in sniffed))
    return { filename: name, path: content.path, size: content.size, sha256: '', format: undefined, unsupported: sniffed.unsupported };
  const sha256 = content.sha256 || (await copyHashed(createReadStream(file), undefined, maxBytes, filename)).sha256;
  return { filename: name, path: content.path, size: content.size, sha256, format: sniffed.format };
}

async function readHead(file: string, bytes: number): Promise<{ head: Buffer; size: number }> {
  const handle = await open(file);
  try {
    const { size } = await handle.stat();
    const head = Buffer.alloc(Math.min(size, bytes));
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    return { head: head.subarray(0, bytesRead), size };
  } finally {
    await handle.close();
  }
}

/** Stream `source` through SHA-256 (into `to` when given), failing with TooLarge past `maxBytes`. */
async function copyHashed(
  source: NodeJS.ReadableStream,
  to: string | undefined,
  maxBytes: number,
  filename: string,
): Promise<{ size: number; sha256: string }> {
  const hash = createHash('sha256');
  let size = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (size > maxBytes) return done(new TooLarge(filename));
      hash.update(chunk);
      done(null, to ? chunk : undefined);
    },
  });
  if (to) await pipeline(source, meter, createWriteStream(to, { flags: 'wx' }));
  else
    await pipeline(source, meter, async function discard(chunks: AsyncIterable<unknown>) {
      for await (const _ of chunks);
    });
  return { size, sha256: hash.digest('hex') };
}
