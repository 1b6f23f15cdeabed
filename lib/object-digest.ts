import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';

/**
 * The entity tag an S3 store gives an object, computed of a local file or bytes, so that a copy is
 * verified without reading it back: the MD5 of the bytes for an object written in one PUT; for one
 * written in parts of PART_BYTES, the MD5 of the parts' MD5s followed by `-<parts>`.
 * lib/object-store-s3.ts writes every object over MULTIPART_THRESHOLD in parts of PART_BYTES, so the
 * same bytes always get the same tag, whichever backend or tool wrote them.
 */
export const PART_BYTES = 16 * 1024 * 1024;
export const MULTIPART_THRESHOLD = 64 * 1024 * 1024;

export function bytesEtag(bytes: Uint8Array): string {
  return createHash('md5').update(bytes).digest('hex');
}

/** The tag of a file, read once in PART_BYTES pieces. */
export async function fileEtag(file: string): Promise<{ size: number; etag: string }> {
  const handle = await open(file, 'r');
  try {
    const { size } = await handle.stat();
    const whole = createHash('md5');
    const parts: Buffer[] = [];
    const buffer = Buffer.allocUnsafe(Math.min(PART_BYTES, Math.max(size, 1)));
    for (let at = 0; at < size; ) {
      const { bytesRead } = await handle.read(buffer, 0, Math.min(PART_BYTES, size - at), at);
      if (!bytesRead) throw new Error(`${file} shrank while it was read`);
      const piece = buffer.subarray(0, bytesRead);
      if (size > MULTIPART_THRESHOLD) parts.push(createHash('md5').update(piece).digest());
      else whole.update(piece);
      at += bytesRead;
    }
    if (size <= MULTIPART_THRESHOLD) return { size, etag: whole.digest('hex') };
    return { size, etag: `${createHash('md5').update(Buffer.concat(parts)).digest('hex')}-${parts.length}` };
  } finally {
    await handle.close();
  }
}
