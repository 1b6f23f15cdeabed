import { readdir, rm, rmdir, stat, utimes } from 'node:fs/promises';
import path from 'node:path';
import type { ColumnLock } from '../engine/samples/channel-columns.ts';

/**
 * With STORAGE=s3 a host's DATA_DIR holds only what it can rebuild: copies of sample files (kept
 * within the budget by lib/object-cache.ts) and the users' channel columns. This keeps both together
 * within DISK_CACHE_MAX_MB: when copies and columns exceed it, the columns of the users served least
 * recently go, channel by channel under the column's own writers' lock, until they are under 90 %.
 * A request then reading a removed column places its activities again (engine/samples/column-read.ts
 * COLUMN_MOVED) and the column is filled anew: from the grid rows in PostgreSQL for fatigue grids,
 * from the sample files' copies otherwise.
 *
 * A user's last use is the mtime of their columns directory, touched (at most every TOUCH_AFTER_MS)
 * by every request that places activities in one of their columns (`noteUse`): shared by the
 * processes of the host. Users used within KEEP_MS are never evicted.
 */
const TOUCH_AFTER_MS = 30_000;
const KEEP_MS = 60_000;

export interface DiskBudget {
  /** A request used this user's columns (their directory's mtime moved, at most every 30 s). */
  noteUse(userId: string): void;
  /** Evict columns while copies (`held()` bytes) and columns exceed the budget; the bytes of columns removed. */
  enforce(): Promise<number>;
}

export function diskBudget(opts: {
  dataDir: string;
  budgetBytes: number;
  held: () => number;
  lock: ColumnLock;
  now?: () => number;
}): DiskBudget {
  const now = opts.now ?? Date.now;
  const touched = new Map<string, number>();
  const usersDir = path.resolve(opts.dataDir, 'users');
  const dirOf = (userId: string) => path.join(usersDir, userId, 'columns');
  return {
    noteUse(userId) {
      const t = now();
      if (t - (touched.get(userId) ?? 0) < TOUCH_AFTER_MS) return;
      touched.set(userId, t);
      if (touched.size > 100_000) touched.clear();
      void utimes(dirOf(userId), t / 1000, t / 1000).catch(() => undefined);
    },
    async enforce() {
      const users = await columnSizes(usersDir);
      let total = opts.held() + users.reduce((n, u) => n + u.bytes, 0);
      if (total <= opts.budgetBytes) return 0;
      let freed = 0;
      for (const u of users.sort((a, b) => a.used - b.used)) {
        if (total <= opts.budgetBytes * 0.9) break;
        if (now() - u.used < KEEP_MS) continue;
        for (const channel of u.channels) {
          const bytes = await opts.lock(`columns/${u.userId}/${channel}`, () => removeChannel(dirOf(u.userId), channel));
          total -= bytes;
          freed += bytes;
        }
        await rmdir(dirOf(u.userId)).catch(() => undefined);
      }
      return freed;
    },
  };
}

interface UserColumns {
  userId: string;
  bytes: number;
  used: number;
  channels: string[];
}

/** Every user's columns on this host: their bytes, their last use and their channels. */
async function columnSizes(usersDir: string): Promise<UserColumns[]> {
  const out: UserColumns[] = [];
  for (const userId of await readdir(usersDir).catch(() => [] as string[])) {
    const dir = path.join(usersDir, userId, 'columns');
    const info = await stat(dir).catch(() => undefined);
    if (!info?.isDirectory()) continue;
    let bytes = 0;
    const channels = new Set<string>();
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      const file = await stat(path.join(dir, name)).catch(() => undefined);
      if (file?.isFile()) bytes += file.size;
      channels.add(name.split('.')[0]!);
    }
    out.push({ userId, bytes, used: info.mtimeMs, channels: [...channels] });
  }
  return out;
}

/** A channel's files removed (its `.current` first, so no new reader finds the generation); their bytes. */
async function removeChannel(dir: string, channel: string): Promise<number> {
  const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.startsWith(`${channel}.`));
  names.sort((a, b) => (a.endsWith('.current') ? -1 : b.endsWith('.current') ? 1 : 0));
  let bytes = 0;
  for (const name of names) {
    const file = path.join(dir, name);
    bytes += (await stat(file).catch(() => undefined))?.size ?? 0;
    await rm(file, { force: true });
  }
  return bytes;
}
