/**
 * A history import read through the zips inside it: Garmin Connect's export holds its FIT files in
 * `DI_CONNECT/DI-Connect-Uploaded-Files/UploadedFiles_0-_Part1.zip`, and an athlete may zip a folder
 * of exports. A zip (or directory) is the history's level 0; a `.zip` entry of it is opened as
 * level 1, a `.zip` inside that as level 2, and so on up to `maxDepth` (MAX_NESTING_DEPTH, 2);
 * a zip deeper than that is skipped as `too_deep` (nothing of it is read).
 *
 * Every nested zip is read with the rules of lib/archive.ts: its name is checked like any entry's,
 * it must be stored or deflated, unencrypted, within what is left of `maxTotalBytes` and within
 * `maxRatio` of its compressed size. One of at most `maxInMemoryBytes` (NESTED_IN_MEMORY_BYTES,
 * 64 MiB) is read into memory, its CRC-32 and size checked, then opened with yauzl from the buffer;
 * a larger one (Garmin Connect's `UploadedFiles_0-_Part1.zip` runs to gigabytes) is written to a
 * temporary file in `spoolDir` with the same checks, opened from there, and removed when it is
 * closed; its own central directory is refused for overlapping entries and a ratio over
 * `maxRatio` like the outer one. Its entries count against the history's `maxEntries` and its files'
 * bytes against `maxTotalBytes` (a nested zip's own bytes count too: they are decompressed): what is
 * left of both is the limit its scan runs under. A nested zip that cannot be read, or is over those
 * limits, is skipped alone (reason `too_large`, or `unsupported` for one that is not a zip) with the
 * reason in its detail; the rest of the history is read.
 *
 * Names: an entry of a nested zip is reported as the zip's name, `/`, and its name inside it:
 * `DI_CONNECT/DI-Connect-Uploaded-Files/UploadedFiles_0-_Part1.zip/2020/ride.fit`.
 *
 * Reading: entries are meant to be read in listed order, one at a time (those of one nested zip
 * are listed together); one nested zip per level is kept open, so memory holds at most `maxDepth`
 * nested zips of at most `maxInMemoryBytes` each (and disk as many temporary files). Reading an
 * entry of another one reads that one again from its parent.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type yauzl from 'yauzl';
import {
  ArchiveError,
  limitsOf,
  type ArchiveEntry,
  type ArchiveLimits,
  type ArchiveListing,
  type ContainerEntry,
  type SkipReason,
  type SkippedEntry,
} from './archive-model.ts';
import { openZip, openZipBuffer, readZipEntry, scanZip, spoolZipEntry } from './archive-zip.ts';
import { gunzipCapped, gzipInputCap } from './archive-gzip.ts';
import { directoryFilePath, readDirectory, readDirectoryEntry } from './archive-directory.ts';

/** How many levels of zips inside the history are opened (a zip inside a zip inside the upload: 2). */
export const MAX_NESTING_DEPTH = 2;

/** A nested zip up to this size is read into memory; a larger one is written to a temporary file. */
export const NESTED_IN_MEMORY_BYTES = 64 * 1024 * 1024;

export interface HistoryLimits extends ArchiveLimits {
  maxDepth: number;
  maxInMemoryBytes: number;
}

/** Where and from what size nested zips are spooled to disk. */
interface Spool {
  dir: string;
  maxInMemoryBytes: number;
}

/**
 * An activity file of a history, in whatever zip it sits: `name` is its reported name (through the
 * nested zips), `index` its position in the history's listing; `inner` is the entry as its own zip
 * or directory lists it.
 */
export interface HistoryEntry extends ArchiveEntry {
  /** Its entry inside the zip or directory that holds it. */
  inner: ArchiveEntry;
  /** The nested zip holding it (its reported name), or '' for the history itself. */
  container: string;
}

export interface History extends ArchiveListing {
  entries: HistoryEntry[];
  /** Nested zips opened. */
  containers: number;
  /** Read one entry: its bytes (gunzipped for `.gz`), at most `maxBytes`. */
  read(entry: HistoryEntry, maxBytes?: number): Promise<Buffer>;
  close(): void;
}

interface Container extends ArchiveListing {
  containers: ContainerEntry[];
  /** Entries this level counts against `maxEntries`. */
  entryCount: number;
  read(entry: ArchiveEntry, maxBytes: number): Promise<Buffer>;
  open(entry: ContainerEntry, limits: ArchiveLimits): Promise<Container>;
  close(): void;
}

const UNLIMITED: ArchiveLimits = {
  maxEntries: Number.MAX_SAFE_INTEGER,
  maxEntryBytes: Number.MAX_SAFE_INTEGER,
  maxTotalBytes: Number.MAX_SAFE_INTEGER,
  maxRatio: Number.MAX_SAFE_INTEGER,
};

async function zipContainer(zipfile: yauzl.ZipFile, limits: ArchiveLimits, spool: Spool): Promise<Container> {
  let listing: Awaited<ReturnType<typeof scanZip>>;
  try {
    listing = await scanZip(zipfile, limits, { nested: true });
  } catch (error) {
    zipfile.close();
    throw error;
  }
  const { found } = listing;
  return {
    entries: listing.entries,
    containers: listing.containers,
    skipped: listing.skipped,
    totalBytes: listing.totalBytes,
    entryCount: zipfile.entryCount,
    async read(e, maxBytes) {
      const raw = await readZipEntry(zipfile, found.get(e.index)!, e, e.gzip ? gzipInputCap(maxBytes) : maxBytes);
      return e.gzip ? gunzipCapped(raw, maxBytes, e.name) : raw;
    },
    async open(c, l) {
      const raw = found.get(c.index)!;
      if (raw.uncompressedSize <= spool.maxInMemoryBytes) {
        const bytes = await readZipEntry(zipfile, raw, c, Math.min(l.maxTotalBytes, spool.maxInMemoryBytes));
        return zipContainer(await openZipBuffer(bytes), l, spool);
      }
      return spooledContainer(zipfile, raw, c, l, spool);
    },
    close: () => zipfile.close(),
  };
}

/** A nested zip too large for memory: written to a temporary file, read from there, the file removed when closed (or when it fails to open). */
async function spooledContainer(
  zipfile: yauzl.ZipFile,
  raw: yauzl.Entry,
  c: ContainerEntry,
  l: ArchiveLimits,
  spool: Spool,
): Promise<Container> {
  const file = path.join(spool.dir, `.nested-${randomUUID()}.zip`);
  await spoolZipEntry(zipfile, raw, c, l.maxTotalBytes, file);
  const remove = () => fs.rmSync(file, { force: true });
  let inner: Container;
  try {
    inner = await zipContainer(await openZip(file), l, spool);
  } catch (error) {
    remove();
    throw error;
  }
  return {
    ...inner,
    close: () => {
      inner.close();
      remove();
    },
  };
}

async function directoryContainer(dir: string, limits: ArchiveLimits, spool: Spool): Promise<Container> {
  const listing = await readDirectory(dir, limits, { nested: true });
  return {
    ...listing,
    entryCount: listing.entries.length + listing.containers.length + listing.skipped.length,
    read: (e, maxBytes) => readDirectoryEntry(dir, e, maxBytes),
    async open(c, l) {
      const file = await directoryFilePath(dir, c.name);
      return zipContainer(await openZip(file), l, spool);
    },
    close: () => {},
  };
}

function skipReason(code: ArchiveError['code']): SkipReason {
  return code === 'too_large' || code === 'too_many_entries' ? 'too_large' : code === 'unsafe_name' ? 'unsafe_name' : 'unsupported';
}

/**
 * Open a history (a zip archive or a directory) with the zips inside it, listed as one: see the
 * module comment. Whole-history refusals are those of lib/archive.ts for the history itself. Nested
 * zips over `maxInMemoryBytes` are spooled to `spoolDir` (the system's temporary directory unless given).
 */
export async function openNestedHistory(
  target: string,
  kind: 'archive' | 'directory',
  limits?: Partial<HistoryLimits>,
  options: { spoolDir?: string } = {},
): Promise<History> {
  const { maxDepth = MAX_NESTING_DEPTH, maxInMemoryBytes = NESTED_IN_MEMORY_BYTES, ...rest } = limits ?? {};
  const l = limitsOf(rest);
  const spool: Spool = { dir: options.spoolDir ?? os.tmpdir(), maxInMemoryBytes };
  const top = kind === 'archive' ? await zipContainer(await openZip(target), l, spool) : await directoryContainer(target, l, spool);
  const entries: HistoryEntry[] = [];
  const skipped: SkippedEntry[] = [];
  const parents = new Map<string, { parent: string; entry: ContainerEntry }>();
  const used = { entries: top.entryCount, bytes: top.totalBytes };
  let opened = 0;

  const expand = async (c: Container, key: string, depth: number): Promise<void> => {
    const prefix = key === '' ? '' : `${key}/`;
    for (const e of c.entries) entries.push({ ...e, name: prefix + e.name, index: entries.length, inner: e, container: key });
    for (const s of c.skipped) skipped.push({ ...s, name: prefix + s.name });
    for (const z of c.containers) {
      const name = prefix + z.name;
      if (depth + 1 > maxDepth) {
        skipped.push({ name, index: z.index, reason: 'too_deep', detail: `a zip nested more than ${maxDepth} levels deep is not opened` });
        continue;
      }
      let inner: Container;
      try {
        inner = await c.open(z, {
          ...l,
          maxEntries: Math.max(0, l.maxEntries - used.entries),
          maxTotalBytes: Math.max(0, l.maxTotalBytes - used.bytes),
        });
      } catch (error) {
        if (!(error instanceof ArchiveError)) throw error;
        skipped.push({ name, index: z.index, reason: skipReason(error.code), detail: error.message });
        continue;
      }
      try {
        opened++;
        used.entries += inner.entryCount;
        used.bytes += inner.totalBytes;
        parents.set(name, { parent: key, entry: z });
        await expand(inner, name, depth + 1);
      } finally {
        inner.close();
      }
    }
  };
  try {
    await expand(top, '', 0);
  } catch (error) {
    top.close();
    throw error;
  }

  // One open nested zip per level: open[d] is the level d + 1 zip last read from.
  const open: { key: string; container: Container }[] = [];
  const containerOf = async (key: string): Promise<Container> => {
    const chain: string[] = [];
    for (let k = key; k !== ''; k = parents.get(k)!.parent) chain.unshift(k);
    let parent = top;
    for (const [d, k] of chain.entries()) {
      if (open[d]?.key !== k) {
        for (const o of open.splice(d)) o.container.close();
        // Its listing and size were checked when the history was opened: read again, only its entries' size is capped.
        open[d] = { key: k, container: await parent.open(parents.get(k)!.entry, { ...UNLIMITED, maxEntryBytes: l.maxEntryBytes }) };
      }
      parent = open[d]!.container;
    }
    return parent;
  };
  let closed = false;
  return {
    entries,
    skipped,
    totalBytes: used.bytes,
    containers: opened,
    async read(e, maxBytes = l.maxEntryBytes) {
      if (closed) throw new Error('The history is closed');
      return (await containerOf(e.container)).read(e.inner, maxBytes);
    },
    close() {
      closed = true;
      for (const o of open.splice(0)) o.container.close();
      top.close();
    },
  };
}
