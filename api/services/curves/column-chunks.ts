import type { Deps } from '../../services/deps.ts';
import { chunkBySamples } from '../../../engine/curves/longitudinal.ts';
import type { ColumnActivity } from '../../../engine/samples/channel-columns.ts';
import { retryIfMoved, slicePlace, type ColumnPlace } from '../../../engine/samples/column-read.ts';
import { sampleKey } from '../../../lib/object-store.ts';
import { versioned } from '../../../lib/object-cache.ts';

/** The activities as a channel column checks them (id, stamp, sample count; the sample file's path only when a fill reads it). */
export function columnActivities(
  deps: Deps,
  userId: string,
  activities: readonly { id: string; stamp: number; samples: number }[],
): ColumnActivity[] {
  const local = deps.engine.files.local;
  return activities.map((a) => ({
    id: a.id,
    stamp: a.stamp,
    samples: a.samples,
    get path() {
      return local.pathOf(versioned(sampleKey(userId, a.id), a.stamp));
    },
  }));
}

/**
 * `run` over the activities' samples of `channel` (the user's channel column, filled first where it
 * lacks them), in consecutive chunks of about equal samples, one pool task each and as many as the
 * pool has threads; each thread reads its chunk's bytes from the column file itself. The outputs in
 * chunk order with each chunk's first activity; placed again once should a compaction move the file.
 */
export async function runInChunks<R>(
  deps: Deps,
  userId: string,
  channel: string,
  activities: ColumnActivity[],
  signal: AbortSignal | undefined,
  run: (place: ColumnPlace) => Promise<R>,
): Promise<{ outputs: R[]; firsts: number[] }> {
  const offsets = new Int32Array(activities.length + 1);
  activities.forEach((a, i) => (offsets[i + 1] = offsets[i]! + a.samples));
  const chunks = chunkBySamples(offsets, deps.engine.pool.maxThreads);
  const outputs = await retryIfMoved(async () => {
    const place = await deps.engine.columns.place(userId, channel, activities, signal);
    return Promise.all(chunks.map(([from, to]) => run(slicePlace(place, from, to))));
  });
  return { outputs, firsts: chunks.map(([from]) => from) };
}
