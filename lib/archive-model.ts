/**
 * What reading a history import (lib/archive.ts) deals in: the entries listed and skipped, the
 * limits an archive or directory is read within, and ArchiveError, the whole-archive refusals and
 * the failures of reading an entry (lib/archive.ts's module comment says what each code means).
 */

export type ArchiveErrorCode =
  | 'invalid_archive'
  | 'too_many_entries'
  | 'too_large'
  | 'not_found'
  | 'unsafe_name'
  | 'unsupported'
  | 'corrupt_entry'
  | 'too_deep';

export class ArchiveError extends Error {
  constructor(
    readonly code: ArchiveErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ArchiveError';
  }
}

export interface ArchiveLimits {
  /** Most entries an archive (or directory walk) may have; more → ArchiveError('too_many_entries'). */
  maxEntries: number;
  /** Largest declared uncompressed size of one entry; larger entries are skipped as too_large. */
  maxEntryBytes: number;
  /** Most bytes all listed entries may declare together; more → ArchiveError('too_large'). */
  maxTotalBytes: number;
  /** Largest uncompressed/compressed ratio of a zip entry over RATIO_MIN_BYTES; higher → skipped as too_large. */
  maxRatio: number;
}

export const DEFAULT_ARCHIVE_LIMITS: Readonly<ArchiveLimits> = Object.freeze({
  maxEntries: 20_000,
  maxEntryBytes: 64 * 1024 * 1024,
  maxTotalBytes: 8 * 1024 * 1024 * 1024,
  maxRatio: 200,
});

/** Entries smaller than this are never skipped for their ratio (a tiny file cannot be a bomb; sparse CSVs compress well). */
export const RATIO_MIN_BYTES = 1024 * 1024;

export type EntryFormat = 'fit' | 'csv' | 'gpx' | 'tcx';

export interface ArchiveEntry {
  /** Path inside the archive (or relative to the directory), `/`-separated, as stored. */
  name: string;
  /** Position in the archive's central directory (directory: in the walk), 0-based; stable for one file. */
  index: number;
  /** Bytes stored in the archive (directory: the file's size). */
  compressedSize: number;
  /** Declared size once the zip layer is undone (directory: the file's size); for `.gz`, the gzip stream's size. */
  uncompressedSize: number;
  format: EntryFormat;
  /** The entry is itself gzipped (`.fit.gz`, `.csv.gz`); reading it returns the inner bytes. */
  gzip: boolean;
  /** The base name of what reading returns: `ride.fit` for `2020/ride.fit.gz`. */
  fileName: string;
}

export type SkipReason = 'unsupported' | 'unsafe_name' | 'too_large' | 'too_deep';

export interface SkippedEntry {
  name: string;
  index: number;
  reason: SkipReason;
  detail: string;
}

export interface ArchiveListing {
  entries: ArchiveEntry[];
  skipped: SkippedEntry[];
  /** Sum of the listed entries' uncompressedSize. */
  totalBytes: number;
}

/** A zip inside a history (`.zip`, listed only when nested archives are read: lib/archive-nested.ts). */
export interface ContainerEntry {
  name: string;
  index: number;
  compressedSize: number;
  uncompressedSize: number;
}

export interface OpenArchive extends ArchiveListing {
  /** Read one listed entry (by entry, index or name): its bytes, gunzipped for `.gz`, at most `maxBytes`. */
  read(entry: ArchiveEntry | number | string, maxBytes?: number): Promise<Buffer>;
  close(): void;
}

export function limitsOf(limits: Partial<ArchiveLimits> | undefined): ArchiveLimits {
  const l = { ...DEFAULT_ARCHIVE_LIMITS, ...limits };
  for (const [k, v] of Object.entries(l)) {
    if (typeof v !== 'number' || Number.isNaN(v) || v < 0) throw new RangeError(`archive limit ${k} must be a non-negative number`);
  }
  return l;
}
