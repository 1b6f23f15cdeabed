import os from 'node:os';
import path from 'node:path';
import type { Config } from '../lib/config.ts';
import type { Lifecycle } from '../lib/lifecycle.ts';
import { sampleKey } from '../lib/object-store.ts';
import { createStoredFiles, type StoredFiles } from '../lib/object-store-setup.ts';
import { versioned } from '../lib/object-cache.ts';
import { columnsDir } from '../lib/storage.ts';
import type { Db } from '../db/database.ts';
import { advisoryLock } from '../db/locks.ts';
import { createChannelColumns, type ColumnLock, type ChannelColumns } from '../engine/samples/channel-columns.ts';
import { diskBudget } from './disk-budget.ts';
import type { SampleFile, SampleStore } from '../engine/samples/sample-file.ts';

/**
 * What one process (API, worker, or both in `npm start`) reads files through: the object store of
 * STORAGE with its objects as local files (lib/object-cache.ts), and the users' channel columns on
 * this host, filled from those files. Built once; the store's connections closed at shutdown.
 */
export function createFilesAndColumns(
  config: Config,
  samples: SampleStore,
  db: Db,
  lifecycle: Lifecycle,
): { files: StoredFiles; columns: ChannelColumns } {
  const files = createStoredFiles(config);
  lifecycle.add('object store', async () => files.store.close());
  const pgLock = advisoryLock(db);
  // With S3 each host's columns are its own: its writers exclude only each other, not other hosts'.
  const host = config.STORAGE === 's3' ? `${os.hostname()}:${path.resolve(config.DATA_DIR)}/` : '';
  const lock: ColumnLock = (key, fn) => pgLock(host + key, fn);
  const columns = createChannelColumns(samples, {
    dir: (userId) => columnsDir(config.DATA_DIR, userId),
    lock,
    withSampleFiles: (userId, activities, fn) =>
      files.local.use(
        activities.map((a) => versioned(sampleKey(userId, a.id), a.stamp)),
        fn,
      ),
  });
  if (config.STORAGE === 's3') {
    // Copies and columns together within DISK_CACHE_MAX_MB (./disk-budget.ts), checked every minute.
    const budget = diskBudget({
      dataDir: config.DATA_DIR,
      budgetBytes: config.DISK_CACHE_MAX_MB * 1024 * 1024,
      held: files.local.held,
      lock,
    });
    const place = columns.place;
    columns.place = (userId, ...rest) => {
      budget.noteUse(userId);
      return place(userId, ...rest);
    };
    const timer = setInterval(() => void budget.enforce().catch(() => undefined), BUDGET_EVERY_MS).unref();
    lifecycle.add('disk budget', async () => clearInterval(timer));
  }
  return { files, columns };
}

const BUDGET_EVERY_MS = 60_000;

/** The key of an activity's sample file as of its row's `updated_at` (lib/object-cache.ts: a copy of an older version is not used). */
export function sampleVersion(activity: { id: string; user_id: string; updated_at: Date }): string {
  return versioned(sampleKey(activity.user_id, activity.id), activity.updated_at.getTime());
}

/** An activity's sample file read (the requested channels), through the local files of the object store. */
export function readActivitySamples(
  engine: { files: StoredFiles; samples: SampleStore },
  activity: { id: string; user_id: string; updated_at: Date },
  channels?: readonly string[],
): Promise<SampleFile> {
  return engine.files.local.use([sampleVersion(activity)], ([file]) => engine.samples.readSampleFile(file!, channels));
}
