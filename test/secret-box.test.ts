import test from 'ava';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { exportJWK } from 'jose';
import { decodeSecretsKey, loadSecretBox, SecretBox, secretsKeyPath } from '../lib/secret-box.ts';
import { loadConfig } from '../lib/config.ts';
import { createLogger } from '../lib/log.ts';
import { Lifecycle } from '../lib/lifecycle.ts';
import { createApiDeps } from '../api/server.ts';
import { webhookSecretContext } from '../db/applications.ts';
import { recordConsent } from '../db/grants.ts';
import { testEnvironment, startTestService } from './helpers/service.ts';
import { createTestApplication, createTestUser, tokenFor } from './helpers/users.ts';
import { api } from './helpers/activities.ts';

const tmp = () => mkdtempSync(path.join(os.tmpdir(), 'tds-box-'));

test('seal and open: the plaintext is not in the sealed value; another context, key or a changed byte does not open', (t) => {
  const box = new SecretBox(randomBytes(32));
  const sealed = box.seal('tds_whs_s3cret-value', 'applications.webhook_secret:app-1');
  t.regex(sealed, /^tds-sealed:v1:[A-Za-z0-9_-]+$/);
  t.false(sealed.includes('s3cret'));
  t.not(box.seal('tds_whs_s3cret-value', 'applications.webhook_secret:app-1'), sealed, 'a fresh IV every time');
  t.is(box.open(sealed, 'applications.webhook_secret:app-1'), 'tds_whs_s3cret-value');
  t.throws(() => box.open(sealed, 'applications.webhook_secret:app-2'), { name: 'SecretUnreadable' });
  t.throws(() => new SecretBox(randomBytes(32)).open(sealed, 'applications.webhook_secret:app-1'), { name: 'SecretUnreadable' });
  const raw = Buffer.from(sealed.slice('tds-sealed:v1:'.length), 'base64url');
  raw[raw.length - 1]! ^= 1;
  t.throws(() => box.open(`tds-sealed:v1:${raw.toString('base64url')}`, 'applications.webhook_secret:app-1'), { name: 'SecretUnreadable' });
  t.throws(() => box.open('tds-sealed:v1:abc', 'x'), { name: 'SecretUnreadable' });
  t.is(box.open('stored-before-sealing', 'x'), 'stored-before-sealing', 'values from before sealing read as they are');
  t.is(box.open(box.seal('', 'x'), 'x'), '');
});

test('secrets keys: 32 bytes in base64 or base64url; the config refuses anything else without echoing it', (t) => {
  const key = randomBytes(32);
  t.deepEqual(decodeSecretsKey(key.toString('base64')), key);
  t.deepEqual(decodeSecretsKey(key.toString('base64url')), key);
  for (const bad of ['', 'short', randomBytes(31).toString('base64'), randomBytes(33).toString('base64'), key.toString('hex')])
    t.is(decodeSecretsKey(bad), undefined, bad);
  const secret = randomBytes(24).toString('base64');
  const error = t.throws(() => loadConfig({ SECRETS_KEY: secret }));
  t.regex(error!.message, /SECRETS_KEY: must be 32 bytes/);
  t.false(error!.message.includes(secret));
  t.is(loadConfig({ SECRETS_KEY: key.toString('base64') }).SECRETS_KEY, key.toString('base64'));
});

test('without SECRETS_KEY the key is generated once in DATA_DIR/secrets.key (0600), and every process reads the same', async (t) => {
  const dir = tmp();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const boxes = await Promise.all(Array.from({ length: 8 }, () => loadSecretBox({ DATA_DIR: path.join(dir, 'data') })));
  const file = secretsKeyPath(path.join(dir, 'data'));
  t.is(statSync(file).mode & 0o777, 0o600);
  t.truthy(decodeSecretsKey(readFileSync(file, 'utf8').trim()));
  const sealed = boxes[0]!.seal('x', 'c');
  for (const box of boxes) t.is(box.open(sealed, 'c'), 'x');
  t.is((await loadSecretBox({ DATA_DIR: path.join(dir, 'data') })).open(sealed, 'c'), 'x', 'a later start reads the same key');

  const given = randomBytes(32).toString('base64url');
  const other = tmp();
  t.teardown(() => rmSync(other, { recursive: true, force: true }));
  const fromEnv = await loadSecretBox({ SECRETS_KEY: given, DATA_DIR: other });
  t.is(new SecretBox(decodeSecretsKey(given)!).open(fromEnv.seal('y', 'c'), 'c'), 'y');
  t.throws(() => statSync(secretsKeyPath(other)), { code: 'ENOENT' }, 'no key file when SECRETS_KEY is set');
});

test('stored signing keys are sealed; keys and webhook secrets stored before sealing are sealed at start and keep working', async (t) => {
  const environment = await testEnvironment();
  const lifecycle = new Lifecycle(createLogger('silent'));
  t.teardown(async () => {
    await lifecycle.close();
    await environment.cleanup();
  });
  const start = async () => createApiDeps(loadConfig(environment.env), createLogger('silent'), lifecycle);

  const first = await start();
  const stored = await first.db.selectFrom('signing_keys').select(['kid', 'private_key_pem']).execute();
  t.is(stored.length, 1);
  t.regex(stored[0]!.private_key_pem, /^tds-sealed:v1:/);
  t.false(stored[0]!.private_key_pem.includes('PRIVATE KEY'));

  // Rows as an earlier version wrote them: a plaintext PEM key (made active) and a plaintext webhook secret.
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  await first.db.updateTable('signing_keys').set({ retired_at: new Date() }).execute();
  await first.db
    .insertInto('signing_keys')
    .values({
      kid: 'legacy',
      private_key_pem: pem,
      public_jwk: JSON.stringify({ ...(await exportJWK(publicKey)), kid: 'legacy', alg: 'RS256', use: 'sig' }),
    })
    .execute();
  const owner = await first.db
    .insertInto('users')
    .values({ email: 'legacy@example.com', first_name: 'L', last_name: 'E', password_hash: 'x' })
    .returningAll()
    .executeTakeFirstOrThrow();
  const app = await first.db
    .insertInto('applications')
    .values({
      id: 'legacy-app',
      owner_id: owner.id,
      name: 'Legacy',
      redirect_uris: ['https://legacy.example/cb'],
      webhook_secret: 'tds_whs_legacy',
    })
    .returningAll()
    .executeTakeFirstOrThrow();

  const second = await start();
  const key = await second.db.selectFrom('signing_keys').select('private_key_pem').where('kid', '=', 'legacy').executeTakeFirstOrThrow();
  t.regex(key.private_key_pem, /^tds-sealed:v1:/);
  t.is(second.box.open(key.private_key_pem, 'signing_keys.private_key_pem:legacy'), pem);
  t.is((await second.keys.signingKey()).kid, 'legacy', 'the sealed legacy key still signs');
  const secret = (await second.db.selectFrom('applications').select('webhook_secret').where('id', '=', app.id).executeTakeFirstOrThrow())
    .webhook_secret!;
  t.regex(secret, /^tds-sealed:v1:/);
  t.is(second.box.open(secret, webhookSecretContext(app.id)), 'tds_whs_legacy');
});

test('a webhook secret that this server cannot decrypt abandons the delivery with a reason, sending nothing', async (t) => {
  const service = await startTestService({ workers: true, env: { WEBHOOK_ALLOW_HTTP_LOOPBACK: 'true', WEBHOOK_RETRY_BASE_MS: '50' } });
  t.teardown(() => service.close());
  const owner = await createTestUser(service);
  const stranger = new SecretBox(randomBytes(32));
  const app = await createTestApplication(service, owner, { webhook_endpoints: ['http://127.0.0.1:9/hook'], webhook_secret: null });
  await service.deps.db
    .updateTable('applications')
    .set({ webhook_secret: stranger.seal('tds_whs_x', webhookSecretContext(app.id)) })
    .where('id', '=', app.id)
    .execute();
  const token = await tokenFor(service, owner, ['data:write'], app.id);
  await recordConsent(service.deps.db, owner.id, app.id, ['data:write']);
  t.is((await api(service, token, 'POST', '/api/v1/traces/', { timestamp: '2026-01-01T00:00:00Z' })).status, 201);
  let delivery: { status: string; attempts: number; last_error: string | null } | undefined;
  for (let i = 0; i < 200 && delivery?.status !== 'failed'; i++) {
    await new Promise((r) => setTimeout(r, 50));
    delivery = await service.deps.db.selectFrom('webhook_deliveries').selectAll().where('application_id', '=', app.id).executeTakeFirst();
  }
  t.is(delivery?.status, 'failed');
  t.is(delivery?.attempts, 0, 'nothing was sent');
  t.regex(delivery?.last_error ?? '', /cannot be decrypted/);
});
