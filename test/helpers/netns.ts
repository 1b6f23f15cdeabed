import { execFileSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { startProcess } from './worker-process.ts';

/**
 * Hosts of a test's own on this machine: each a Linux network namespace joined to this one by a veth
 * pair (10.213.N.2 inside, 10.213.N.1 here), so that what runs in it shares nothing with the others
 * but what crosses the network: its own loopback and ports, its own data directory. The machine's
 * PostgreSQL, Redis and S3 gateway listen on 127.0.0.1 only; `forward` relays a port of this side's
 * address to them (a plain TCP relay in the test process), which is how a host reaches them.
 */
export interface Host {
  ns: string;
  /** The host's address, as the others and the test reach it. */
  address: string;
  /** This side's address, where the host reaches the shared services. */
  gateway: string;
  remove(): void;
}

const tag = randomBytes(2).toString('hex');

export function makeHost(n: number): Host {
  const ns = `tds${tag}h${n}`;
  const outside = `tv${tag}${n}`;
  const inside = `tp${tag}${n}`;
  const address = `10.213.${n}.2`;
  const gateway = `10.213.${n}.1`;
  const ip = (...args: string[]) => execFileSync('ip', args, { stdio: 'pipe' });
  ip('netns', 'add', ns);
  ip('link', 'add', outside, 'type', 'veth', 'peer', 'name', inside);
  ip('link', 'set', inside, 'netns', ns);
  ip('addr', 'add', `${gateway}/30`, 'dev', outside);
  ip('link', 'set', outside, 'up');
  ip('netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up');
  ip('netns', 'exec', ns, 'ip', 'addr', 'add', `${address}/30`, 'dev', inside);
  ip('netns', 'exec', ns, 'ip', 'link', 'set', inside, 'up');
  ip('netns', 'exec', ns, 'ip', 'route', 'add', 'default', 'via', gateway);
  return {
    ns,
    address,
    gateway,
    remove() {
      try {
        ip('link', 'del', outside);
      } catch {}
      try {
        ip('netns', 'del', ns);
      } catch {}
    },
  };
}

/** Relay connections to `host:port` on to 127.0.0.1:`to` (default the same port). */
export async function forward(host: string, port: number, to = port): Promise<net.Server> {
  const server = net.createServer((client) => {
    const upstream = net.connect(to, '127.0.0.1');
    client.pipe(upstream).pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end);
    upstream.on('error', end);
    client.on('close', end);
    upstream.on('close', end);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  return server;
}

/** A service entry point run inside a host; resolves once its output says `ready`. */
export function startOn(host: Host, entry: string, ready: string, env: Record<string, string>): Promise<ChildProcess> {
  return startProcess(entry, ready, { PATH: process.env.PATH ?? '', ...env }, [], ['ip', 'netns', 'exec', host.ns]);
}
