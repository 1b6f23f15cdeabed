import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** This checkout's script (the harness's, the same on both sides), not the tree's copy. */
const SCRIPT = fileURLToPath(new URL('../longitudinal_baseline.py', import.meta.url));

/**
 * The DuckDB + numpy baseline of bench/longitudinal.ts kept running (`python3
 * bench/longitudinal_baseline.py --serve`), so that a row can time one run of it without Python's
 * start-up and imports: a spec (the script's input, as JSON) in, its one-line JSON answer out, in
 * order. A spec the script fails on rejects with its message; a script that exits rejects every
 * request waiting and every later one.
 */
export class ScriptServer {
  private child: ChildProcessWithoutNullStreams;
  private waiting: { resolve(answer: unknown): void; reject(err: Error): void }[] = [];
  private exited: Error | undefined;
  /** The end of the script's stderr, for the message when it exits. */
  private stderr = '';

  constructor() {
    this.child = spawn('python3', [SCRIPT, '--serve'], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stderr.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString()).slice(-2000);
    });
    createInterface({ input: this.child.stdout }).on('line', (line) => {
      const waiter = this.waiting.shift();
      if (!waiter) return;
      let answer: { error?: string };
      try {
        answer = JSON.parse(line);
      } catch {
        waiter.reject(new Error(`longitudinal_baseline.py --serve wrote no JSON: ${line.slice(0, 200)}`));
        return;
      }
      if (answer.error !== undefined) waiter.reject(new Error(`longitudinal_baseline.py: ${answer.error}`));
      else waiter.resolve(answer);
    });
    const gone = (why: string) => {
      this.exited ??= new Error(
        `longitudinal_baseline.py --serve ${why}${this.stderr ? `: ${this.stderr.trim().split('\n').at(-1)}` : ''}`,
      );
      for (const w of this.waiting.splice(0)) w.reject(this.exited);
    };
    this.child.on('error', (err) => gone(`could not run (${err.message})`));
    // A write to a script that has gone fails with EPIPE: its exit already rejected the request.
    this.child.stdin.on('error', () => {});
    this.child.on('exit', (code, signal) => gone(`exited (${signal ?? code})`));
  }

  /** One run of the script on `spec`; its answer. */
  request<T>(spec: object): Promise<T> {
    if (this.exited) return Promise.reject(this.exited);
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ resolve: resolve as (answer: unknown) => void, reject });
      this.child.stdin.write(`${JSON.stringify(spec)}\n`);
    });
  }

  /** Its stdin closed: the script ends after the spec it is on (killed if it has not within 10 s). */
  async close(): Promise<void> {
    if (this.exited || this.child.exitCode !== null) return;
    const ended = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await ended;
    clearTimeout(timer);
  }
}
