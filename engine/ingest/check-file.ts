import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { declaredFormat, isGzip, sniff, type ActivityFormat } from './sniff.ts';

/**
 * What an uploaded or archived file is, before anything is stored: its decompressed bytes (gzip,
 * capped), its format by content, and its SHA-256 (sources are unique per user and content).
 */

const gunzip = promisify(zlib.gunzip);

export class TooLarge extends Error {}

const HASH_CHUNK = 1024 * 1024;

/** SHA-256 in 1 MiB steps, yielding to the event loop between them (a 64 MiB file would hold it ~150 ms). */
async function sha256(bytes: Uint8Array): Promise<string> {
  const hash = createHash('sha256');
  for (let at = 0; at < bytes.length; at += HASH_CHUNK) {
    if (at > 0) await new Promise((resolve) => setImmediate(resolve));
    hash.update(bytes.subarray(at, at + HASH_CHUNK));
  }
  return hash.digest('hex');
}

/** A file's decompressed bytes and what they are: checked before anything is stored. */
export interface CheckedFile {
  filename: string;
  bytes: Buffer;
  /** Of the decompressed content; empty for a refused file. */
  sha256: string;
  format: ActivityFormat | undefined;
  /** Why the content is refused (unknown format), when it is. */
  unsupported?: string;
}

/** Decompress (gzip, capped at `maxBytes`), sniff and hash one file. */
export async function checkFile(filename: string, raw: Buffer, maxBytes: number): Promise<CheckedFile> {
  let bytes = raw;
  if (isGzip(raw)) {
    try {
      bytes = await gunzip(raw, { maxOutputLength: maxBytes });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError) throw new TooLarge(filename);
      // A damaged gzip file of a supported name is kept as it is and fails alone (invalid_gzip) in the worker.
      const declared = declaredFormat(filename);
      return declared
        ? { filename: filename.replace(/\.gz$/i, ''), bytes: raw, sha256: await sha256(raw), format: declared }
        : { filename, bytes: raw, sha256: '', format: undefined, unsupported: 'the gzip stream is corrupt' };
    }
  }
  const name = filename.replace(/\.gz$/i, '');
  const sniffed = sniff(name, bytes);
  if (!('format' in sniffed)) return { filename: name, bytes, sha256: '', format: undefined, unsupported: sniffed.unsupported };
  return { filename: name, bytes, sha256: await sha256(bytes), format: sniffed.format };
}
