import { z } from 'zod';
import { defineRoute } from '../../../http/route.ts';
import { AwdMetricParam, FormatParam } from '../../../services/activities/curve-params.ts';
import { encodeFrame, jsonRequested, sendComputed } from '../../activities/computed.ts';
import { frameResponse } from '../../activities/frame-docs.ts';
import { NOT_MODIFIED } from '../../conditional.ts';
import { awdFrame } from '../../../../engine/frames/curve-frames.ts';
import { activityAwd } from '../../../../db/curves.ts';
import { accumulatedWorkDuration } from '../../../../engine/curves/awd.ts';
import { LEVEL_STEP } from '../../../../engine/curves/levels.ts';
import { rootSport } from '../../../../lib/sports.ts';
import { ActivityParams, ownActivity } from './activity.ts';
import { readSamples } from './data.ts';

export const activityAwdRoute = defineRoute(
  {
    method: 'get',
    path: '/api/v1/activities/{activity_id}/accumulated-work-duration',
    operationId: 'activity_accumulated_work_duration',
    summary: 'Time spent at or above each intensity level',
    description:
      'One row per intensity level (1 W for power, 0.01 m/s for speed, 1 bpm for heart_rate), highest first: the level (DOUBLE, named after the ' +
      'metric) and `duration` (INT32 seconds at or above it). `metric` defaults to power for cycling and speed for other sports. Seconds without a ' +
      'value (pauses) count at no level; a metric the activity does not record gives an empty frame.',
    tags: ['activities'],
    auth: { scopes: ['data:read'] },
    params: ActivityParams,
    query: z.object({ metric: AwdMetricParam.optional(), format: FormatParam }),
    responses: {
      200: frameResponse('Accumulated work duration, descending by level'),
      304: NOT_MODIFIED,
      404: { description: 'No such activity of this user' },
    },
  },
  async (ctx, { params, query }) => {
    const activity = await ownActivity(ctx, params.activity_id);
    const metric = query.metric ?? (rootSport(activity.sport) === 'cycling' ? 'power' : 'speed');
    const json = jsonRequested(ctx, query.format);
    await sendComputed(ctx, [activity.id, metric, json], async (signal) => {
      let awd = activity.metrics.includes(metric) ? await activityAwd(ctx.deps.db, activity.id, metric) : new Int32Array(0);
      if (!awd) {
        const file = await readSamples(ctx, activity, [metric]);
        awd = accumulatedWorkDuration(file.channels[metric]!, LEVEL_STEP[metric]);
      }
      return encodeFrame(ctx.deps, awdFrame(metric, awd, LEVEL_STEP[metric]), json, undefined, signal);
    });
  },
);
