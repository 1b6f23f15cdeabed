import { existsSync } from 'node:fs';
import path from 'node:path';
import { crc } from './fit-writer.ts';

/**
 * The shared real-device fixtures: `FIXTURES_DIR` when set, else `../shared/fixtures` beside the
 * checkout (the project's layout), else `/work/shared/fixtures` (a clone made elsewhere on a
 * development machine).
 */
export function fixturesDir(): string {
  const candidates = [
    process.env.FIXTURES_DIR,
    path.join(import.meta.dirname, '..', '..', '..', 'shared', 'fixtures'),
    '/work/shared/fixtures',
  ].filter((c): c is string => Boolean(c));
  const found = candidates.find((c) => existsSync(path.join(c, 'fit')));
  if (!found) throw new Error(`FIT fixtures not found; looked in ${candidates.join(', ')} (set FIXTURES_DIR)`);
  return found;
}

/**
 * Copy `n` of a FIT file, with other bytes but the same content: its header's profile version (which
 * no parse reads) moved by `n`, the header CRC (when given) and the file CRC rewritten. A user can
 * upload the copies of one real file side by side (uploads are told apart by their bytes' hash).
 * Copy 0 is the file itself.
 */
export function fitCopy(bytes: Uint8Array, n: number): Uint8Array {
  const out = new Uint8Array(bytes); // a copy, even of a Buffer
  if (n === 0) return out;
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  const headerSize = out[0]!;
  view.setUint16(2, (view.getUint16(2, true) + n) & 0xffff, true);
  if (headerSize >= 14 && view.getUint16(12, true) !== 0) view.setUint16(12, crc(out, 0, 12), true);
  const end = headerSize + view.getUint32(4, true);
  view.setUint16(end, crc(out, 0, end), true);
  return out;
}
