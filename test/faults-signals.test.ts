import test from 'ava';
import { spawn } from 'node:child_process';
import net from 'node:net';
import { freePort, testEnvironment } from './helpers/service.ts';

// `npm start` as an operator runs it, in its own process group: SIGTERM (or Ctrl-C's SIGINT) sent
// to the whole group reaches npm, which forwards it, and the service. Before, npm → tsx → node kept running.
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  test.serial(
    `npm start: ${signal} to the process group finishes the in-flight request and exits 0 within SHUTDOWN_TIMEOUT_MS`,
    async (t) => {
      const port = await freePort();
      const environment = await testEnvironment({
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        BASE_URL: `http://127.0.0.1:${port}`,
        SHUTDOWN_TIMEOUT_MS: '5000',
      });
      const child = spawn('npm', ['start', '--silent'], {
        env: { ...process.env, ...environment.env },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      });
      let out = '';
      child.stdout!.on('data', (d) => (out += d));
      child.stderr!.on('data', (d) => (out += d));
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      t.teardown(async () => {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          // gone
        }
        await environment.cleanup();
      });
      const until = Date.now() + 60_000;
      while (!out.includes('listening on')) {
        if (Date.now() > until || child.exitCode !== null) throw new Error(`did not start: ${out}`);
        await new Promise((r) => setTimeout(r, 50));
      }

      // A request in flight: headers read (100 Continue), body still arriving when the signal comes.
      const body = 'email=a%40b.c&password=whatever-it-is';
      const socket = net.connect(port, '127.0.0.1');
      await new Promise((r) => socket.once('connect', r));
      let response = '';
      socket.on('data', (d) => (response += d));
      socket.on('error', (err) => (response += ` [${err.message}]`));
      const closed = new Promise((r) => socket.once('close', r));
      socket.write(
        `POST /signin HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nOrigin: http://127.0.0.1:${port}\r\nExpect: 100-continue\r\nConnection: close\r\n` +
          `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\n`,
      );
      await until2(
        () => response.includes('100 Continue'),
        () => `no 100 Continue: ${response}`,
      );
      socket.write(body.slice(0, 10));
      const sent = Date.now();
      process.kill(-child.pid!, signal);
      await until2(
        () => out.includes('"msg":"shutting down"'),
        () => `no shutdown: ${out.slice(-3000)}`,
      );
      socket.write(body.slice(10));
      await closed;
      t.regex(
        response,
        /HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 (200|303|401|422) /,
        `the in-flight request was answered, not cut; the service said:\n${out.slice(-3000)}`,
      );
      t.is(await exited, 0, out);
      t.true(Date.now() - sent < 5_000 + 3_000, 'exited within SHUTDOWN_TIMEOUT_MS');
      t.regex(out, /"msg":"shutdown complete"/);
      t.notRegex(out, /second signal/);
    },
  );
}

async function until2(ok: () => boolean, what: () => string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(what());
    await new Promise((r) => setTimeout(r, 20));
  }
}
