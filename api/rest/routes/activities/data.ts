import { z } from 'zod';
import type { Ctx } from '../../../http/context.ts';
import { defineRoute } from '../../../http/route.ts';
import { NotFound, UnprocessableEntity } from '../../../services/errors.ts';
import { ActivityMetricsParam, DEFAULT_METRICS, FormatParam, SegmentationOnParam } from '../../../services/activities/curve-params.ts';
import { encodeFrame, jsonRequested, sendComputed } from '../../activities/computed.ts';
import { frameResponse } from '../../activities/frame-docs.ts';
import { NOT_MODIFIED } from '../../conditional.ts';
import { channelsFor, timeSeriesColumns, uniqueMetrics } from '../../../services/activities/time-series.ts';
import type { ActivityRow } from '../../../../db/database.ts';
import type { SampleFile } from '../../../../engine/samples/sample-file.ts';
import { isObjectMissing } from '../../../../lib/object-store.ts';
import { readActivitySamples } from '../../../../workers/files.ts';
import { ActivityParams, ownActivity } from './activity.ts';
import { wPrimeBalanceOf, wPrimeThresholds } from '../../../services/training-load/w-prime-balance.ts';

export const activityDataRoute = defineRoute(
  {
    method: 'get',
    path: '/api/v1/activities/{activity_id}/data',
    operationId: 'activity_data',
    summary: "The activity's samples as a time-series frame",
    description:
      'One row per second of the activity (its 1 Hz grid; a pause is a run of nulls), or per segment with `segmentation_on`. Columns: ' +
      '`timestamp` (UTC instant), `timestamp_local` (naive local time), then `metrics` in the order asked; a channel the activity does not record is a ' +
      'column of nulls. Parquet (zstd; `timestamp` TIMESTAMP(UTC, µs), `timestamp_local` TIMESTAMP(µs), `duration` INT32, channels DOUBLE) by default; ' +
      'column-oriented JSON with `format=json` or `Accept: application/json`. Segments (`segmentation_on=power|speed`) merge consecutive seconds whose ' +
      'power stays within 5 W (speed within 0.05 m/s); every sample is then within that tolerance of its segment mean, so a mean-max computed from the ' +
      'segments is within 5 W (0.05 m/s) of the exact one at every duration.',
    tags: ['activities'],
    auth: { scopes: ['data:read'] },
    params: ActivityParams,
    query: z.object({ metrics: ActivityMetricsParam, segmentation_on: SegmentationOnParam, format: FormatParam }),
    responses: { 200: frameResponse('The time series'), 304: NOT_MODIFIED, 404: { description: 'No such activity of this user' } },
  },
  async (ctx, { params, query }) => {
    const activity = await ownActivity(ctx, params.activity_id);
    const metrics = uniqueMetrics(query.metrics?.length ? query.metrics : DEFAULT_METRICS);
    const seg = query.segmentation_on;
    if (seg && !activity.metrics.includes(seg)) {
      throw new UnprocessableEntity([
        { loc: ['query', 'segmentation_on'], msg: `The activity has no ${seg} samples to segment on`, type: 'value_error.metric_missing' },
      ]);
    }
    const json = jsonRequested(ctx, query.format);
    // W′ balance follows the thresholds the activity's load used (a change moves them, not the data version): part of the identity.
    const wPrime = metrics.includes('w_prime_balance') ? await wPrimeThresholds(ctx.deps, activity.id) : undefined;
    await sendComputed(ctx, [activity.id, metrics, seg ?? null, json, wPrime ?? null], async (signal) => {
      const file = await readSamples(ctx, activity, channelsFor(metrics, seg));
      const derived = wPrime === undefined ? {} : { w_prime_balance: await wPrimeBalanceOf(ctx.deps, wPrime, file, signal) };
      return encodeFrame(
        ctx.deps,
        { columns: timeSeriesColumns(file, activity.utc_offset_seconds, metrics, seg, derived) },
        json,
        undefined,
        signal,
      );
    });
  },
);

/** An activity's sample file (only the channels asked); 404 when it is no longer stored. */
export async function readSamples(ctx: Ctx, activity: ActivityRow, channels: readonly string[]): Promise<SampleFile> {
  try {
    return await readActivitySamples(ctx.deps.engine, activity, channels);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || isObjectMissing(error))
      throw new NotFound('The samples of this activity are no longer stored');
    throw error;
  }
}
