// A liveness probe in a process of its own: GET /healthz every `everyMs`, each wait recorded. In its
// own process so that what it measures is the service's event loop, not the test's (a test that
// builds thousands of requests delays its own timers). On a loaded machine the probe's own process
// can be left unscheduled too, and then it reads an answer late that came in time: its own timer
// (every 20 ms) measures how late the probe itself ran, and each wait is counted less that lateness
// (both are reported).
import { spawn } from 'node:child_process';

export interface ProbeReport {
  /** Probes sent. */
  count: number;
  /** The longest wait for an answer (ms); a probe still unanswered when stopped counts its wait so far. */
  worst: number;
  /** Probes that waited more than 1 s beyond the probe's own lateness meanwhile, with when they were sent (ms after the probe started). */
  slow: { at: number; waited: number; late: number; status: number }[];
  /** The probe process's own lateness summed over the whole run (ms): how loaded the machine was. */
  late: number;
}

const SCRIPT = `
const [url, every] = [process.argv[1], Number(process.argv[2])];
const t0 = performance.now();
const report = { count: 0, worst: 0, slow: [], late: 0 };
let stopping = false;
let pending;
// The probe's own lateness: how much later than due its 20 ms timer ran, summed (ms), in all and
// since the pending probe was sent.
let late = 0;
let lateAtSend = 0;
let due = performance.now() + 20;
setInterval(() => {
  const now = performance.now();
  late += Math.max(0, now - due - 5);
  due = now + 20;
}, 20).unref();
// (counting the lateness of the timer now due, which may not have run yet)
const lateNow = () => late + Math.max(0, performance.now() - due - 5);
const ownWait = (sent) => performance.now() - sent - (lateNow() - lateAtSend);
async function probe() {
  const sent = performance.now();
  pending = sent;
  lateAtSend = lateNow();
  let status = 0;
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(60000) });
    status = res.status;
    await res.arrayBuffer();
  } catch {}
  const waited = ownWait(sent);
  pending = undefined;
  report.count++;
  report.worst = Math.max(report.worst, waited);
  if (waited > 1000 || status !== 200)
    report.slow.push({ at: Math.round(sent - t0), waited: Math.round(waited), late: Math.round(lateNow() - lateAtSend), status });
}
// A probe unanswered for over 1 s (less the probe's own lateness) is told at once (a line on
// stdout), so a stalled service fails the test now rather than at its timeout.
let told;
setInterval(() => {
  if (pending !== undefined && told !== pending && ownWait(pending) > 1000) {
    told = pending;
    process.stdout.write('STALL ' + Math.round(ownWait(pending)) + '\\n');
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
  if (pending !== undefined) report.worst = Math.max(report.worst, ownWait(pending));
  report.late = Math.round(late);
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
