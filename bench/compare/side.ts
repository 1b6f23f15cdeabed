import { type ChildProcess, fork } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const SAMPLER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'sampler.ts');

/**
 * A sampler process (bench/compare/sampler.ts, this checkout's harness) with its working directory
 * in a tree, and the requests to it, answered in order. Every sampler process starts
 * with the same Node options: tsx's loader (this checkout's) and whatever
 * NODE_OPTIONS holds.
 */
export class Side {
  readonly name: string;
  readonly root: string;
  private child: ChildProcess;
  private waiting: { resolve(answer: Answer): void; reject(err: Error): void }[] = [];
  private ready: Promise<void>;
  private exited: Error | undefined;

  constructor(name: string, root: string, env: Record<string, string>) {
    this.name = name;
    this.root = root;
    this.child = fork(SAMPLER, [], {
      cwd: root,
      execArgv: ['--import', import.meta.resolve('tsx')],
      env: { ...process.env, ...env },
      // Its output (a service's log lines) goes to stderr: stdout may carry --json.
      stdio: ['ignore', process.stderr, 'inherit', 'ipc'],
    });
    this.ready = new Promise((resolve, reject) => {
      this.child.once('message', () => resolve());
      this.child.once('exit', (code, signal) => reject(new Error(`sampler ${name} exited (${signal ?? code}) before it was ready`)));
    });
    this.child.on('message', (answer: Answer) => {
      if (answer.op === 'ready') return;
      this.waiting.shift()?.resolve(answer);
    });
    this.child.on('exit', (code, signal) => {
      this.exited = new Error(`sampler ${name} exited (${signal ?? code})`);
      for (const w of this.waiting.splice(0)) w.reject(this.exited);
    });
  }

  async request<T extends Answer>(message: object): Promise<T> {
    await this.ready;
    if (this.exited) throw this.exited;
    const answer = await new Promise<Answer>((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.child.send(message);
    });
    if (answer.op === 'failed') throw new Error(`sampler ${this.name}: ${(answer as Answer & { message?: string }).message}`);
    return answer as T;
  }

  async close(): Promise<void> {
    if (this.exited) return;
    const gone = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    await this.request({ op: 'close' }).catch(() => {});
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 30_000);
    await gone;
    clearTimeout(timer);
  }
}

export interface Answer {
  op: string;
}
