/**
 * A plain directory tree read as a history import (for operators; lib/archive.ts): listed like an
 * archive, its files read within a cap, symbolic links followed only to regular files inside it.
 */
import { constants as fsConstants } from 'node:fs';
import { lstat, open, readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import {
  ArchiveError,
  DEFAULT_ARCHIVE_LIMITS,
  limitsOf,
  type ArchiveEntry,
  type ArchiveLimits,
  type ArchiveListing,
  type ContainerEntry,
  type SkipReason,
  type SkippedEntry,
} from './archive-model.ts';
import { classify, NOT_AN_ACTIVITY, unsafeName } from './archive-names.ts';
import { gunzipCapped, gzipInputCap } from './archive-gzip.ts';

/**
 * List a directory tree like an archive: recursive, in sorted order (code units, per directory),
 * same name rules, extension filter and limits (no ratio: nothing is compressed but `.gz`).
 * Symbolic links are followed only to regular files inside the directory.
 */
export async function readDirectory(
  dir: string,
  limits?: Partial<ArchiveLimits>,
  opts: { nested?: boolean } = {},
): Promise<ArchiveListing & { containers: ContainerEntry[] }> {
  const l = limitsOf(limits);
  const root = await realpath(dir);
  if (!(await stat(root)).isDirectory()) throw new ArchiveError('invalid_archive', `${dir} is not a directory.`);
  const entries: ArchiveEntry[] = [];
  const containers: ContainerEntry[] = [];
  const skipped: SkippedEntry[] = [];
  let totalBytes = 0;
  let index = -1;
  let walked = 0;

  const walk = async (relDir: string): Promise<void> => {
    const dirents = await readdir(relDir === '' ? root : path.join(root, ...relDir.split('/')), { withFileTypes: true });
    dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    walked += dirents.length;
    if (walked > l.maxEntries) throw new ArchiveError('too_many_entries', `The directory has more than ${l.maxEntries} entries.`);
    for (const d of dirents) {
      index++;
      const name = relDir === '' ? d.name : `${relDir}/${d.name}`;
      const abs = path.join(root, ...name.split('/'));
      const skip = (reason: SkipReason, detail: string) => skipped.push({ name, index, reason, detail });
      const c = classify(d.isDirectory() ? `${name}/` : name);
      if (c.kind === 'ignore') continue;
      if (c.kind === 'directory') {
        await walk(name);
        continue;
      }
      if (c.kind === 'skip' && c.reason === 'unsafe_name') {
        skip(c.reason, c.detail);
        continue;
      }
      let size: number;
      if (d.isSymbolicLink()) {
        let target: string;
        try {
          target = await realpath(abs);
        } catch {
          skip('unsupported', 'broken symbolic link');
          continue;
        }
        if (!inside(root, target)) {
          skip('unsafe_name', 'symbolic link leading outside the directory');
          continue;
        }
        const s = await stat(target);
        if (s.isDirectory()) {
          skip('unsupported', 'symbolic link to a directory (not followed)');
          continue;
        }
        if (!s.isFile()) {
          skip('unsupported', 'not a regular file');
          continue;
        }
        size = s.size;
      } else if (d.isFile()) {
        size = (await lstat(abs)).size;
      } else {
        skip('unsupported', 'not a regular file');
        continue;
      }
      if (c.kind === 'skip') {
        skip(c.reason, c.detail);
        continue;
      }
      if (c.kind === 'archive' && !opts.nested) {
        skip('unsupported', NOT_AN_ACTIVITY);
        continue;
      }
      // A zip inside (read through) is bounded by the history's total, not by the cap of one file.
      if (c.kind !== 'archive' && size > l.maxEntryBytes) {
        skip('too_large', `${size} bytes; at most ${l.maxEntryBytes} per file`);
        continue;
      }
      totalBytes += size;
      if (totalBytes > l.maxTotalBytes)
        throw new ArchiveError('too_large', `The directory's files add up to more than ${l.maxTotalBytes} bytes.`);
      if (c.kind === 'archive') containers.push({ name, index, compressedSize: size, uncompressedSize: size });
      else
        entries.push({ name, index, compressedSize: size, uncompressedSize: size, format: c.format, gzip: c.gzip, fileName: c.fileName });
    }
  };
  await walk('');
  return { entries, skipped, totalBytes, containers };
}

/**
 * The path of a listed file of `dir` (a zip found by readDirectory with `nested`), checked again to
 * resolve to a regular file inside it: what lib/archive-nested.ts opens as a zip.
 */
export async function directoryFilePath(dir: string, name: string): Promise<string> {
  if (unsafeName(name) !== null) throw new ArchiveError('unsafe_name', `${JSON.stringify(name)} is not a safe name.`);
  const root = await realpath(dir);
  const target = await realpath(path.join(root, ...name.split('/'))).catch(() => {
    throw new ArchiveError('not_found', `No file ${JSON.stringify(name)} in the directory.`);
  });
  if (!inside(root, target)) throw new ArchiveError('unsafe_name', `${JSON.stringify(name)} leads outside the directory.`);
  if (!(await stat(target)).isFile()) throw new ArchiveError('unsupported', `${JSON.stringify(name)} is not a regular file.`);
  return target;
}

function inside(root: string, target: string): boolean {
  const rel = path.relative(root, target);
  return rel !== '' && !rel.startsWith(`..${path.sep}`) && rel !== '..' && !path.isAbsolute(rel);
}

/**
 * Read one file of a directory listing (by its relative name or listed entry), gunzipped for
 * `.gz`, at most `maxBytes`. The name is checked like a listed one and the file must resolve
 * (symbolic links included) to a regular file inside `dir`.
 */
export async function readDirectoryEntry(
  dir: string,
  entry: ArchiveEntry | string,
  maxBytes: number = DEFAULT_ARCHIVE_LIMITS.maxEntryBytes,
): Promise<Buffer> {
  const name = typeof entry === 'string' ? entry : entry.name;
  const c = classify(name);
  if (c.kind === 'skip') throw new ArchiveError(c.reason, `${JSON.stringify(name)}: ${c.detail}.`);
  if (c.kind !== 'file') throw new ArchiveError('unsupported', `${JSON.stringify(name)} is not an activity file.`);
  const root = await realpath(dir);
  let target: string;
  try {
    target = await realpath(path.join(root, ...name.split('/')));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      throw new ArchiveError('not_found', `No file ${JSON.stringify(name)} in the directory.`);
    throw error;
  }
  if (!inside(root, target)) throw new ArchiveError('unsafe_name', `${JSON.stringify(name)} leads outside the directory.`);

  const cap = c.gzip ? gzipInputCap(maxBytes) : maxBytes;
  const tooLarge = () => new ArchiveError('too_large', `${JSON.stringify(name)} holds more than ${maxBytes} bytes.`);
  const handle = await open(target, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
  let raw: Buffer;
  try {
    const s = await handle.stat();
    if (!s.isFile()) throw new ArchiveError('unsupported', `${JSON.stringify(name)} is not a regular file.`);
    if (s.size > cap) throw tooLarge();
    // Read to the end, never more than cap + 1 bytes (the file may have grown since stat).
    const chunks: Buffer[] = [];
    let total = 0;
    let want = Math.min(cap + 1, s.size + 1);
    for (;;) {
      const buffer = Buffer.allocUnsafe(want);
      const { bytesRead } = await handle.read(buffer, 0, want, null);
      if (bytesRead === 0) break;
      chunks.push(buffer.subarray(0, bytesRead));
      total += bytesRead;
      if (total > cap) throw tooLarge();
      want = Math.min(64 * 1024, cap + 1 - total);
    }
    raw = Buffer.concat(chunks, total);
  } finally {
    await handle.close();
  }
  return c.gzip ? gunzipCapped(raw, maxBytes, name) : raw;
}
