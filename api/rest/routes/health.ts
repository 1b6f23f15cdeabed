import { z } from 'zod';
import { defineRoute } from '../../http/route.ts';
import { ping } from '../../../db/migrate.ts';

const Health = z.object({ status: z.literal('ok') }).meta({ id: 'Health' });
const Readiness = z
  .object({
    status: z.enum(['ok', 'unavailable']).meta({ description: '`unavailable` (with status 503) when any check is not `ok`' }),
    checks: z.object({
      postgres: z.enum(['ok', 'error']).meta({ description: 'PostgreSQL answered a query within 2 s' }),
      redis: z.enum(['ok', 'error']).meta({ description: 'Redis answered a PING within 2 s' }),
      event_loop: z.enum(['ok', 'blocked']).meta({
        description:
          "`blocked` when the process's event loop was blocked longer than `EVENT_LOOP_BLOCKED_MS` (default 500 ms: a 100 ms timer came that much later than due) within the last `EVENT_LOOP_WINDOW_MS` (default 10 s), so a load balancer drains the process meanwhile",
      }),
    }),
    event_loop_delay_ms: z
      .number()
      .int()
      .min(0)
      .meta({ description: 'The worst event-loop delay within the last `EVENT_LOOP_WINDOW_MS`, in milliseconds' }),
  })
  .meta({ id: 'Readiness' });

const CHECK_TIMEOUT_MS = 2_000;

function withTimeout<T>(p: Promise<T>): Promise<T> {
  return Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error('timeout')), CHECK_TIMEOUT_MS).unref())]);
}

export const healthz = defineRoute(
  {
    method: 'get',
    path: '/healthz',
    operationId: 'healthz',
    summary: 'Liveness: the process is up',
    tags: ['operations'],
    auth: 'none',
    responses: { 200: { description: 'The process answers', schema: Health } },
  },
  (ctx) => {
    ctx.body = { status: 'ok' } satisfies z.infer<typeof Health>;
  },
);

export const readyz = defineRoute(
  {
    method: 'get',
    path: '/readyz',
    operationId: 'readyz',
    summary: 'Readiness: PostgreSQL and Redis are reachable and the event loop is not blocked',
    tags: ['operations'],
    auth: 'none',
    responses: {
      200: { description: 'Ready to serve', schema: Readiness },
      503: { description: 'A dependency is unreachable, or the event loop was blocked within the window', schema: Readiness },
    },
  },
  async (ctx) => {
    const { db, redis, loop } = ctx.deps;
    const [pg, rd] = await Promise.allSettled([withTimeout(ping(db)), withTimeout(redis.ping())]);
    // Read after the pings: a loop blocked while they were awaited is reported now, not on the next probe.
    const delay = loop.state();
    const checks = {
      postgres: pg.status === 'fulfilled' ? 'ok' : 'error',
      redis: rd.status === 'fulfilled' ? 'ok' : 'error',
      event_loop: delay.blocked ? 'blocked' : 'ok',
    } as const;
    const ready = checks.postgres === 'ok' && checks.redis === 'ok' && checks.event_loop === 'ok';
    ctx.status = ready ? 200 : 503;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { status: ready ? 'ok' : 'unavailable', checks, event_loop_delay_ms: delay.delay_ms } satisfies z.infer<typeof Readiness>;
  },
);

export const healthRoutes = [healthz, readyz];
