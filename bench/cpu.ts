import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';

/**
 * Where the machine's CPU time went during a measurement (Linux /proc; zeros elsewhere): this
 * process (with its threads), PostgreSQL and Redis (every process of theirs, whichever client they
 * serve: on a shared machine that includes other programs' queries), and every other process — other work on a shared machine, which makes the figures worse than they would be on an
 * idle one. In cores (CPU seconds per second of wall time).
 */
export interface CpuSplit {
  wall_s: number;
  machine_busy_cores: number;
  this_process_cores: number;
  postgres_redis_cores: number;
  other_processes_cores: number;
  cores: number;
  load_average_1m_before: number;
}

interface Snapshot {
  at: number;
  busy: number;
  self: number;
  services: number;
  load: number;
}

const SERVICES = /^(postgres|redis-server)/;

/** A process's CPU time so far (utime + stime, all its threads) in clock ticks (100 Hz), and its command name. */
export function procTicks(pid: string): { comm: string; ticks: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    const comm = stat.slice(stat.indexOf('(') + 1, close);
    const fields = stat.slice(close + 2).split(' ');
    // After the comm: state(0) … utime(11) stime(12), in clock ticks.
    return { comm, ticks: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return undefined;
  }
}

/** CPU ticks and name (comm) of each thread of a process, by thread id. */
export function threadTicks(pid: number): Map<string, { comm: string; ticks: number }> {
  const out = new Map<string, { comm: string; ticks: number }>();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const t = procTicks(`${pid}/task/${tid}`);
      if (t) out.set(tid, t);
    }
  } catch {
    // not Linux, or the process is gone
  }
  return out;
}

/**
 * CPU seconds of each thread between two threadTicks snapshots, busiest first: `main` (the thread
 * whose id is the process id), then `<name>#<tid>` (Node names none of its other threads: engine
 * threads, libuv's pool, V8's, DuckDB's); threads that ended meanwhile are missing.
 */
export function threadSeconds(
  pid: number,
  before: ReturnType<typeof threadTicks>,
  after: ReturnType<typeof threadTicks>,
): [string, number][] {
  const out: [string, number][] = [];
  for (const [tid, t] of after)
    out.push([Number(tid) === pid ? 'main' : `${t.comm}#${tid}`, (t.ticks - (before.get(tid)?.ticks ?? 0)) / 100]);
  return out.sort((a, b) => b[1] - a[1]);
}

function snapshot(): Snapshot {
  const at = performance.now();
  let busy = 0;
  let self = 0;
  let services = 0;
  try {
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = cpu;
    busy = user + nice + system + irq + softirq + steal;
    for (const pid of readdirSync('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      const p = procTicks(pid);
      if (!p) continue;
      if (Number(pid) === process.pid) self = p.ticks;
      else if (SERVICES.test(p.comm)) services += p.ticks;
    }
  } catch {
    // not Linux: zeros
  }
  return { at, busy, self, services, load: os.loadavg()[0] ?? 0 };
}

/** Start measuring; call the result to get the split since then. Clock ticks are taken as 100 Hz (USER_HZ). */
export function measureCpu(): () => CpuSplit {
  const start = snapshot();
  return () => {
    const end = snapshot();
    const wall = (end.at - start.at) / 1000;
    const cores = (ticks: number) => Math.round((ticks / 100 / wall) * 100) / 100;
    const busy = cores(end.busy - start.busy);
    const self = cores(end.self - start.self);
    const services = cores(end.services - start.services);
    return {
      wall_s: Math.round(wall * 100) / 100,
      machine_busy_cores: busy,
      this_process_cores: self,
      postgres_redis_cores: services,
      other_processes_cores: Math.max(0, Math.round((busy - self - services) * 100) / 100),
      cores: os.cpus().length,
      load_average_1m_before: Math.round(start.load * 100) / 100,
    };
  };
}

export function describeCpu(c: CpuSplit): string {
  const warn =
    c.other_processes_cores > 0.2
      ? ' — the machine was shared: other processes competed for the cores, so these figures are pessimistic'
      : '';
  return (
    `CPU (cores, of ${c.cores}): this process ${c.this_process_cores.toFixed(2)}, PostgreSQL+Redis ${c.postgres_redis_cores.toFixed(2)}, ` +
    `other processes ${c.other_processes_cores.toFixed(2)} (load average before: ${c.load_average_1m_before})${warn}`
  );
}
