import test from 'ava';
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

test('/healthz answers while the process is up', async (t) => {
  const res = await fetch(`${service.url}/healthz`);
  t.is(res.status, 200);
  t.deepEqual(await res.json(), { status: 'ok' });
});

test('/readyz is 200 when PostgreSQL and Redis answer', async (t) => {
  const res = await fetch(`${service.url}/readyz`);
  t.is(res.status, 200);
  t.deepEqual(await res.json(), { status: 'ok', checks: { postgres: 'ok', redis: 'ok' } });
  t.is(res.headers.get('cache-control'), 'no-store');
});

test('/readyz is 503 when Redis is unreachable', async (t) => {
  const redis = createRedis('redis://127.0.0.1:1', 'producer');
  const { server, url } = await serveWith({ redis });
  try {
    const res = await fetch(`${url}/readyz`);
    t.is(res.status, 503);
    t.deepEqual(await res.json(), { status: 'unavailable', checks: { postgres: 'ok', redis: 'error' } });
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
    t.deepEqual(await res.json(), { status: 'unavailable', checks: { postgres: 'error', redis: 'ok' } });
  } finally {
    server.close();
    await db.destroy();
  }
});
