import { spawn, type ChildProcess } from 'node:child_process';
import type { Config } from '../../lib/config.ts';

/** The environment that makes another process use the same database, Redis prefix and data directory as `config`. */
export function envOf(config: Config, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    DATABASE_URL: config.DATABASE_URL,
    REDIS_URL: config.REDIS_URL,
    QUEUE_PREFIX: config.QUEUE_PREFIX,
    DATA_DIR: config.DATA_DIR,
    BASE_URL: config.BASE_URL,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'error',
    JOB_LOCK_MS: String(config.JOB_LOCK_MS),
    INGEST_CONCURRENCY: String(config.INGEST_CONCURRENCY),
    ENGINE_THREADS: '1',
    ...extra,
  };
}

/** `npm run worker` as a separate process (`nodeArgs`, e.g. `--cpu-prof`, before the script); resolves once it reports its workers running. */
export function startWorkerProcess(config: Config, extra: Record<string, string> = {}, nodeArgs: string[] = []): Promise<ChildProcess> {
  return startProcess('bin/worker.ts', 'workers running', envOf(config, extra), nodeArgs);
}

/** `npm run api` as a separate process on the same database and data directory; resolves once it listens. */
export function startApiProcess(config: Config, extra: Record<string, string> = {}): Promise<ChildProcess> {
  return startProcess('bin/api.ts', 'api listening', envOf(config, { LOG_LEVEL: 'info', ...extra }));
}

/**
 * A service entry point in its own process; resolves once its output says `ready`, rejects if it exits
 * first or takes over a minute. `wrap` runs it through another command (`ip netns exec NS`).
 */
export async function startProcess(
  entry: string,
  ready: string,
  env: Record<string, string>,
  nodeArgs: string[] = [],
  wrap: string[] = [],
): Promise<ChildProcess> {
  const [command, ...args] = [...wrap, process.execPath, ...nodeArgs, '--import=tsx', entry];
  const child = spawn(command!, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${entry} did not start:\n${output}`)), 60_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk;
      if (output.includes(ready)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${entry} exited (${code}):\n${output}`));
    });
  });
  return child;
}

export function kill(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}
