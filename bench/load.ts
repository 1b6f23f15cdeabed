import http from 'node:http';

export interface LoadResult {
  requests: number;
  errors: number;
  seconds: number;
  rps: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
}

/**
 * A closed-loop load generator over keep-alive connections: `connections` loops each send the next
 * request when the previous answer arrives, for `seconds` (after a warm-up). Bounded in time and
 * aimed at loopback only.
 */
export async function load(
  url: string,
  opts: { connections: number; seconds: number; warmupSeconds: number; headers?: Record<string, string> },
): Promise<LoadResult> {
  const target = new URL(url);
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(target.hostname)) throw new Error('load tests target loopback only');
  const agent = new http.Agent({ keepAlive: true, maxSockets: opts.connections });
  const once = () =>
    new Promise<number>((resolve, reject) => {
      const t0 = process.hrtime.bigint();
      const req = http.request(target, { agent, headers: opts.headers }, (res) => {
        res.resume();
        res.on('end', () =>
          res.statusCode === 200 ? resolve(Number(process.hrtime.bigint() - t0) / 1e6) : reject(new Error(`status ${res.statusCode}`)),
        );
      });
      req.on('error', reject);
      req.end();
    });
  const run = async (seconds: number, record: boolean) => {
    const latencies: number[] = [];
    let errors = 0;
    const until = performance.now() + seconds * 1000;
    await Promise.all(
      Array.from({ length: opts.connections }, async () => {
        while (performance.now() < until) {
          try {
            const ms = await once();
            if (record) latencies.push(ms);
          } catch {
            errors++;
          }
        }
      }),
    );
    return { latencies, errors };
  };
  await run(opts.warmupSeconds, false);
  const started = performance.now();
  const { latencies, errors } = await run(opts.seconds, true);
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? Number.NaN;
  const round = (x: number) => Math.round(x * 100) / 100;
  return {
    requests: latencies.length,
    errors,
    seconds: round(seconds),
    rps: Math.round(latencies.length / seconds),
    p50_ms: round(q(0.5)),
    p99_ms: round(q(0.99)),
    max_ms: round(latencies[latencies.length - 1] ?? Number.NaN),
  };
}
