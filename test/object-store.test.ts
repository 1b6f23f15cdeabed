import test, { type ExecutionContext } from 'ava';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { text } from 'node:stream/consumers';
import {
  archiveKey,
  isObjectMissing,
  ObjectMissing,
  sampleKey,
  sourceKey,
  StoreUnavailable,
  userPrefix,
  type ObjectStore,
} from '../lib/object-store.ts';
import { createLocalObjectStore, objectFile } from '../lib/object-store-local.ts';
import { createS3ObjectStore } from '../lib/object-store-s3.ts';
import { bytesEtag, fileEtag } from '../lib/object-digest.ts';
import { createLocalFiles } from '../lib/object-cache.ts';
import { settingsOf, testBucket } from './helpers/rgw.ts';

/**
 * The object store's contract (lib/object-store.ts), the same tests against both backends: the data
 * directory, and a real S3 store (Ceph RGW, scripts/ceph-rgw.sh) in a bucket of this file's own.
 */

const tmp = mkdtempSync(path.join(os.tmpdir(), 'object-store-'));
let bucket: Awaited<ReturnType<typeof testBucket>> | undefined;
const local = createLocalObjectStore(path.join(tmp, 'data'));

test.before(async () => {
  bucket = await testBucket();
});
test.after.always(async () => {
  await bucket?.remove();
  rmSync(tmp, { recursive: true, force: true });
});

type Backend = 'local' | 's3';
const storeOf = (backend: Backend): ObjectStore => (backend === 'local' ? local : bucket!.store);
const user = randomUUID();

const contract = test.macro({
  async exec(t: ExecutionContext, backend: Backend, check: (t: ExecutionContext, store: ObjectStore) => Promise<void>) {
    await check(t, storeOf(backend));
  },
  title: (title, backend) => `${backend}: ${title}`,
});

for (const backend of ['local', 's3'] as const) {
  test(
    'put then get gives the bytes back; writing a key again replaces it; head gives size and the MD5 tag',
    contract,
    backend,
    async (t, store) => {
      const key = sampleKey(user, randomUUID());
      const bytes = randomBytes(100_000);
      await store.put(key, bytes);
      t.deepEqual(await store.get(key), bytes);
      const again = randomBytes(5_000);
      await store.put(key, again);
      t.deepEqual(await store.get(key), again);
      t.deepEqual(await store.head(key), { size: 5_000, etag: bytesEtag(again) });
    },
  );

  test('an absent key is ObjectMissing for get, open and download, and null for head', contract, backend, async (t, store) => {
    const key = sourceKey(user, randomUUID(), 'fit');
    const e1 = await t.throwsAsync(store.get(key));
    t.true(isObjectMissing(e1), String(e1));
    t.true((await store.open(key).catch((e) => e)) instanceof ObjectMissing);
    const target = path.join(tmp, `dl-${randomUUID()}`);
    t.true((await store.download(key, target).catch((e) => e)) instanceof ObjectMissing);
    t.false(existsSync(target), 'no file left by a failed download');
    t.is(await store.head(key), null);
  });

  test('open streams the object with its size; download writes the whole file, no temporary left', contract, backend, async (t, store) => {
    const key = sourceKey(user, randomUUID(), 'gpx');
    await store.put(key, Buffer.from('<gpx>hello</gpx>'));
    const opened = await store.open(key);
    t.is(opened.size, 16);
    t.is(await text(opened.body), '<gpx>hello</gpx>');
    const dir = path.join(tmp, `dl-${randomUUID()}`);
    await store.download(key, path.join(dir, 'copy.gpx'));
    t.deepEqual(readdirSync(dir), ['copy.gpx']);
    t.is(readFileSync(path.join(dir, 'copy.gpx'), 'utf8'), '<gpx>hello</gpx>');
  });

  test('putFile stores a file (moved when asked: the file is gone after)', contract, backend, async (t, store) => {
    const file = path.join(tmp, `upload-${randomUUID()}`);
    const bytes = randomBytes(300_000);
    writeFileSync(file, bytes);
    const key = sourceKey(user, randomUUID(), 'fit');
    await store.putFile(key, file);
    t.true(existsSync(file), 'kept without move');
    await store.putFile(key, file, { move: true });
    t.false(existsSync(file), 'consumed with move');
    t.deepEqual(await store.get(key), bytes);
    t.deepEqual(await store.head(key), await headOf(bytes));
  });

  test(
    'a file over the multipart threshold is stored in parts; its tag is the one fileEtag computes (md5 of parts, -N)',
    contract,
    backend,
    async (t, store) => {
      const file = path.join(tmp, `big-${randomUUID()}`);
      const bytes = randomBytes(70 * 1024 * 1024);
      writeFileSync(file, bytes);
      const key = archiveKey(randomUUID());
      await store.putFile(key, file);
      const head = await store.head(key);
      const expected = await fileEtag(file);
      t.deepEqual(head, expected);
      t.regex(expected.etag, /-5$/);
      t.true(Buffer.from(await store.get(key)).equals(bytes));
      rmSync(file);
      await store.remove([key]);
    },
  );

  test(
    'list gives every object under a prefix in key order, past one page (1,000 keys) of a listing',
    contract,
    backend,
    async (t, store) => {
      const owner = randomUUID();
      const keys = Array.from({ length: 1_003 }, () => sampleKey(owner, randomUUID())).sort();
      for (let i = 0; i < keys.length; i += 50) await Promise.all(keys.slice(i, i + 50).map((k) => store.put(k, Buffer.from(k))));
      await store.put(sourceKey(owner, randomUUID(), 'csv'), Buffer.from('x'));
      const listed: string[] = [];
      for await (const o of store.list(`users/${owner}/activities/`)) listed.push(o.key);
      t.deepEqual(listed, keys);
      t.is(await store.removePrefix(userPrefix(owner)), 1_004);
      const left: string[] = [];
      for await (const o of store.list(userPrefix(owner))) left.push(o.key);
      t.deepEqual(left, []);
    },
  );

  test('remove takes absent keys without error', contract, backend, async (t, store) => {
    const key = sampleKey(user, randomUUID());
    await store.put(key, Buffer.from('x'));
    await store.remove([key, sampleKey(user, randomUUID())]);
    t.is(await store.head(key), null);
  });

  test('a key that is not one of the generated shapes is refused', contract, backend, async (t) => {
    t.throws(() => sampleKey('../etc', randomUUID()));
    t.throws(() => sourceKey(user, 'x/../../y', 'fit'));
  });
}

test('local: objects are the files DATA_DIR/{key}, as before the object store (fileOf)', async (t) => {
  const key = sampleKey(user, randomUUID());
  await local.put(key, Buffer.from('abc'));
  t.is(local.fileOf!(key), objectFile(path.join(tmp, 'data'), key));
  t.is(readFileSync(objectFile(path.join(tmp, 'data'), key), 'utf8'), 'abc');
});

test('s3: a gateway that does not answer is StoreUnavailable (what the API answers 503 for and jobs wait on)', async (t) => {
  const store = createS3ObjectStore({ ...settingsOf(bucket!.env), endpoint: 'http://127.0.0.1:9' });
  const err = await store.get(sampleKey(user, randomUUID())).catch((e) => e);
  t.true(err instanceof StoreUnavailable, String(err));
  store.close();
});

test('s3: local copies are fetched once, kept within the budget (least recently used go), and refetched when gone', async (t) => {
  const store = bucket!.store;
  const dir = path.join(tmp, `cache-${randomUUID()}`);
  let clock = Date.now();
  const files = createLocalFiles(store, { dir, budgetBytes: 250_000, now: () => clock });
  const keys = Array.from({ length: 4 }, () => sampleKey(user, randomUUID()));
  for (const k of keys) await store.put(k, randomBytes(100_000));
  await files.use([keys[0]!], async ([file]) => t.deepEqual(readFileSync(file!), await store.get(keys[0]!)));
  clock += 120_000;
  await files.use([keys[1]!], async () => {});
  clock += 120_000;
  // A third copy puts 300 kB over the 250 kB budget: the least recently used (keys[0]) goes.
  await files.use([keys[2]!], async () => {});
  // Eviction runs after the use returns: wait for it to end (its file removal, then its count; a loaded machine may take a while).
  for (const deadline = Date.now() + 10_000; (existsSync(files.pathOf(keys[0]!)) || files.held() > 250_000) && Date.now() < deadline; )
    await new Promise((r) => setTimeout(r, 20));
  t.false(existsSync(files.pathOf(keys[0]!)));
  t.true(existsSync(files.pathOf(keys[1]!)));
  t.true(files.held() <= 250_000, String(files.held()));
  // A copy in use is never evicted, however old.
  clock += 600_000;
  await files.use([keys[1]!], async () => {
    await files.use([keys[3]!, keys[0]!], async () => {});
    t.true(existsSync(files.pathOf(keys[1]!)));
  });
  // Removed behind its back: fetched again on the next use.
  rmSync(files.pathOf(keys[3]!));
  clock += 600_000;
  await files.use([keys[3]!], async ([file]) => t.true(existsSync(file!)));
});

async function headOf(bytes: Buffer) {
  return { size: bytes.length, etag: bytesEtag(bytes) };
}
