import { mkdirSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as Config from '../../../lib/config.ts';
import type { Family, Row, Tree } from '../row.ts';
import { benchDatabase, burst, type Child, freePort, prepareDatabase, secretsKeyOf, startChild } from './http-api.ts';

/**
 * The http benchmark (benchHttp, bench/run.ts) as compare rows: the tree's API (`node --import tsx
 * bin/api.ts` in the tree, benchHttp's settings: LOG_LEVEL warn, API_RATE_LIMIT counted but above
 * the load) twice, the read cache on and off (READ_CACHE_SECONDS=0), on the tree's own bench
 * database (./http-api.ts: migrated by the tree, the benchmark's history of 1,000 activities with
 * traces and app metadata seeded once and kept), and the plain node:http server
 * (bench/baseline-server.ts, the same on both sides) as a control. One sample is one burst of
 * REQUESTS GETs over CONNECTIONS keep-alive connections, closed loop, given as ms per request
 * (the burst's wall time ÷ REQUESTS: the inverse of its throughput). Rows: the baseline, GET /healthz, GET
 * /api/v1/oauth/userinfo (a personal token: JWT, grant row, user row), and GET
 * /api/v1/activities/?limit=50 read by an application, cached (a polled page) and built every time.
 */
const REQUESTS = 100;
const CONNECTIONS = 8;
const ACTIVITIES = 1000;
const BASELINE_SERVER = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'baseline-server.ts');

export const httpFamily: Family = {
  name: 'http',
  // The API processes of each tree, and their database: each side's rows in its own process.
  isolation: 'process',
  threshold: 0.05,
  // Each side's API processes carry a bias of their own: in a one-fork A/A run the list built on every
  // request read +5.4 % (+2.3 … +7.5 %), "slower"; three forks, each with fresh processes, hold it.
  forks: 3,
  about: `the tree\u2019s API on loopback, ${REQUESTS} requests over ${CONNECTIONS} keep-alive connections a sample; plain node:http as a control`,
  async open(tree: Tree) {
    const { loadConfig } = await tree.load<typeof Config>('lib/config.ts');
    const database = benchDatabase(loadConfig().DATABASE_URL, tree.root);
    const dataDir = path.join(os.tmpdir(), 'tds-compare-http', database.name);
    mkdirSync(dataDir, { recursive: true });
    const secretsKey = secretsKeyOf(database.name);
    const port = await freePort();
    let uncachedPort = await freePort();
    while (uncachedPort === port) uncachedPort = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const { token, appToken, seedMs } = await prepareDatabase(tree, {
      url: database.url,
      secretsKey,
      dataDir,
      issuer: base,
      activities: ACTIVITIES,
    });

    // Seeding is done once per tree (its database is kept): say so when this open paid for it.
    if (seedMs > 1000)
      process.stderr.write(
        `http: ${database.name} seeded with ${ACTIVITIES} activities in ${(seedMs / 1000).toFixed(1)} s (kept for later runs)\n`,
      );

    const env = {
      DATABASE_URL: database.url,
      PORT: String(port),
      HOST: '127.0.0.1',
      BASE_URL: base,
      LOG_LEVEL: 'warn',
      QUEUE_PREFIX: `tds_bench_${database.name.slice(-8)}`,
      API_RATE_LIMIT: '1000000',
      SECRETS_KEY: secretsKey,
      DATA_DIR: dataDir,
    };
    const children: Child[] = [];
    const agents: http.Agent[] = [];
    const close = async () => {
      for (const agent of agents.splice(0)) agent.destroy();
      await Promise.all(children.splice(0).map((c) => c.stop()));
    };
    try {
      const started = await Promise.allSettled([
        startChild('bin/api.ts', tree.root, env),
        startChild('bin/api.ts', tree.root, { ...env, PORT: String(uncachedPort), READ_CACHE_SECONDS: '0' }),
        startChild(BASELINE_SERVER, tree.root, { PORT: '0' }),
      ]);
      for (const s of started) if (s.status === 'fulfilled') children.push(s.value);
      const failed = started.find((s) => s.status === 'rejected');
      if (failed) throw failed.reason;
      const [, , baseline] = children as [Child, Child, Child];

      const row = (id: string, label: string, url: string, headers: Record<string, string> = {}): Row => {
        const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
        agents.push(agent);
        const target = new URL(url);
        return {
          id: `http/${id}`,
          label: `${label} (bursts of ${REQUESTS} requests on ${CONNECTIONS} connections; ms per request)`,
          operations: REQUESTS,
          run: () => burst(target, headers, agent, REQUESTS, CONNECTIONS),
        };
      };
      const app = { authorization: `Bearer ${appToken}` };
      const rows = [
        row('baseline-node-http', 'control: node:http answering a small JSON body', `http://127.0.0.1:${baseline.port}/`),
        row('healthz', 'GET /healthz', `${base}/healthz`),
        row('userinfo', 'GET /api/v1/oauth/userinfo (bearer JWT + grant row + user row)', `${base}/api/v1/oauth/userinfo`, {
          authorization: `Bearer ${token}`,
        }),
        row(
          'list-cached',
          `GET /api/v1/activities/?limit=50, ${ACTIVITIES} activities, an application\u2019s token, read cache on`,
          `${base}/api/v1/activities/?limit=50`,
          app,
        ),
        row(
          'list-uncached',
          `the same, READ_CACHE_SECONDS=0: every page built`,
          `http://127.0.0.1:${uncachedPort}/api/v1/activities/?limit=50`,
          app,
        ),
      ];
      return { rows, close };
    } catch (err) {
      await close();
      throw err;
    }
  },
};
