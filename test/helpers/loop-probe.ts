// A liveness probe in a process of its own: GET /healthz every `everyMs`, each wait recorded. In its
// own process so that what it measures is the service's event loop, not the test's (a test that
// builds thousands of requests delays its own timers).
import { spawn } from 'node:child_process';

export interface ProbeReport {
  /** Probes sent. */
  count: number;
  /** The longest wait for an answer (ms); a probe still unanswered when stopped counts its wait so far. */
  worst: number;
  /** Probes that waited more than 1 s, with when they were sent (ms after the probe started). */
  slow: { at: number; waited: number; status: number }[];
}

const SCRIPT = `
const [url, every] = [process.argv[1], Number(process.argv[2])];
const t0 = performance.now();
const report = { count: 0, worst: 0, slow: [] };
let stopping = false;
let pending;
async function probe() {
  const sent = performance.now();
  pending = sent;
  let status = 0;
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(60000) });
    status = res.status;
    await res.arrayBuffer();
  } catch {}
  const waited = performance.now() - sent;
  pending = undefined;
  report.count++;
  report.worst = Math.max(report.worst, waited);
  if (waited > 1000 || status !== 200) report.slow.push({ at: Math.round(sent - t0), waited: Math.round(waited), status });
}
// A probe unanswered for over 1 s is told at once (a line on stdout), so a stalled service fails the
// test now rather than at its timeout.
let told;
setInterval(() => {
  if (pending !== undefined && told !== pending && performance.now() - pending > 1000) {
    told = pending;
    process.stdout.write('STALL ' + Math.round(performance.now() - pending) + '\\n');
  }
}, 50).unref();
(async () => {
  while (!stopping) {
    const next = performance.now() + every;
    await probe();
    await new Promise((r) => setTimeout(r, Math.max(0, next - performance.now())));
  }
})();
process.stdin.resume();
process.stdin.on('end', () => {
  stopping = true;
  if (pending !== undefined) report.worst = Math.max(report.worst, performance.now() - pending);
  process.stdout.write('REPORT ' + JSON.stringify(report) + '\\n', () => process.exit(0));
});
`;

/**
 * Start probing `baseUrl`/healthz; `stalled` resolves (with the wait so far) as soon as a probe has
 * waited over 1 s; `stop` ends the probing and gives the report.
 */
export function startLoopProbe(baseUrl: string, everyMs = 100): { stalled: Promise<number>; stop(): Promise<ProbeReport> } {
  const child = spawn(process.execPath, ['-e', SCRIPT, `${baseUrl}/healthz`, String(everyMs)], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  let onStall: (ms: number) => void = () => {};
  const stalled = new Promise<number>((resolve) => (onStall = resolve));
  child.stdout!.on('data', (chunk: Buffer) => {
    out += chunk;
    const stall = /^STALL (\d+)$/m.exec(out);
    if (stall) onStall(Number(stall[1]));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    stalled,
    async stop() {
      child.stdin!.end();
      await exited;
      const line = /^REPORT (.*)$/m.exec(out);
      if (!line) throw new Error(`the probe gave no report: ${out}`);
      return JSON.parse(line[1]!) as ProbeReport;
    },
  };
}
