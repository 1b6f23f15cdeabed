import { z } from 'zod';
import { defineRoute } from '../../../http/route.ts';
import { InsufficientScope } from '../../../services/errors.ts';
import { backfillInProgress } from '../../../../db/backfills.ts';

/**
 * `GET /api/v1/profile/status` as SweatStack's client reads it (`AccountStatusResponse`): what this
 * service can give an application for the user, from what it has. It imports files rather than syncing
 * a platform, so the only issue it reports is a history import still running.
 */
const Capability = z.enum(['ready', 'syncing', 'action_required', 'unavailable']);
const StatusResponse = z
  .object({
    issue: z
      .object({
        code: z.string().describe('`sync_pending` while a history import runs'),
        status: z.enum(['action_required', 'syncing']),
        message: z.string(),
        destination: z.string().nullable(),
      })
      .nullable(),
    capabilities: z.object({
      activities: Capability.describe('`ready`: uploads and the API serve activities'),
      activity_history: Capability.describe('`syncing` while a history import (backfill) runs, else `ready`'),
      dailies: Capability.describe('`ready`: daily measures are written through the API'),
      workouts: Capability.describe('`unavailable`: the service holds no planned workouts'),
    }),
  })
  .meta({ id: 'AccountStatusResponse' });

export const profileStatusRoute = defineRoute(
  {
    method: 'get',
    path: '/api/v1/profile/status',
    operationId: 'profile_status',
    summary: 'What the service can give for the user now, and the one issue to show',
    description:
      'Needs `data:read` or `profile` (otherwise 403). A delegated token may read it. `issue` is null unless a history ' +
      'import is running (`sync_pending`, `syncing`, no destination).',
    tags: ['profile'],
    auth: { scopes: [] },
    responses: { 200: { description: 'The status', schema: StatusResponse } },
  },
  async (ctx) => {
    const principal = ctx.state.principal!;
    if (!principal.scopes.includes('data:read') && !principal.scopes.includes('profile')) throw new InsufficientScope(['data:read']);
    const running = await backfillInProgress(ctx.deps.db, principal.userId);
    ctx.body = {
      issue: running
        ? { code: 'sync_pending', status: 'syncing', message: 'Your history import is still running.', destination: null }
        : null,
      capabilities: { activities: 'ready', activity_history: running ? 'syncing' : 'ready', dailies: 'ready', workouts: 'unavailable' },
    } satisfies z.infer<typeof StatusResponse>;
  },
);
