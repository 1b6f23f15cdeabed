import { createReadStream } from 'node:fs';
import { copyFile, mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileEtag } from './object-digest.ts';
import { KEY_PATTERN, ObjectMissing, type ObjectStore } from './object-store.ts';
import { writeAtomically, writeFileAtomic } from './storage.ts';

/**
 * The data directory as the object store (the default: nothing to configure): an object is the file
 * DATA_DIR/{key}, written under a temporary name and renamed, so a reader sees all of it or nothing.
 * Its files are the objects themselves (`fileOf`), so readers use them in place: no copy, no cache.
 */
export function createLocalObjectStore(dataDir: string): ObjectStore {
  const root = path.resolve(dataDir);
  const fileOf = (key: string) => {
    if (!KEY_PATTERN.test(key)) throw new Error(`not an object key: ${JSON.stringify(key)}`);
    return path.join(root, key);
  };
  const missing = (key: string) => (err: unknown) => {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new ObjectMissing(key);
    throw err;
  };
  return {
    kind: 'local',
    where: root,
    fileOf,
    put: (key, bytes) => writeFileAtomic(fileOf(key), bytes),
    async putFile(key, file, opts = {}) {
      const target = fileOf(key);
      await mkdir(path.dirname(target), { recursive: true });
      if (opts.move) {
        // Uploads are spooled under DATA_DIR/tmp: the same filesystem, so a rename; elsewhere a copy.
        const moved = await rename(file, target).then(
          () => true,
          (err: NodeJS.ErrnoException) => {
            if (err.code !== 'EXDEV') throw err;
            return false;
          },
        );
        if (moved) return;
      }
      await writeAtomically(target, (tmp) => copyFile(file, tmp));
      if (opts.move) await rm(file, { force: true });
    },
    get: (key) => readFile(fileOf(key)).catch(missing(key)),
    async open(key) {
      const file = fileOf(key);
      const info = await stat(file).catch(missing(key));
      return { size: info.size, body: createReadStream(file) };
    },
    download: (key, file) => writeAtomically(file, (tmp) => copyFile(fileOf(key), tmp)).catch(missing(key)),
    async head(key) {
      const file = fileOf(key);
      return fileEtag(file).catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return null;
        throw err;
      });
    },
    list: (prefix) => listUnder(root, prefix),
    async remove(keys) {
      await Promise.all(keys.map((key) => rm(fileOf(key), { force: true })));
    },
    async removePrefix(prefix) {
      const keys: string[] = [];
      for await (const { key } of listUnder(root, prefix)) keys.push(key);
      await Promise.all(keys.map((key) => rm(fileOf(key), { force: true })));
      return keys.length;
    },
    close() {},
  };
}

/** The objects under `prefix` (files whose key has an object's shape: no temporary file, no derived file), in key order. */
async function* listUnder(root: string, prefix: string): AsyncIterable<{ key: string; size: number }> {
  const slash = prefix.lastIndexOf('/');
  const start = slash < 0 ? '' : prefix.slice(0, slash);
  const found: { key: string; size: number }[] = [];
  async function walk(rel: string): Promise<void> {
    const entries = await readdir(path.join(root, rel), { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const key = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (prefix.startsWith(`${key}/`) || key.startsWith(prefix)) await walk(key);
      } else if (entry.isFile() && key.startsWith(prefix) && KEY_PATTERN.test(key)) {
        const info = await stat(path.join(root, key)).catch(() => undefined);
        if (info) found.push({ key, size: info.size });
      }
    }
  }
  await walk(start);
  found.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  yield* found;
}

/** The file of an object in a data directory's local store (tools and tests that look at the directory). */
export function objectFile(dataDir: string, key: string): string {
  return path.join(path.resolve(dataDir), key);
}
