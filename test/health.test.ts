import test, { type ExecutionContext } from 'ava';
import http from 'node:http';
import { createApp } from '../api/app.ts';
import { createDb } from '../db/database.ts';
import { createRedis } from '../workers/connections.ts';
import { startTestService, type TestService } from './helpers/service.ts';

let service: TestService;
test.before(async () => {
  service = await startTestService();
});
test.after.always(() => service?.close());

async function serveWith(overrides: Partial<TestService['deps']>) {
  const app = createApp({ ...service.deps, ...overrides });
  const server = http.createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}` };
}

/** A /readyz body with its measured delay taken out, checked to be a whole number of milliseconds within the threshold. */
async function readiness(t: ExecutionContext, res: Response) {
  const { event_loop_delay_ms: delay, ...body } = (await res.json()) as { event_loop_delay_ms: unknown };
  t.true(Number.isInteger(delay) && (delay as number) >= 0 && (delay as number) <= service.config.EVENT_LOOP_BLOCKED_MS, `delay ${delay}`);
  return body;
}

test('/healthz answers while the process is up', async (t) => {
  const res = await fetch(`${service.url}/healthz`);
  t.is(res.status, 200);
  t.deepEqual(await res.json(), { status: 'ok' });
});

test('/readyz is 200 when PostgreSQL and Redis answer and the event loop is not blocked', async (t) => {
  const res = await fetch(`${service.url}/readyz`);
  t.is(res.status, 200);
  t.deepEqual(await readiness(t, res), { status: 'ok', checks: { postgres: 'ok', redis: 'ok', event_loop: 'ok' } });
  t.is(res.headers.get('cache-control'), 'no-store');
});

test('/readyz is 503 when Redis is unreachable', async (t) => {
  const redis = createRedis('redis://127.0.0.1:1', 'producer');
  const { server, url } = await serveWith({ redis });
  try {
    const res = await fetch(`${url}/readyz`);
    t.is(res.status, 503);
    t.deepEqual(await readiness(t, res), { status: 'unavailable', checks: { postgres: 'ok', redis: 'error', event_loop: 'ok' } });
  } finally {
    server.close();
    redis.disconnect();
  }
});

test('/readyz is 503 when PostgreSQL is unreachable', async (t) => {
  const db = createDb('postgres://postgres@127.0.0.1:1/none', 1);
  const { server, url } = await serveWith({ db });
  try {
    const res = await fetch(`${url}/readyz`);
    t.is(res.status, 503);
    t.deepEqual(await readiness(t, res), { status: 'unavailable', checks: { postgres: 'error', redis: 'ok', event_loop: 'ok' } });
  } finally {
    server.close();
    await db.destroy();
  }
});
