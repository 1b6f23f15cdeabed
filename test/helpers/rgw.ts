import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { CreateBucketCommand, DeleteBucketCommand } from '@aws-sdk/client-s3';
import { createS3ObjectStore, s3Client, type S3Settings } from '../../lib/object-store-s3.ts';
import type { ObjectStore } from '../../lib/object-store.ts';

/**
 * The real S3 store of the tests: the project's single-node Ceph RADOS Gateway
 * (scripts/ceph-rgw.sh), started once per test process (CI starts it before the tests; then this
 * only reads its settings), and a bucket of each test's own, removed with what is in it afterwards.
 */

const SCRIPT = path.resolve(import.meta.dirname, '../../scripts/ceph-rgw.sh');
const run = promisify(execFile);

let started: Promise<Record<string, string>> | undefined;

/** The gateway's settings (STORAGE=s3, S3_ENDPOINT, S3_ACCESS_KEY_ID, …), started if it does not run. */
export function gateway(): Promise<Record<string, string>> {
  started ??= run('bash', [SCRIPT, 'start'], { timeout: 600_000, maxBuffer: 16 * 1024 * 1024 }).then(({ stdout }) => {
    const line = stdout.trim().split('\n').at(-1) ?? '';
    return Object.fromEntries(line.split(' ').map((kv) => kv.split('=', 2) as [string, string]));
  });
  return started;
}

export function settingsOf(env: Record<string, string>): S3Settings {
  return {
    endpoint: env.S3_ENDPOINT,
    bucket: env.S3_BUCKET!,
    region: env.S3_REGION!,
    accessKeyId: env.S3_ACCESS_KEY_ID!,
    secretAccessKey: env.S3_SECRET_ACCESS_KEY!,
    forcePathStyle: true,
  };
}

/** A new empty bucket on the gateway: the service's S3 settings naming it, and its removal (objects first). */
export async function testBucket(): Promise<{ env: Record<string, string>; store: ObjectStore; remove(): Promise<void> }> {
  const base = await gateway();
  // Every host of an S3 deployment shares one secrets key (lib/config.ts).
  const env = { ...base, S3_BUCKET: `tds-test-${randomBytes(6).toString('hex')}`, SECRETS_KEY: randomBytes(32).toString('base64url') };
  const client = s3Client(settingsOf(env));
  await client.send(new CreateBucketCommand({ Bucket: env.S3_BUCKET }));
  const store = createS3ObjectStore(settingsOf(env));
  return {
    env,
    store,
    async remove() {
      await store.removePrefix('').catch(() => undefined);
      await client.send(new DeleteBucketCommand({ Bucket: env.S3_BUCKET })).catch(() => undefined);
      client.destroy();
      store.close();
    },
  };
}

/**
 * Another gateway of the same cluster on its own port (same buckets), for a test to stop and start:
 * never the shared one, nor another test run's (its name gets a random suffix).
 */
export async function ownGateway(name: string, port: number) {
  const env = { ...process.env, RGW_NAME: `${name}-${randomBytes(3).toString('hex')}`, RGW_PORT: String(port) };
  const start = () => run('bash', [SCRIPT, 'start-gateway'], { env, timeout: 120_000 });
  await start();
  return {
    endpoint: `http://127.0.0.1:${port}`,
    start: async () => void (await start()),
    stop: async () => void (await run('bash', [SCRIPT, 'stop-gateway'], { env, timeout: 60_000 })),
  };
}
