import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { ConfigSchema } from '../../lib/config.ts';
import { procTicks } from '../cpu.ts';
import { ROOT } from '../report.ts';
import type { Bench } from './seed.ts';
import { DIR, QUEUE_PREFIX } from './settings.ts';

/**
 * The API of `npm run bench -- many-users` in its own process (`node --import tsx bin/api.ts`, its
 * default settings but for those set here), its RSS every second and its CPU time, from /proc.
 */
export interface ApiProcess {
  child: ChildProcess;
  pid: number;
  url: string;
  stop(): Promise<void>;
}

/** The config keys of the service: the spawned API takes none of them from this environment but those set here (its defaults otherwise). */
export const CONFIG_KEYS = new Set(Object.keys(ConfigSchema.in.shape));

export async function startApi(bench: Bench, port: number): Promise<ApiProcess> {
  const url = `http://127.0.0.1:${port}`;
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !CONFIG_KEYS.has(k) || k === 'SECRETS_KEY'));
  const env = {
    ...inherited,
    DATABASE_URL: bench.databaseUrl,
    REDIS_URL: bench.config.REDIS_URL,
    QUEUE_PREFIX,
    DATA_DIR: DIR,
    PORT: String(port),
    HOST: '127.0.0.1',
    BASE_URL: url,
    CURVE_CACHE_SECONDS: '0',
    LOG_LEVEL: 'warn',
    // Counted on every request (its Redis round trip is in every figure) but above the load: one
    // athlete's token at U = 1 makes thousands of requests a minute.
    API_RATE_LIMIT: '1000000',
  };
  // BENCH_MANY_USERS_API_NODE_ARGS, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`, profiles the API processes (their engine threads write their own profiles).
  const nodeArgs = (process.env.BENCH_MANY_USERS_API_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', 'bin/api.ts'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.stderr!.on('data', (d: Buffer) => process.stderr.write(`api: ${d}`));
  await new Promise<void>((resolve, reject) => {
    let out = '';
    let listening = false;
    child.stdout!.on('data', (d: Buffer) => {
      if (listening) return void process.stderr.write(`api: ${d}`);
      out += d;
      if (/listening on/.test(out)) {
        listening = true;
        resolve();
      }
    });
    child.once(
      'exit',
      (code, signal) => !listening && reject(new Error(`bin/api.ts exited (${code ?? signal}) before listening: ${out.slice(-2000)}`)),
    );
  });
  return {
    child,
    pid: child.pid!,
    url,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export function rssMb(pid: number): number | undefined {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : undefined;
  } catch {
    return undefined;
  }
}

/** The API process's VmRSS every second (s since the bench started, MB). */
export class RssSampler {
  readonly series: { t: number; mb: number; phase: string }[] = [];
  #timer: NodeJS.Timeout | undefined;
  #pid = 0;
  phase = '';
  constructor(private readonly t0: number) {}
  watch(pid: number): void {
    this.#pid = pid;
    this.#timer ??= setInterval(() => this.sample(), 1000);
  }
  sample(): number | undefined {
    const mb = rssMb(this.#pid);
    if (mb !== undefined) this.series.push({ t: Math.round((performance.now() - this.t0) / 100) / 10, mb, phase: this.phase });
    return mb;
  }
  peak(phase?: string): number {
    return this.series.filter((s) => phase === undefined || s.phase === phase).reduce((n, s) => Math.max(n, s.mb), 0);
  }
  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}

export const CLOCK_TICKS = 100;

export function apiCpuSeconds(pid: number): number {
  return (procTicks(String(pid))?.ticks ?? Number.NaN) / CLOCK_TICKS;
}
