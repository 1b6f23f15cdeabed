import test from 'ava';
import { spawnSync } from 'node:child_process';
import { loadConfig, ConfigError } from '../lib/config.ts';

test('defaults work on a developer machine', (t) => {
  const c = loadConfig({});
  t.is(c.PORT, 8000);
  t.is(c.BASE_URL, 'http://localhost:8000');
  t.is(c.DATABASE_URL, 'postgres://postgres@127.0.0.1:5432/training_data');
  t.is(c.REDIS_URL, 'redis://127.0.0.1:6379');
  t.is(c.DATA_DIR, './data');
  t.false(c.TRUST_PROXY);
});

test('values are parsed and BASE_URL loses its trailing slash', (t) => {
  const c = loadConfig({ PORT: '9001', BASE_URL: 'https://tds.example.org/', TRUST_PROXY: 'true', LOG_LEVEL: 'warn' });
  t.is(c.PORT, 9001);
  t.is(c.BASE_URL, 'https://tds.example.org');
  t.true(c.TRUST_PROXY);
});

test('empty variables count as unset', (t) => {
  t.is(loadConfig({ PORT: '' }).PORT, 8000);
});

test('an invalid value names the variable', (t) => {
  const err = t.throws(() => loadConfig({ PORT: 'eighty', REDIS_URL: 'http://x' }), { instanceOf: ConfigError });
  t.regex(err!.message, /PORT:/);
  t.regex(err!.message, /"eighty"/);
  t.regex(err!.message, /REDIS_URL:/);
});

test('a password in a URL is not echoed back', (t) => {
  const err = t.throws(() => loadConfig({ DATABASE_URL: 'mysql://u:secret@h/db' }));
  t.notRegex(err!.message, /secret/);
});

test('start-up stops with a message naming the variable', (t) => {
  const res = spawnSync(process.execPath, ['--import=tsx', 'bin/api.ts'], {
    env: { ...process.env, PORT: '70000', LOG_LEVEL: 'silent' },
    encoding: 'utf8',
    timeout: 30_000,
  });
  t.is(res.status, 1);
  t.regex(res.stderr, /Invalid configuration/);
  t.regex(res.stderr, /PORT/);
});
