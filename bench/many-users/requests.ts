import http from 'node:http';
import { createPersonalToken } from '../../api/services/oauth/issue.ts';
import { prng } from '../../test/helpers/prng.ts';
import { quantile } from '../report.ts';
import { type ApiProcess, apiCpuSeconds, rssMb } from './api-process.ts';
import type { Bench } from './seed.ts';
import { CONNECTIONS, CURVE_PATH, r1, TICK_SECONDS } from './settings.ts';

/**
 * The requests of `npm run bench -- many-users`: personal tokens for the athletes, one request, and
 * the closed loop on CONNECTIONS connections that makes a row's load (drive), with its figures.
 */
export async function mintTokens(bench: Bench, api: ApiProcess, userIds: string[]): Promise<string[]> {
  const issuer = { issuer: api.url, keys: bench.deps.keys, now: () => new Date() };
  const tokens: string[] = new Array(userIds.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let k = next++; k < userIds.length; k = next++)
        tokens[k] = (
          await createPersonalToken(bench.deps.db, issuer, userIds[k]!, ['data:read'], 'bench many-users')
        ).response.access_token;
    }),
  );
  return tokens;
}

/**
 * A fresh API process's first requests pay for its start (the engine threads' modules, JIT, the
 * connection pools): a few requests for another athlete first, so that the figures after are the
 * athletes' own.
 */
export async function warmProcess(bench: Bench, api: ApiProcess, userId: string): Promise<void> {
  const [token] = await mintTokens(bench, api, [userId]);
  for (let k = 0; k < 5; k++) {
    const a = await get(undefined, api.url + CURVE_PATH, token!);
    if (a.status !== 200) throw new Error(`warm-up: ${a.status} ${a.body.toString().slice(0, 300)}`);
  }
}

export interface Answer {
  status: number;
  ms: number;
  body: Buffer;
}

export function get(agent: http.Agent | undefined, url: string, token: string, accept?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const req = http.request(url, { agent, headers: { authorization: `Bearer ${token}`, ...(accept ? { accept } : {}) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, ms: Number(process.hrtime.bigint() - t0) / 1e6, body: Buffer.concat(chunks) }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

export interface Tick {
  at_s: number;
  rps: number;
  p50_ms: number;
  p99_ms: number;
  errors: number;
  rss_mb: number;
}

export function summarize(latencies: number[]) {
  const sorted = [...latencies].sort((a, b) => a - b);
  return { p50_ms: r1(quantile(sorted, 0.5)), p99_ms: r1(quantile(sorted, 0.99)), max_ms: r1(sorted.at(-1) ?? Number.NaN) };
}

/**
 * A closed loop on CONNECTIONS keep-alive connections: each sends the next request, for a random
 * athlete's token, when its previous answer is in; `warmupSeconds` first, not counted. A non-200
 * answer or a failed request is an error.
 */
export async function drive(
  api: ApiProcess,
  tokens: string[],
  opts: { seconds: number; warmupSeconds: number; seed: number; path?: string | ((k: number) => string); onTick?: (t: Tick) => void },
): Promise<LoadStats> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const random = prng(opts.seed); // (the same athlete sequence in every run)
  const pathOf = typeof opts.path === 'function' ? opts.path : () => (opts.path as string | undefined) ?? CURVE_PATH;
  let sent = 0;
  let record = false;
  let latencies: number[] = [];
  let window: number[] = [];
  let errors = 0;
  const statuses: Record<string, number> = {};
  const run = async (until: number) => {
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (performance.now() < until) {
          const token = tokens[Math.floor(random() * tokens.length)]!;
          try {
            const a = await get(agent, api.url + pathOf(sent++), token);
            if (!record) continue;
            statuses[a.status] = (statuses[a.status] ?? 0) + 1;
            if (a.status === 200) {
              latencies.push(a.ms);
              window.push(a.ms);
            } else errors++;
          } catch (error) {
            if (!record) continue;
            errors++;
            const key = (error as { code?: string }).code ?? 'error';
            statuses[key] = (statuses[key] ?? 0) + 1;
          }
        }
      }),
    );
  };
  try {
    await run(performance.now() + opts.warmupSeconds * 1000);
    record = true;
    const cpu0 = apiCpuSeconds(api.pid);
    const t0 = performance.now();
    const until = t0 + opts.seconds * 1000;
    let ticker: NodeJS.Timeout | undefined;
    if (opts.onTick) {
      let last = t0;
      ticker = setInterval(() => {
        const now = performance.now();
        const w = window;
        window = [];
        opts.onTick!({
          at_s: Math.round((now - t0) / 1000),
          rps: Math.round(w.length / ((now - last) / 1000)),
          ...summarize(w),
          errors,
          rss_mb: rssMb(api.pid) ?? 0,
        });
        last = now;
      }, TICK_SECONDS * 1000);
    }
    await run(until);
    clearInterval(ticker);
    const seconds = (performance.now() - t0) / 1000;
    const cpu = apiCpuSeconds(api.pid) - cpu0;
    const requests = latencies.length;
    const out = {
      athletes: tokens.length,
      requests,
      errors,
      statuses,
      seconds: r1(seconds),
      rps: r1(requests / seconds),
      ...summarize(latencies),
      api_cpu_ms_per_request: r1((cpu * 1000) / Math.max(1, requests + errors)),
    };
    latencies = [];
    return out;
  } finally {
    agent.destroy();
  }
}

export interface LoadStats {
  athletes: number;
  requests: number;
  errors: number;
  statuses: Record<string, number>;
  seconds: number;
  rps: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
  api_cpu_ms_per_request: number;
}

/** The fields of a row measured under load: counts, rate, latencies, the API's peak RSS and CPU per request. */
export function loadFields(stats: LoadStats, rssPeakMb: number) {
  return {
    requests: stats.requests,
    errors: stats.errors,
    rps: stats.rps,
    p50_ms: stats.p50_ms,
    p99_ms: stats.p99_ms,
    max_ms: stats.max_ms,
    rss_peak_mb: rssPeakMb,
    cpu_ms: stats.api_cpu_ms_per_request,
  };
}
