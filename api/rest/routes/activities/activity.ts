import { z } from 'zod';
import type { Ctx } from '../../../http/context.ts';
import { defineRoute } from '../../../http/route.ts';
import { NotFound } from '../../../services/errors.ts';
import { ActivityDetails } from '../../../services/resources/activities-traces.ts';
import { removeActivity } from '../../../services/activities/remove-activity.ts';
import { findActivity } from '../../../../db/activities.ts';
import { linkedActivity } from '../../../services/traces/links.ts';
import { findSource } from '../../../../db/sources.ts';
import { isUuid } from '../../../../lib/ids.ts';
import { isObjectMissing, sourceKey } from '../../../../lib/object-store.ts';
import { NOT_MODIFIED, notModified, readTag, VALIDATOR_HEADERS } from '../../conditional.ts';

export const ActivityParams = z.object({ activity_id: z.string() });

/** The caller's activity, or 404 (also for another user's activity and for ids that are not ours). */
export async function ownActivity(ctx: Ctx, id: string) {
  const activity = isUuid(id) ? await findActivity(ctx.deps.db, ctx.state.principal!.userId, id) : undefined;
  if (!activity) throw new NotFound('Activity not found');
  return activity;
}

export const getActivityRoute = defineRoute(
  {
    method: 'get',
    path: '/api/v1/activities/{activity_id}',
    operationId: 'get_activity',
    summary: 'One activity with its laps, traces, distance and devices',
    description:
      "Carries a strong `ETag` (derived from the user's data version and the application) and `Cache-Control: private, no-cache`: a request " +
      'whose `If-None-Match` names it is answered 304 without a body while nothing the activity shows (its traces, app metadata) changed.',
    tags: ['activities'],
    auth: { scopes: ['data:read'] },
    params: ActivityParams,
    responses: {
      200: { description: 'The activity', schema: ActivityDetails, headers: VALIDATOR_HEADERS },
      304: NOT_MODIFIED,
      404: { description: 'No such activity of this user' },
    },
  },
  async (ctx, { params }) => {
    const etag = await readTag(ctx, 'details');
    const activity = await ownActivity(ctx, params.activity_id);
    if (notModified(ctx, etag)) return;
    const { userId, clientId } = ctx.state.principal!;
    ctx.body = await linkedActivity(ctx.deps.db, userId, clientId, activity);
  },
);

const CONTENT_TYPES = {
  fit: 'application/vnd.ant.fit',
  csv: 'text/csv; charset=utf-8',
  gpx: 'application/gpx+xml',
  tcx: 'application/vnd.garmin.tcx+xml',
} as const;

export const downloadActivityRoute = defineRoute(
  {
    method: 'get',
    path: '/api/v1/activities/{activity_id}/download',
    operationId: 'download_activity',
    summary: 'The original file the activity was read from',
    description:
      "The uploaded file's bytes (decompressed when it was uploaded gzip-compressed), with `Content-Disposition: attachment`. " +
      'Every activity of a multisport file downloads the same file.',
    tags: ['activities'],
    auth: { scopes: ['data:read'] },
    params: ActivityParams,
    responses: {
      200: {
        description: 'The original file',
        contentType: 'application/vnd.ant.fit',
        headers: { 'Content-Disposition': 'attachment; filename="…"' },
      },
      404: { description: 'No such activity of this user' },
    },
  },
  async (ctx, { params }) => {
    const activity = await ownActivity(ctx, params.activity_id);
    const source = await findSource(ctx.deps.db, activity.source_id);
    if (!source) throw new NotFound('Activity not found');
    const original = await ctx.deps.engine.files.store.open(sourceKey(source.user_id, source.id, source.type)).catch((err: unknown) => {
      if (isObjectMissing(err)) throw new NotFound('The original file of this activity is no longer stored');
      throw err;
    });
    ctx.attachment(source.filename);
    ctx.type = CONTENT_TYPES[source.type];
    ctx.length = original.size;
    ctx.body = original.body;
  },
);

export const deleteActivityRoute = defineRoute(
  {
    method: 'delete',
    path: '/api/v1/activities/{activity_id}',
    operationId: 'delete_activity',
    summary: 'Delete an activity',
    description:
      "Removes the activity, its samples (its sample file, and its values in the user's channel columns, overwritten with zeros) and its app " +
      'metadata. When it was the last activity of its file, the source and the original file go too (uploading the same file again then creates it anew).',
    tags: ['activities'],
    auth: { scopes: ['data:write'] },
    params: ActivityParams,
    responses: { 204: { description: 'Deleted' }, 404: { description: 'No such activity of this user' } },
  },
  async (ctx, { params }) => {
    if (!(await removeActivity(ctx.deps, ctx.state.principal!.userId, params.activity_id))) throw new NotFound('Activity not found');
    ctx.status = 204;
  },
);
