import { randomBytes } from 'node:crypto';
import { access, mkdir, readdir, rm, stat, utimes } from 'node:fs/promises';
import path from 'node:path';
import { KEY_PATTERN, ObjectMissing, type ObjectStore } from './object-store.ts';

/**
 * Objects as local files, for what reads files (DuckDB reads Parquet from disk): with the local store
 * the objects' own files, used in place; with a remote one, copies under `dir` (DATA_DIR/cache/{key}),
 * fetched when first used and kept within a budget of bytes, the least recently used removed first.
 *
 * A key may name the version of the object it wants (`versioned(key, stamp)`: a sample file by its
 * activity's `updated_at`): a copy is kept per version, so an object replaced in the store (a sample
 * file re-derived on another host, the row's stamp moved in the same transaction) is fetched again,
 * never read stale from this host's copy. The local store has one version, its file.
 *
 * Recency is the copy's mtime, so that every process on the host (an API and a worker sharing
 * DATA_DIR) shares one clock: a use checks that the copy is still there (fetching it again if it is
 * not) and touches one older than TOUCH_AFTER_MS, and eviction removes
 * only copies untouched for EVICT_AFTER_MS that this process is not using, checking each mtime
 * again before it goes. A copy is written under a temporary name and renamed, so no reader sees
 * half of one. Each process counts what it fetched and found at start (and again every RESCAN_MS).
 */
export interface LocalFiles {
  /** Where the (versioned) key's local file is (or will be, once used). */
  pathOf(key: string): string;
  /** `fn` with the (versioned) keys' files present locally (fetched where missing, ObjectMissing for an absent object), kept while it runs. */
  use<T>(keys: readonly string[], fn: (files: string[]) => Promise<T>): Promise<T>;
  /** Make the object `key` from a local file that `write` writes at the path it is given (atomically); then it is stored (with S3, no copy kept: readers ask for a version). */
  create(key: string, write: (file: string) => Promise<void>): Promise<void>;
  /** Local copies (every version) of removed objects dropped. */
  drop(keys: readonly string[]): Promise<void>;
  /** Bytes of copies this process knows of. */
  held(): number;
}

/** A key naming the version of its object that a reader wants (e.g. its activity's stamp). */
export function versioned(key: string, version: number): string {
  return `${key}@${Math.trunc(version)}`;
}

/** The store's key and the version asked, of a key given to `use`. */
function splitVersion(k: string): { key: string; version?: string } {
  const at = k.lastIndexOf('@');
  if (at < 0) return { key: k };
  const version = k.slice(at + 1);
  if (!/^\d{1,16}$/.test(version)) throw new Error(`not a versioned key: ${JSON.stringify(k)}`);
  return { key: k.slice(0, at), version };
}

const TOUCH_AFTER_MS = 30_000;
const EVICT_AFTER_MS = 60_000;
const RESCAN_MS = 5 * 60_000;
/** Downloads in flight at once per process. */
const FETCH_SLOTS = 32;

/**
 * The objects' own files (the local store): nothing fetched, nothing cached, nothing checked before
 * `fn` runs; when it fails, a file that is not there makes the failure ObjectMissing, as a remote
 * store's absent object is.
 */
function inPlace(store: ObjectStore & { fileOf(key: string): string }): LocalFiles {
  return {
    pathOf: (k) => store.fileOf(splitVersion(k).key),
    use: (keys, fn) =>
      fn(keys.map((k) => store.fileOf(splitVersion(k).key))).catch(async (err: unknown) => {
        for (const k of keys) {
          const { key } = splitVersion(k);
          const there = await access(store.fileOf(key)).then(
            () => true,
            () => false,
          );
          if (!there) throw new ObjectMissing(key);
        }
        throw err;
      }),
    create: (key, write) => write(store.fileOf(key)),
    drop: async () => {},
    held: () => 0,
  };
}

interface Copy {
  size: number;
  /** When this process last touched its mtime (ms). */
  touched: number;
  pins: number;
  /** When it was counted (RemoteCopies.sequence): a rescan forgets only copies counted before it began. */
  counted: number;
}

export function createLocalFiles(store: ObjectStore, opts: { dir: string; budgetBytes: number; now?: () => number }): LocalFiles {
  if (store.fileOf) return inPlace(store as ObjectStore & { fileOf(key: string): string });
  const copies = new RemoteCopies(store, opts.dir, opts.budgetBytes, opts.now ?? Date.now);
  void copies.rescan();
  return {
    pathOf: (key) => copies.pathOf(key),
    use: (keys, fn) => copies.use(keys, fn),
    create: (key, write) => copies.create(key, write),
    drop: (keys) => copies.drop(keys),
    held: () => copies.total,
  };
}

/** A remote store's objects copied under `dir`, within `budget` bytes. */
class RemoteCopies {
  readonly copies = new Map<string, Copy>();
  readonly fetching = new Map<string, Promise<void>>();
  total = 0;
  private scanned = 0;
  private evicting: Promise<void> | undefined;
  private readonly slots = { free: FETCH_SLOTS, waiting: [] as (() => void)[] };

  constructor(
    readonly store: ObjectStore,
    readonly dir: string,
    readonly budget: number,
    readonly now: () => number,
  ) {}

  pathOf(k: string): string {
    const { key, version } = splitVersion(k);
    if (!KEY_PATTERN.test(key)) throw new Error(`not an object key: ${JSON.stringify(key)}`);
    return path.join(this.dir, version === undefined ? key : `${key}@${version}`);
  }

  async use<T>(keys: readonly string[], fn: (files: string[]) => Promise<T>): Promise<T> {
    const pinned: string[] = [];
    try {
      await Promise.all(
        keys.map(async (key) => {
          await this.ensure(key);
          pinned.push(key);
        }),
      );
      return await fn(keys.map((key) => this.pathOf(key)));
    } finally {
      for (const key of pinned) {
        const copy = this.copies.get(key);
        if (copy && copy.pins > 0) copy.pins--;
      }
      this.evictIfOver();
    }
  }

  async create(key: string, write: (file: string) => Promise<void>): Promise<void> {
    const file = this.pathOf(key);
    await mkdir(path.dirname(file), { recursive: true });
    try {
      await write(file);
      await this.store.putFile(key, file, { move: true });
    } finally {
      await rm(file, { force: true });
    }
  }

  async drop(keys: readonly string[]): Promise<void> {
    for (const key of keys) {
      const file = this.pathOf(key);
      const [dir, base] = [path.dirname(file), path.basename(file)];
      const names = await readdir(dir).catch(() => [] as string[]);
      for (const name of names.filter((n) => n === base || n.startsWith(`${base}@`))) {
        await rm(path.join(dir, name), { force: true });
        this.forget(`${key}${name.slice(base.length)}`);
      }
    }
  }

  private sequence = 0;

  private remember(key: string, size: number, touched: number): void {
    const had = this.copies.get(key);
    this.total += size - (had?.size ?? 0);
    this.copies.set(key, { size, touched, pins: had?.pins ?? 0, counted: this.sequence++ });
  }

  private forget(key: string): void {
    const had = this.copies.get(key);
    if (!had || had.pins) return;
    this.total -= had.size;
    this.copies.delete(key);
  }

  /** The key's copy present and pinned: found, touched when its mtime is old, or fetched (once however many ask). */
  private async ensure(key: string): Promise<void> {
    const known = this.copies.get(key);
    if (known) {
      known.pins++;
      // Checked on every use (a stat, or the touch): a copy removed behind this process's back is fetched again, still pinned.
      const t = this.now();
      const old = t - known.touched > TOUCH_AFTER_MS;
      const there = await (old ? utimes(this.pathOf(key), t / 1000, t / 1000) : access(this.pathOf(key))).then(
        () => true,
        () => false,
      );
      if (there) {
        if (old) known.touched = t;
        return;
      }
      try {
        await this.fetchOnce(key);
      } catch (err) {
        const copy = this.copies.get(key);
        if (copy && copy.pins > 0) copy.pins--;
        throw err;
      }
      return;
    }
    await this.fetchOnce(key);
    const copy = this.copies.get(key);
    if (!copy) return this.ensure(key);
    copy.pins++;
  }

  /** One fetch of a key however many ask at once. */
  private fetchOnce(key: string): Promise<void> {
    let pending = this.fetching.get(key);
    if (!pending) {
      pending = this.fetch(key).finally(() => this.fetching.delete(key));
      this.fetching.set(key, pending);
    }
    return pending;
  }

  private async fetch(key: string): Promise<void> {
    const file = this.pathOf(key);
    const info = await stat(file).catch(() => undefined);
    if (info) return this.remember(key, info.size, info.mtimeMs);
    if (!this.slots.free) await new Promise<void>((resolve) => this.slots.waiting.push(resolve));
    else this.slots.free--;
    try {
      await this.store.download(splitVersion(key).key, file);
      this.remember(key, (await stat(file)).size, this.now());
    } finally {
      const next = this.slots.waiting.shift();
      if (next) next();
      else this.slots.free++;
    }
  }

  private evictIfOver(): void {
    if (this.now() - this.scanned > RESCAN_MS) void this.rescan();
    if (this.total <= this.budget || this.evicting) return;
    this.evicting = this.evict().finally(() => (this.evicting = undefined));
  }

  /** Down to 90 % of the budget, least recently touched first, skipping what is in use here or was touched lately anywhere. */
  private async evict(): Promise<void> {
    const target = this.budget * 0.9;
    const order = [...this.copies.entries()].filter(([, c]) => !c.pins).sort((a, b) => a[1].touched - b[1].touched);
    for (const [key, copy] of order) {
      if (this.total <= target) break;
      if (copy.pins || this.now() - copy.touched < EVICT_AFTER_MS) continue;
      const info = await stat(this.pathOf(key)).catch(() => undefined);
      if (info && this.now() - info.mtimeMs < EVICT_AFTER_MS) {
        copy.touched = info.mtimeMs; // another process used it lately
        continue;
      }
      if (copy.pins) continue;
      await rm(this.pathOf(key), { force: true });
      this.forget(key);
    }
  }

  /** What is on disk (copies another process fetched, or an earlier run left), counted again. */
  async rescan(): Promise<void> {
    this.scanned = this.now();
    const began = this.sequence;
    const found = new Map<string, { size: number; mtime: number }>();
    await walk(this.dir, '', found);
    // Copies the walk saw that this process does not know: counted if they are still there (an
    // eviction may have removed one since the walk passed it).
    for (const key of found.keys()) {
      if (this.copies.has(key)) continue;
      const info = await stat(this.pathOf(key)).catch(() => undefined);
      if (info && !this.copies.has(key)) this.remember(key, info.size, info.mtimeMs);
    }
    // Gone from the disk (removed by another process): forgotten, unless counted while the walk ran.
    for (const [key, copy] of [...this.copies]) if (!found.has(key) && !this.fetching.has(key) && copy.counted < began) this.forget(key);
    this.evictIfOver();
  }
}

async function walk(root: string, rel: string, found: Map<string, { size: number; mtime: number }>): Promise<void> {
  const entries = await readdir(path.join(root, rel), { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    const key = rel ? `${rel}/${entry.name}` : entry.name;
    if (entry.isDirectory()) await walk(root, key, found);
    else if (KEY_PATTERN.test(key.replace(/@\d{1,16}$/, ''))) {
      const info = await stat(path.join(root, key)).catch(() => undefined);
      if (info) found.set(key, { size: info.size, mtime: info.mtimeMs });
    }
  }
}

/**
 * `fn` with a local file of the object (a history archive, read entry by entry): the store's own file,
 * or a private copy under `tmpDir`, removed after. Not cached: an archive is read once.
 */
export async function withLocalCopy<T>(store: ObjectStore, key: string, tmpDir: string, fn: (file: string) => Promise<T>): Promise<T> {
  if (store.fileOf) return fn(store.fileOf(key));
  const file = path.join(tmpDir, `copy-${randomBytes(8).toString('hex')}-${path.basename(key)}`);
  await mkdir(tmpDir, { recursive: true });
  try {
    await store.download(key, file);
    return await fn(file);
  } finally {
    await rm(file, { force: true });
  }
}
