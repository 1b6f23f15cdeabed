/**
 * `.gz` entries of a history import (lib/archive.ts) gunzipped within a cap on what comes out.
 */
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { ArchiveError } from './archive-model.ts';

/** A gzip stream a little larger than its content is fine (stored blocks, header, trailer). */
export function gzipInputCap(maxBytes: number): number {
  return maxBytes + Math.ceil(maxBytes / 1000) + 1024;
}

const gunzip = promisify(zlib.gunzip) as (buffer: Buffer, options: zlib.ZlibOptions) => Promise<Buffer>;

export async function gunzipCapped(bytes: Buffer, maxBytes: number, name: string): Promise<Buffer> {
  try {
    const out = await gunzip(bytes, { maxOutputLength: Math.max(1, maxBytes) });
    if (out.length > maxBytes) throw new RangeError('over the cap');
    return out;
  } catch (error) {
    if (error instanceof RangeError || (error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
      throw new ArchiveError('too_large', `${JSON.stringify(name)} decompresses to more than ${maxBytes} bytes.`);
    }
    throw new ArchiveError('corrupt_entry', `${JSON.stringify(name)} is not valid gzip: ${(error as Error).message}`);
  }
}
