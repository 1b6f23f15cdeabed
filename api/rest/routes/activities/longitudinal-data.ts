import { createReadStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { Readable } from 'node:stream';
import { z } from 'zod';
import type { Ctx } from '../../../http/context.ts';
import { defineRoute } from '../../../http/route.ts';
import {
  FormatParam,
  MetricsParam,
  SegmentationOnParam,
  DEFAULT_METRICS,
  type TimeSeriesMetric,
} from '../../../services/activities/curve-params.ts';
import { clientGone, computedTag, jsonRequested, userDataVersion, withTimeout } from '../../activities/computed.ts';
import { notModified } from '../../conditional.ts';
import { frameResponse } from '../../activities/frame-docs.ts';
import { NOT_MODIFIED } from '../../conditional.ts';
import { activityColumns } from '../../../../engine/frames/curve-frames.ts';
import { queryArray, SportParam, timeFilter, TimeBoundParam } from '../../../services/activities/query.ts';
import { channelsFor, timeSeriesColumns, uniqueMetrics } from '../../../services/activities/time-series.ts';
import { activitiesForScan } from '../../../../db/activities.ts';
import { PARQUET_MEDIA_TYPE, parquetDisposition } from '../../activities/content-negotiation.ts';
import { parquetToJsonStream } from '../../../../engine/frames/parquet-to-json.ts';
import type { Frame, FrameColumn } from '../../../../engine/frames/frame.ts';
import { copyTimeSeries } from '../../../../engine/samples/sample-scan.ts';
import { tmpDir } from '../../../../lib/storage.ts';
import { readActivitySamples, sampleVersion } from '../../../../workers/files.ts';

export const longitudinalDataRoute = defineRoute(
  {
    method: 'get',
    path: '/api/v1/activities/longitudinal-data',
    operationId: 'longitudinal_data',
    summary: 'The samples of every matching activity as one time-series frame',
    description:
      'Every second (or segment, with `segmentation_on`) of every activity of the `sport`s in the range, in time order: `timestamp` (UTC), ' +
      '`timestamp_local`, the `metrics` in the order asked (`duration` always included), then `activity_id` and `sport`. Parquet (zstd, data pages v2: delta-encoded timestamps) by default, ' +
      'streamed; column-oriented JSON with `format=json` or `Accept: application/json`. Without `start`/`end` the whole history is included.',
    tags: ['activities'],
    auth: { scopes: ['data:read'] },
    query: z.object({
      start: TimeBoundParam.optional(),
      end: TimeBoundParam.optional(),
      sport: queryArray(SportParam).optional().describe('Sports to include, each with its sub-sports'),
      metrics: MetricsParam,
      segmentation_on: SegmentationOnParam,
      format: FormatParam,
    }),
    responses: { 200: frameResponse('The time series of the matching activities'), 304: NOT_MODIFIED },
  },
  async (ctx, { query }) => {
    const { deps } = ctx;
    const asked = uniqueMetrics(query.metrics?.length ? query.metrics : DEFAULT_METRICS);
    const metrics: TimeSeriesMetric[] = asked.includes('duration') ? asked : ['duration', ...asked];
    const json = jsonRequested(ctx, query.format);
    ctx.vary('Accept');
    // Like a computed answer's (api/rest/activities/computed.ts): the version is read before the scan.
    const version = await userDataVersion(ctx);
    const identity = [query.start ?? null, query.end ?? null, query.sport ?? [], metrics, query.segmentation_on ?? null, json];
    if (notModified(ctx, computedTag(ctx, version, identity))) return;
    const activities = await activitiesForScan(deps.db, ctx.state.principal!.userId, {
      ...timeFilter(query.start, query.end),
      sports: query.sport,
    });
    const dir = tmpDir(deps.config.DATA_DIR);
    await mkdir(dir, { recursive: true });
    const file = path.join(dir, `longitudinal-${randomUUID()}.parquet`);
    try {
      // (The file is removed when the work itself has stopped, not only when the answer is given: at
      // the time limit the 503 goes out at once, while the COPY may still be interrupting.)
      const write = async (signal: AbortSignal) => {
        if (!activities.length || query.segmentation_on) {
          const frame = await segmentedFrame(ctx, activities, metrics, query.segmentation_on, signal);
          signal.throwIfAborted();
          await deps.engine.frames.writeParquet(frame, file);
        } else {
          const keys = activities.map(sampleVersion);
          await deps.engine.files.local.use(keys, async (paths) => {
            const sources = activities.map((a, i) => ({
              path: paths[i]!,
              activityId: a.id,
              sport: a.sport,
              utcOffsetSeconds: a.utc_offset_seconds,
              start: a.start_time.getTime(),
              samples: a.samples,
            }));
            await copyTimeSeries(deps.engine.samples, sources, metrics, file, signal);
          });
        }
      };
      await withTimeout(
        deps,
        (signal) =>
          write(signal).catch(async (error) => {
            await rm(file, { force: true });
            throw error;
          }),
        clientGone(ctx),
      );
    } catch (error) {
      await rm(file, { force: true });
      throw error;
    }
    const body = json ? Readable.from(parquetToJsonStream(deps.engine.samples, file)) : createReadStream(file);
    body.once('close', () => void rm(file, { force: true }));
    ctx.type = json ? 'application/json; charset=utf-8' : PARQUET_MEDIA_TYPE;
    if (!json) ctx.set('Content-Disposition', parquetDisposition(ctx.path));
    ctx.body = body;
  },
);

type ScanRow = Awaited<ReturnType<typeof activitiesForScan>>[number];

/** Segmented rows of every activity (or the empty frame), built in memory: segments are few. */
async function segmentedFrame(
  ctx: Ctx,
  activities: ScanRow[],
  metrics: TimeSeriesMetric[],
  seg: 'power' | 'speed' | undefined,
  signal: AbortSignal,
): Promise<Frame> {
  const parts: FrameColumn[][] = [];
  const owners: number[] = [];
  for (const [i, a] of activities.entries()) {
    if (signal.aborted) throw signal.reason;
    const file = await readActivitySamples(ctx.deps.engine, a, channelsFor(metrics, seg));
    const columns = timeSeriesColumns(file, a.utc_offset_seconds, metrics, seg);
    parts.push(columns);
    const rows = (columns[0] as { values: Float64Array }).values.length;
    for (let r = 0; r < rows; r++) owners.push(i);
  }
  const names = ['timestamp', 'timestamp_local', ...metrics];
  const columns: FrameColumn[] = names.map((name, c) => {
    const type = c === 0 ? 'timestamptz' : c === 1 ? 'timestamp' : name === 'duration' ? 'int32' : 'double';
    const pieces = parts.map((p) => p[c]!);
    if (type === 'int32') return { name, type, values: concat(Int32Array, pieces) };
    return { name, type, values: concat(Float64Array, pieces) } as FrameColumn;
  });
  columns.push(...activityColumns(Int32Array.from(owners), activities));
  return { columns };
}

function concat<A extends Int32Array | Float64Array>(Type: { new (n: number): A }, pieces: FrameColumn[]): A {
  const arrays = pieces.map((p) => (p as unknown as { values: A }).values);
  const out = new Type(arrays.reduce((n, a) => n + a.length, 0));
  let at = 0;
  for (const a of arrays) {
    out.set(a as never, at);
    at += a.length;
  }
  return out;
}
