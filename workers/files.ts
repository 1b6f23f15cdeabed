import type { Config } from '../lib/config.ts';
import type { Lifecycle } from '../lib/lifecycle.ts';
import { sampleKey } from '../lib/object-store.ts';
import { createStoredFiles, type StoredFiles } from '../lib/object-store-setup.ts';
import { columnsDir } from '../lib/storage.ts';
import type { Db } from '../db/database.ts';
import { advisoryLock } from '../db/locks.ts';
import { createChannelColumns, type ChannelColumns } from '../engine/samples/channel-columns.ts';
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
  const columns = createChannelColumns(samples, {
    dir: (userId) => columnsDir(config.DATA_DIR, userId),
    lock: advisoryLock(db),
    withSampleFiles: (userId, ids, fn) =>
      files.local.use(
        ids.map((id) => sampleKey(userId, id)),
        fn,
      ),
  });
  return { files, columns };
}

/** An activity's sample file read (the requested channels), through the local files of the object store. */
export function readActivitySamples(
  engine: { files: StoredFiles; samples: SampleStore },
  userId: string,
  activityId: string,
  channels?: readonly string[],
): Promise<SampleFile> {
  return engine.files.local.use([sampleKey(userId, activityId)], ([file]) => engine.samples.readSampleFile(file!, channels));
}
