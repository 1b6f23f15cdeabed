import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli } from './helpers/cli.ts';
import { startTestService, type TestService } from './helpers/service.ts';

let service: TestService;
test.before(async () => {
  service = await startTestService();
});
test.after.always(() => service?.close());

const cli = (...args: string[]) =>
  runCli({ DATABASE_URL: service.config.DATABASE_URL, BASE_URL: service.config.BASE_URL, DATA_DIR: service.config.DATA_DIR }, ...args);

test.serial('create a user, list users, issue a token that authenticates a request', async (t) => {
  const created = await cli('user', 'create', '--email', 'Op@Example.com', '--first-name', 'Opal', '--last-name', 'Rivera', '--json');
  t.is(created.code, 0, created.stderr);
  const user = JSON.parse(created.stdout);
  t.is(user.email, 'op@example.com');
  t.regex(user.password, /^[A-Za-z0-9_-]{24}$/, 'a generated password is printed once');

  const stored = new URL(service.config.DATABASE_URL);
  t.true(
    created.stderr.startsWith(
      `cli: database postgres://${stored.username}@${stored.host}${stored.pathname}, data ${path.resolve(service.config.DATA_DIR)}, queue prefix `,
    ),
    `the CLI says which store it works on: ${created.stderr}`,
  );
  const shared = { DATABASE_URL: service.config.DATABASE_URL, DATA_DIR: service.config.DATA_DIR };
  const unset = await runCli({ ...shared, QUEUE_PREFIX: '' }, 'user', 'list', '--json');
  t.regex(unset.stderr, /\(QUEUE_PREFIX not set: defaults; give the CLI the server's values, or it works on another store\)/);
  const all = await runCli({ ...shared, QUEUE_PREFIX: service.config.QUEUE_PREFIX }, 'user', 'list', '--json');
  t.notRegex(all.stderr, /not set/, 'nothing to warn about when the three are given');

  const listed = await cli('user', 'list', '--json');
  t.true(JSON.parse(listed.stdout).some((u: { id: string }) => u.id === user.id));

  const issued = await cli('token', 'create', '--user', 'op@example.com', '--scopes', 'profile data:read', '--json');
  t.is(issued.code, 0, issued.stderr);
  const token = JSON.parse(issued.stdout);
  t.is(token.token_type, 'Bearer');
  t.is(token.expires_in, 900);
  t.is(token.scope, 'profile data:read');

  const res = await fetch(`${service.url}/api/v1/oauth/userinfo`, { headers: { authorization: `Bearer ${token.access_token}` } });
  t.is(res.status, 200);
  t.is(((await res.json()) as { email: string }).email, 'op@example.com');

  // It is a personal token: its refresh token works at the token endpoint without a client id.
  const refreshed = await fetch(`${service.url}/api/v1/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token.refresh_token }),
  });
  t.is(refreshed.status, 200);
  t.is(((await refreshed.json()) as { scope: string }).scope, 'profile data:read');

  // The password printed at creation signs in.
  const signin = await fetch(`${service.url}/signin`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: service.url },
    body: new URLSearchParams({ email: 'op@example.com', password: user.password }),
    redirect: 'manual',
  });
  t.is(signin.status, 303);
});

test.serial('errors are clear and exit 2', async (t) => {
  const dup = await cli('user', 'create', '--email', 'op@example.com', '--first-name', 'A', '--last-name', 'B');
  t.is(dup.code, 2);
  t.regex(dup.stderr, /already exists/);
  const weak = await cli('user', 'create', '--email', 'w@example.com', '--first-name', 'A', '--last-name', 'B', '--password', 'short');
  t.is(weak.code, 2);
  t.regex(weak.stderr, /--password: Password must be at least 10 characters/);
  const scope = await cli('token', 'create', '--user', 'op@example.com', '--scopes', 'data:read bogus');
  t.is(scope.code, 2);
  t.regex(scope.stderr, /unknown scope bogus/);
  const nobody = await cli('token', 'create', '--user', 'nobody@example.com');
  t.is(nobody.code, 2);
  t.regex(nobody.stderr, /no user with email/);
  const unknown = await cli('frobnicate');
  t.is(unknown.code, 2);
  const help = await cli('help');
  t.is(help.code, 0);
  t.regex(help.stdout, /token create --user EMAIL/);
});

test.serial('keys rotate makes a new active key; the old one stays published', async (t) => {
  const before = JSON.parse((await cli('keys', 'list', '--json')).stdout) as { kid: string; active: boolean }[];
  const rotated = await cli('keys', 'rotate', '--json');
  t.is(rotated.code, 0, rotated.stderr);
  const { kid } = JSON.parse(rotated.stdout);
  const after = JSON.parse((await cli('keys', 'list', '--json')).stdout) as { kid: string; active: boolean }[];
  t.deepEqual(
    after.filter((k) => k.active).map((k) => k.kid),
    [kid],
  );
  for (const k of before) t.true(after.some((a) => a.kid === k.kid && !a.active));
  // A running API picks the new key up for verification (unknown kid → reload).
  const token = JSON.parse((await cli('token', 'create', '--user', 'op@example.com', '--scopes', 'profile', '--json')).stdout).access_token;
  t.is((await fetch(`${service.url}/api/v1/oauth/userinfo`, { headers: { authorization: `Bearer ${token}` } })).status, 200);
});

test("a CLI run without the service's secrets key stops with a message saying so and issues nothing", async (t) => {
  const elsewhere = mkdtempSync(path.join(os.tmpdir(), 'tds-cli-'));
  t.teardown(() => rmSync(elsewhere, { recursive: true, force: true }));
  await cli('user', 'create', '--email', 'keyless@example.com', '--first-name', 'K', '--last-name', 'L');
  const run = await runCli(
    { DATABASE_URL: service.config.DATABASE_URL, BASE_URL: service.config.BASE_URL, DATA_DIR: elsewhere, LOG_LEVEL: 'error' },
    'token',
    'create',
    '--user',
    'keyless@example.com',
  );
  t.is(run.code, 1);
  t.regex(run.stdout + run.stderr, /cannot be decrypted with this server's secrets key \(SECRETS_KEY, or secrets\.key in DATA_DIR\)/);
  const user = await service.deps.db.selectFrom('users').select('id').where('email', '=', 'keyless@example.com').executeTakeFirstOrThrow();
  t.deepEqual(await service.deps.db.selectFrom('grants').select('id').where('user_id', '=', user.id).execute(), [], 'no token was issued');
});
