import { z } from 'zod';
import { defineRoute } from '../route.ts';
import { ping } from '../../db/migrate.ts';

const Health = z.object({ status: z.literal('ok') }).meta({ id: 'Health' });
const Readiness = z
  .object({
    status: z.enum(['ok', 'unavailable']),
    checks: z.object({ postgres: z.enum(['ok', 'error']), redis: z.enum(['ok', 'error']) }),
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
    summary: 'Readiness: PostgreSQL and Redis are reachable',
    tags: ['operations'],
    auth: 'none',
    responses: {
      200: { description: 'Ready to serve', schema: Readiness },
      503: { description: 'A dependency is unreachable', schema: Readiness },
    },
  },
  async (ctx) => {
    const { db, redis } = ctx.deps;
    const [pg, rd] = await Promise.allSettled([withTimeout(ping(db)), withTimeout(redis.ping())]);
    const checks = { postgres: pg.status === 'fulfilled' ? 'ok' : 'error', redis: rd.status === 'fulfilled' ? 'ok' : 'error' } as const;
    const ready = checks.postgres === 'ok' && checks.redis === 'ok';
    ctx.status = ready ? 200 : 503;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { status: ready ? 'ok' : 'unavailable', checks } satisfies z.infer<typeof Readiness>;
  },
);

export const healthRoutes = [healthz, readyz];
