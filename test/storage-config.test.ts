/**
 * A configured object store that cannot be used stops every entry point (`npm start`, the API, the
 * worker) before it does anything else, with one line on stderr naming the setting at fault, never a
 * stack trace: wrong credentials, a missing bucket, an endpoint that is not S3 or does not answer,
 * and a clock the store refuses (the host's clock moved by libfaketime, as a skewed host's is).
 */
import test from 'ava';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gateway } from './helpers/rgw.ts';
import { freePort, testEnvironment } from './helpers/service.ts';

let base: Record<string, string>;
let cleanup: () => Promise<void>;
let notS3: http.Server;

test.before(async () => {
  const environment = await testEnvironment({ LOG_LEVEL: 'info' });
  cleanup = environment.cleanup;
  base = { ...environment.env, ...(await gateway()), SECRETS_KEY: randomBytes(32).toString('base64') };
  notS3 = http.createServer((_req, res) => res.end('<html>a web server</html>'));
  await new Promise<void>((r) => notS3.listen(0, '127.0.0.1', r));
});
test.after.always(async () => {
  notS3?.close();
  await cleanup?.();
});

/** Start an entry point with these settings; its exit code and stderr (it must stop on its own). */
function start(entry: string, env: Record<string, string>, prefix: string[] = []) {
  const [cmd, ...args] = [...prefix, process.execPath, '--import=tsx', entry];
  return new Promise<{ code: number | null; stderr: string; stdout: string }>((resolve) => {
    const child = spawn(cmd!, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let stdout = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.stdout.on('data', (d) => (stdout += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, stdout });
    });
  });
}

const refusals: [string, Record<string, string>, RegExp][] = [
  ["a secret key that is not the access key's", { S3_SECRET_ACCESS_KEY: 'not-the-secret' }, /^S3_SECRET_ACCESS_KEY: .*signature/],
  ['an access key the store does not know', { S3_ACCESS_KEY_ID: 'nobody' }, /^S3_ACCESS_KEY_ID: .*knows no access key "nobody"/],
  ['a bucket that does not exist', { S3_BUCKET: 'no-such-bucket-here' }, /^S3_BUCKET: there is no bucket "no-such-bucket-here"/],
];

for (const [what, env, line] of refusals)
  test(`${what}: the API refuses to start with one line naming the setting`, async (t) => {
    const res = await start('bin/api.ts', { ...base, ...env });
    t.is(res.code, 1);
    const lines = res.stderr.trim().split('\n');
    t.is(lines.length, 1, res.stderr);
    t.regex(lines[0]!, /^api: /);
    t.regex(lines[0]!.slice('api: '.length), line);
    t.notRegex(res.stdout, /listening|migrations applied/, 'nothing started, nothing migrated');
  });

test('an endpoint where nothing listens', async (t) => {
  const endpoint = `http://127.0.0.1:${await freePort()}`;
  const res = await start('bin/api.ts', { ...base, S3_ENDPOINT: endpoint });
  t.is(res.code, 1);
  t.is(res.stderr.trim(), `api: S3_ENDPOINT: no answer from ${endpoint} (ECONNREFUSED)`);
});

test('an endpoint that answers HTTP but not as S3', async (t) => {
  const endpoint = `http://127.0.0.1:${(notS3.address() as AddressInfo).port}`;
  const res = await start('bin/worker.ts', { ...base, S3_ENDPOINT: endpoint });
  t.is(res.code, 1);
  t.is(res.stderr.trim(), `worker: S3_ENDPOINT: ${endpoint} answers HTTP 200, but not as an S3 store does (no x-amz-request-id header)`);
});

test("a host clock two hours off the store's (libfaketime)", async (t) => {
  const faketime = spawnSync('faketime', ['--version']);
  t.is(faketime.status, 0, 'faketime is installed (Debian package faketime; .ci/run installs it)');
  const res = await start('bin/start.ts', base, ['faketime', '-f', '+2h']);
  t.is(res.code, 1);
  t.regex(res.stderr.trim(), /^start: S3_ENDPOINT: the store's clock and this host's differ by 2 h 0 min, more than the 15 min S3 allows/);
  t.is(res.stderr.trim().split('\n').length, 1);
});

test('STORAGE=s3 without a bucket, keys or a shared secrets key: the configuration names each missing setting', async (t) => {
  const res = await start('bin/api.ts', { ...base, S3_BUCKET: '', S3_ACCESS_KEY_ID: '', S3_SECRET_ACCESS_KEY: '', SECRETS_KEY: '' });
  t.is(res.code, 1);
  for (const name of ['S3_BUCKET', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY', 'SECRETS_KEY'])
    t.regex(res.stderr, new RegExp(`${name}: required when STORAGE=s3`));
  t.notRegex(res.stderr, /devsecretkey/);
});

test('the right settings start the API against the store', async (t) => {
  const child = spawn(process.execPath, ['--import=tsx', 'bin/api.ts'], {
    env: { ...process.env, ...base, PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = await new Promise<string>((resolve) => {
    let text = '';
    const timer = setTimeout(() => resolve(text), 30_000);
    child.stdout.on('data', (d) => {
      text += d;
      if (/listening on/.test(text)) {
        clearTimeout(timer);
        resolve(text);
      }
    });
  });
  child.kill('SIGTERM');
  t.regex(out, /listening on http/);
});
