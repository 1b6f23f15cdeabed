import http from 'node:http';
import os from 'node:os';
import { startTestService, type TestService } from '../test/helpers/service.ts';
import { createTestUser, tokenFor } from '../test/helpers/users.ts';
import { buildRideFit } from '../test/helpers/synthetic.ts';
import { formatTable, quantile, recordTarget, writeReport } from './report.ts';

/**
 * `npm run bench -- soak` (issue 16): BENCH_SOAK_SECONDS (default 600) of mixed traffic against one
 * service (API and workers in one process, INGEST_CONCURRENCY=2, ENGINE_THREADS=2): 16 keep-alive
 * connections reading what clients poll and ask (activity list pages with varying limits, the latest
 * activity, longitudinal curves with varying durations) while one new 30-minute ride is uploaded
 * every second, each upload a change that bumps the user's versions. Every 10 s it prints req/s,
 * p99, errors, the service process's RSS and heap, and Redis's used memory and key count. The
 * target is flat: Redis's memory and the process's RSS in the last third no more than 1.5× their
 * level after the first third.
 */
const SECONDS = Number(process.env.BENCH_SOAK_SECONDS ?? 600);
const CONNECTIONS = 16;

interface Tick {
  at_s: number;
  rps: number;
  p99_ms: number;
  errors: number;
  uploads: number;
  rss_mb: number;
  heap_mb: number;
  redis_mb: number;
  redis_keys: number;
}

export async function benchSoak() {
  process.stdout.write(`\n== soak: ${SECONDS} s of reads (${CONNECTIONS} connections) and one upload per second\n\n`);
  const service = await startTestService({
    workers: true,
    env: { LOG_LEVEL: 'warn', ENGINE_THREADS: '2', INGEST_CONCURRENCY: '2', API_RATE_LIMIT: '1000000' },
  });
  try {
    const user = await createTestUser(service);
    const token = await tokenFor(service, user, ['data:read', 'data:write']);
    const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
    const counters: Counters = { latencies: [], errors: 0, uploads: 0 };
    const until = performance.now() + SECONDS * 1000;
    const ticks: Tick[] = [];
    const started = performance.now();
    await Promise.all([
      ...readers(service, token, agent, counters, until),
      uploader(service, token, counters, until),
      sampler(service, counters, until, started, ticks),
    ]);
    agent.destroy();
    summarise(ticks);
  } finally {
    await service.close();
  }
}

/** What the readers and the uploader count, read (and the latencies taken) by the sampler every 10 s. */
interface Counters {
  latencies: number[];
  errors: number;
  uploads: number;
}

/** CONNECTIONS readers of what clients poll and ask, each sending its next request when its last is answered, until `until`. */
function readers(service: TestService, token: string, agent: http.Agent, counters: Counters, until: number): Promise<void>[] {
  const paths = (i: number) => {
    const k = i % 10;
    if (k < 5) return `/api/v1/activities/?limit=${10 + (i % 40)}`;
    if (k < 7) return '/api/v1/activities/latest';
    return `/api/v1/activities/longitudinal-mean-max?metric=power&format=json&durations=${1 + (i % 30)},60,300,1200`;
  };
  const get = (path: string) =>
    new Promise<number>((resolve, reject) => {
      const t0 = performance.now();
      const req = http.request(`${service.url}${path}`, { agent, headers: { authorization: `Bearer ${token}` } }, (res) => {
        res.resume();
        res.on('end', () => (res.statusCode! < 400 ? resolve(performance.now() - t0) : reject(new Error(String(res.statusCode)))));
      });
      req.on('error', reject);
      req.end();
    });
  let n = 0;
  return Array.from({ length: CONNECTIONS }, async () => {
    while (performance.now() < until) {
      try {
        counters.latencies.push(await get(paths(n++)));
      } catch {
        counters.errors++;
      }
    }
  });
}

/** A new 30-minute ride uploaded every second until `until`. */
async function uploader(service: TestService, token: string, counters: Counters, until: number): Promise<void> {
  let i = 0;
  while (performance.now() < until) {
    const next = performance.now() + 1000;
    const bytes = buildRideFit({ start: new Date(Date.UTC(2025, 0, 1) + i * 3_600_000), seconds: 1800, seed: 9000 + i }, { fast: true });
    i++;
    const form = new FormData();
    form.append('files', new Blob([bytes]), `ride-${i}.fit`);
    const res = await fetch(`${service.url}/api/v1/activities/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: form,
    }).catch(() => undefined);
    if (res?.status === 202) counters.uploads++;
    else counters.errors++;
    await res?.arrayBuffer().catch(() => undefined);
    await new Promise((r) => setTimeout(r, Math.max(0, next - performance.now())));
  }
}

/** Every 10 s until `until`: the window's req/s and p99, the counts, the process's memory and Redis's; each printed. */
async function sampler(service: TestService, counters: Counters, until: number, started: number, ticks: Tick[]): Promise<void> {
  while (performance.now() < until) {
    await new Promise((r) => setTimeout(r, 10_000));
    const window = counters.latencies;
    counters.latencies = [];
    const sorted = window.sort((a, b) => a - b);
    const info = await service.deps.redis.info('memory');
    const used = Number(/used_memory:(\d+)/.exec(info)?.[1] ?? 0);
    const keys = await service.deps.redis.dbsize();
    const memory = process.memoryUsage();
    const tick: Tick = {
      at_s: Math.round((performance.now() - started) / 1000),
      rps: Math.round(window.length / 10),
      p99_ms: sorted.length ? Math.round(quantile(sorted, 0.99) * 10) / 10 : 0,
      errors: counters.errors,
      uploads: counters.uploads,
      rss_mb: Math.round(memory.rss / 2 ** 20),
      heap_mb: Math.round(memory.heapUsed / 2 ** 20),
      redis_mb: Math.round((used / 2 ** 20) * 10) / 10,
      redis_keys: keys,
    };
    ticks.push(tick);
    process.stdout.write(
      `${tick.at_s} s: ${tick.rps} req/s, p99 ${tick.p99_ms} ms, errors ${tick.errors}, uploads ${tick.uploads}, RSS ${tick.rss_mb} MB (heap ${tick.heap_mb}), Redis ${tick.redis_mb} MB / ${tick.redis_keys} keys\n`,
    );
  }
}

/** Flat or not (the last third against the first); the ticks printed, the target recorded, the report written. */
function summarise(ticks: Tick[]): void {
  const third = Math.max(1, Math.floor(ticks.length / 3));
  const early = ticks.slice(0, third);
  const late = ticks.slice(-third);
  const peak = (xs: Tick[], f: (t: Tick) => number) => Math.max(...xs.map(f));
  const redisFlat =
    peak(late, (t) => t.redis_mb) <=
    1.5 *
      Math.max(
        1,
        peak(early, (t) => t.redis_mb),
      );
  const rssFlat = peak(late, (t) => t.rss_mb) <= 1.5 * peak(early, (t) => t.rss_mb);
  process.stdout.write(`\n${os.cpus().length} cores, Node ${process.version}\n\n`);
  process.stdout.write(
    formatTable(
      ['s', 'req/s', 'p99 ms', 'errors', 'uploads', 'RSS MB', 'heap MB', 'Redis MB', 'Redis keys'],
      ticks.map((t) => [t.at_s, t.rps, t.p99_ms, t.errors, t.uploads, t.rss_mb, t.heap_mb, t.redis_mb, t.redis_keys].map(String)),
    ),
  );
  const figure = `Redis ${peak(early, (t) => t.redis_mb)} → ${peak(late, (t) => t.redis_mb)} MB, RSS ${peak(early, (t) => t.rss_mb)} → ${peak(late, (t) => t.rss_mb)} MB (first third → last third), ${ticks.at(-1)?.errors ?? 0} errors`;
  recordTarget({
    benchmark: 'soak',
    target: `${SECONDS} s of reads and an upload per second: Redis memory and RSS flat (last third ≤ 1.5× the first), no errors`,
    figure,
    met: redisFlat && rssFlat && (ticks.at(-1)?.errors ?? 0) === 0,
  });
  const report = {
    benchmark: 'soak',
    at: new Date().toISOString(),
    node: process.version,
    cores: os.cpus().length,
    seconds: SECONDS,
    ticks,
  };
  process.stdout.write(`\nwrote ${writeReport('soak', report)} and bench/results/latest.json\n`);
}
