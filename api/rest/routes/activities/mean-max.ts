import { z } from 'zod';
import { defineRoute } from '../../../http/route.ts';
import { DurationsParam, durationsFor, FormatParam, MeanMaxMetricParam } from '../../../services/activities/curve-params.ts';
import { encodeFrame, jsonRequested, sendComputed } from '../../activities/computed.ts';
import { frameResponse } from '../../activities/frame-docs.ts';
import { queryBoolean } from '../../../services/activities/query.ts';
import { NOT_MODIFIED } from '../../conditional.ts';
import { zeroFilled } from '../../../../engine/curves/activity-curves.ts';
import type { Frame } from '../../../../engine/frames/frame.ts';
import { expandSegments, SEGMENT_TOLERANCE, segment, segmentMeans } from '../../../../engine/frames/segmentation.ts';
import { ActivityParams, ownActivity } from './activity.ts';
import { readSamples } from './data.ts';

export const activityMeanMaxRoute = defineRoute(
  {
    method: 'get',
    path: '/api/v1/activities/{activity_id}/mean-max',
    operationId: 'activity_mean_max',
    summary: 'The exact mean-max curve of an activity',
    description:
      'One row per duration: `duration` (s, INT32), the metric (its best mean over any window of that many seconds, DOUBLE) and `start` (UTC start of ' +
      'the earliest best window). Exact at every duration (pauses count as zero); not forced to be monotone. `metric` defaults to power when the activity ' +
      'records it, else speed; a metric the activity does not record gives an empty frame. With `segmentation=true` the curve is computed from the ' +
      'segmented samples (see `/data`): within 5 W (0.05 m/s) of the exact curve.',
    tags: ['activities'],
    auth: { scopes: ['data:read'] },
    params: ActivityParams,
    query: z.object({
      durations: DurationsParam,
      metric: MeanMaxMetricParam.optional(),
      segmentation: queryBoolean(false).describe(
        'Compute the curve from the segmented samples (see `/data`): within 5 W (0.05 m/s) of the exact curve',
      ),
      format: FormatParam,
    }),
    responses: { 200: frameResponse('The mean-max curve'), 304: NOT_MODIFIED, 404: { description: 'No such activity of this user' } },
  },
  async (ctx, { params, query }) => {
    const activity = await ownActivity(ctx, params.activity_id);
    const metric = query.metric ?? (activity.metrics.includes('power') ? 'power' : 'speed');
    const durations = durationsFor(query.durations, activity.metrics.includes(metric) ? activity.samples : 0);
    const json = jsonRequested(ctx, query.format);
    await sendComputed(ctx, [activity.id, metric, [...durations], query.segmentation, json], async (signal) => {
      let best: Float64Array = new Float64Array(0);
      let start: Int32Array = new Int32Array(0);
      if (durations.length) {
        // From the sample file, exact at the durations asked (the curve is not stored: docs/architecture.md, "Stored curves").
        const file = await readSamples(ctx, activity, [metric]);
        let samples = file.channels[metric]!;
        if (query.segmentation) {
          const seg = segment(samples, SEGMENT_TOLERANCE[metric]);
          samples = expandSegments(seg, segmentMeans(samples, seg), samples.length);
        }
        ({ best, start } = await ctx.deps.engine.pool.meanMax({ samples: zeroFilled(samples), durations: durations.slice() }, signal));
      }
      const t0 = activity.start_time.getTime();
      const frame: Frame = {
        columns: [
          { name: 'duration', type: 'int32', values: durations },
          { name: metric, type: 'double', values: best },
          { name: 'start', type: 'timestamptz', values: Float64Array.from(start, (i) => (i < 0 ? Number.NaN : t0 + i * 1000)) },
        ],
      };
      return encodeFrame(ctx.deps, frame, json, undefined, signal);
    });
  },
);
