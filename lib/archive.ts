/**
 * Reading a history import safely: an uploaded zip archive (yauzl) or, for operators, a plain
 * directory tree. Both give the same entry shape; nothing is ever extracted to disk (entries are
 * read into memory with a hard cap), so a hostile name cannot write anywhere, and names are
 * checked anyway so that what we report and store is clean.
 *
 * What is listed: files whose name ends (case-insensitively) in `.fit`, `.gpx`, `.tcx` or `.csv`,
 * each possibly followed by `.gz`. A `.zip` entry is skipped as `unsupported` here; a history import
 * opens it as a nested archive instead (./archive-nested.ts). Directories, anything under `__MACOSX/` and dot-files/dot-directories (`.DS_Store`,
 * AppleDouble `._ride.fit`) are OS litter and are left out silently. Every other entry not listed
 * is reported in `skipped` with a reason:
 *
 *   unsafe_name  empty, absolute (`/x`, `C:x`), a `..` or `.` segment, an empty segment, a
 *                backslash, NUL or another control character; in a directory, a symbolic link
 *                leading outside it
 *   unsupported  another extension; encrypted; a compression method other than stored/deflate;
 *                (./archive-nested.ts) a nested zip that is not a readable zip;
 *                in a directory, a special file or a symbolic link to a directory (not followed)
 *   too_large    the declared uncompressed size is over `maxEntryBytes`, or (zip entries over
 *                RATIO_MIN_BYTES) over `maxRatio` × the compressed size; (./archive-nested.ts) a
 *                nested zip over what is left of the history's entries or bytes
 *   too_deep     (./archive-nested.ts) a zip nested deeper than `maxDepth`
 *
 * Whole-archive refusals are ArchiveErrors: `invalid_archive` (not a zip, truncated, corrupt
 * central directory, entries whose data overlap: the overlapping-file zip bomb), `too_many_entries`
 * (more than `maxEntries` entries, counted from the end of central directory record before anything
 * is read; for a directory, everything walked), and `too_large` (listed files add up to more than
 * `maxTotalBytes`, or, for a zip over RATIO_MIN_BYTES of them, to more than `maxRatio` × the
 * archive's own size). Reading an entry can fail with
 * `too_large` (more bytes than allowed, whatever the header says), `corrupt_entry` (bad deflate
 * or gzip data, size or CRC-32 mismatch), `not_found`, `unsafe_name`, `unsupported`.
 *
 * yauzl options: `lazyEntries: true`, `validateEntrySizes: true` (a stream yielding more bytes
 * than the central directory declares fails at once), `autoClose: false` (an OpenArchive reads
 * many entries, then closes), `strictFileNames: true` (backslashes are kept, so we refuse them
 * instead of silently turning them into separators) and `decodeStrings: false`: with
 * `decodeStrings: true` yauzl rejects the *whole archive* at the first absolute or `..` name;
 * instead we decode each name with yauzl's own `getFileNameLowLevel` (CP437 or UTF-8, Info-ZIP
 * Unicode path field), apply our checks plus yauzl's `validateFileName`, and skip just that entry.
 *
 * `.gz` entries are gunzipped on read (zlib with `maxOutputLength`), and the entry reports the
 * inner name (`fileName`, without `.gz`) and format.
 *
 * For many reads, `openArchive` keeps the archive open (its central directory is read once);
 * `listArchive` and `readArchiveEntry` are one-shot conveniences.
 *
 * This module opens, lists and reads zip archives and exports the whole of it; the parts live
 * beside it: the entries, limits and errors (./archive-model.ts), the name rules
 * (./archive-names.ts), yauzl's side of a zip (./archive-zip.ts), capped gunzip
 * (./archive-gzip.ts) and directory trees (./archive-directory.ts); a history with the zips inside
 * it is ./archive-nested.ts.
 */
import {
  ArchiveError,
  DEFAULT_ARCHIVE_LIMITS,
  limitsOf,
  type ArchiveEntry,
  type ArchiveLimits,
  type ArchiveListing,
  type OpenArchive,
} from './archive-model.ts';
import { openZip, readZipEntry, scanZip } from './archive-zip.ts';
import { gunzipCapped, gzipInputCap } from './archive-gzip.ts';

export {
  ArchiveError,
  DEFAULT_ARCHIVE_LIMITS,
  RATIO_MIN_BYTES,
  type ArchiveEntry,
  type ArchiveErrorCode,
  type ArchiveLimits,
  type ArchiveListing,
  type EntryFormat,
  type OpenArchive,
  type SkippedEntry,
  type SkipReason,
} from './archive-model.ts';
export { unsafeName } from './archive-names.ts';
export { readDirectory, readDirectoryEntry } from './archive-directory.ts';

/** Open an archive and read its central directory; `read` entries, then `close`. */
export async function openArchive(file: string, limits?: Partial<ArchiveLimits>): Promise<OpenArchive> {
  const l = limitsOf(limits);
  const zipfile = await openZip(file);
  let listing: Awaited<ReturnType<typeof scanZip>>;
  try {
    listing = await scanZip(zipfile, l);
  } catch (error) {
    zipfile.close();
    throw error;
  }
  const { entries, skipped, totalBytes, found } = listing;
  const byName = new Map<string, ArchiveEntry>();
  for (const e of entries) if (!byName.has(e.name)) byName.set(e.name, e);
  const byIndex = new Map(entries.map((e) => [e.index, e]));

  function resolve(ref: ArchiveEntry | number | string): ArchiveEntry {
    const e = typeof ref === 'number' ? byIndex.get(ref) : typeof ref === 'string' ? byName.get(ref) : byIndex.get(ref.index);
    if (e && (typeof ref !== 'object' || e.name === ref.name)) return e;
    const name = typeof ref === 'object' ? ref.name : ref;
    const s = skipped.find((x) => (typeof ref === 'number' ? x.index === ref : x.name === name));
    if (s) throw new ArchiveError(s.reason, `Entry ${JSON.stringify(s.name)} is not readable: ${s.detail}.`);
    throw new ArchiveError('not_found', `No entry ${JSON.stringify(name)} in the archive.`);
  }

  let closed = false;
  return {
    entries,
    skipped,
    totalBytes,
    async read(ref, maxBytes = l.maxEntryBytes) {
      if (closed) throw new Error('The archive is closed');
      const e = resolve(ref);
      const raw = await readZipEntry(zipfile, found.get(e.index)!, e, e.gzip ? gzipInputCap(maxBytes) : maxBytes);
      return e.gzip ? gunzipCapped(raw, maxBytes, e.name) : raw;
    },
    close: () => {
      closed = true;
      zipfile.close(); // the descriptor closes once reads under way have ended
    },
  };
}

/** List an archive's entries (see the module comment for what is listed, skipped and refused). */
export async function listArchive(file: string, limits?: Partial<ArchiveLimits>): Promise<ArchiveListing> {
  const archive = await openArchive(file, limits);
  archive.close();
  return { entries: archive.entries, skipped: archive.skipped, totalBytes: archive.totalBytes };
}

/**
 * Read one entry (by name — the first listed entry of that name —, central-directory index or
 * listed entry): its bytes (gunzipped for `.gz`), refusing with ArchiveError('too_large') as soon
 * as more than `maxBytes` come out, whatever the headers declare. Of the limits only the entry
 * count applies (the default); sizes are `maxBytes`'s business. Reads the central directory each
 * time: for many entries of one archive, use openArchive.
 */
export async function readArchiveEntry(
  file: string,
  entry: ArchiveEntry | number | string,
  maxBytes: number = DEFAULT_ARCHIVE_LIMITS.maxEntryBytes,
): Promise<Buffer> {
  const archive = await openArchive(file, {
    maxEntryBytes: Number.MAX_SAFE_INTEGER,
    maxTotalBytes: Number.MAX_SAFE_INTEGER,
    maxRatio: Number.MAX_SAFE_INTEGER,
  });
  try {
    return await archive.read(entry, maxBytes);
  } finally {
    archive.close();
  }
}
