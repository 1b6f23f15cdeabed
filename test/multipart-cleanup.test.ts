import test from 'ava';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { open, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { removeUploadDir } from '../api/rest/activities/multipart.ts';
import { tmpDir } from '../lib/storage.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestUser, tokenFor } from './helpers/users.ts';
import { multipartBody } from './helpers/multipart.ts';

/**
 * A refused upload's temporary directory is removed while formidable may still be opening the files
 * of the parts it had already parsed: the removal must neither fail the answer (it once turned the
 * 422 for an 11th file into a 500: rmdir found a file created after the listing, ENOTEMPTY) nor
 * leave the directory behind.
 */

/** A directory of 200 files, and 20 more opened while it is being removed (as formidable's in-flight parts do). */
async function removeWhileFilling(remove: (dir: string) => Promise<void>, dir: string): Promise<unknown> {
  mkdirSync(dir, { recursive: true });
  for (let i = 0; i < 200; i++) writeFileSync(path.join(dir, `f${i}`), 'x');
  const late = Array.from({ length: 20 }, (_, i) =>
    new Promise((r) => setTimeout(r, i % 4))
      .then(() => open(path.join(dir, `late${i}`), 'w'))
      .then((h) => h.close())
      .catch(() => {}),
  );
  const outcome = await remove(dir).then(
    () => undefined,
    (err: unknown) => err,
  );
  await Promise.all(late);
  return outcome;
}

test('removeUploadDir never rejects while files are still being created in the directory; a plain removal does', async (t) => {
  const base = path.join(os.tmpdir(), `multipart-cleanup-${process.pid}`);
  t.teardown(() => rm(base, { recursive: true, force: true }));
  // The race depends on scheduling: rounds go on until it shows (a few on a quiet machine, more under load).
  let plainFailures = 0;
  for (let round = 0; round < 1_000 && plainFailures === 0; round++) {
    const err = await removeWhileFilling((dir) => rm(dir, { recursive: true, force: true }), path.join(base, `plain-${round}`));
    if (err) {
      plainFailures++;
      t.is((err as NodeJS.ErrnoException).code, 'ENOTEMPTY');
    }
  }
  t.true(plainFailures > 0, 'the race happens here (else this test proves nothing)');
  for (let round = 0; round < 40; round++) {
    const dir = path.join(base, `quiet-${round}`);
    t.is(await removeWhileFilling((d) => removeUploadDir(d), dir), undefined, `round ${round}`);
    await removeUploadDir(dir); // (what the later pass does)
  }
  t.deepEqual(
    readdirSync(base).filter((n) => n.startsWith('quiet-')),
    [],
    'every directory is gone',
  );
});

let service: TestService;
test.before(async () => {
  service = await startTestService();
});
test.after.always(() => service?.close());

test('uploads of 30 files at once are refused with 422, never 500, and leave no temporary files', async (t) => {
  const token = await tokenFor(service, await createTestUser(service), ['data:write']);
  // 30 small parts arrive in one chunk: when the 11th is refused, the 19 after it are parsed already.
  const { body, contentType } = multipartBody(
    Array.from({ length: 30 }, (_, i) => ({
      name: 'files',
      filename: `r${i}.csv`,
      type: 'text/csv',
      data: 'timestamp,power\n2024-01-01T00:00:00Z,1\n',
    })),
  );
  const unexpected: unknown[] = [];
  let answered = 0;
  for (let round = 0; round < 10; round++) {
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        fetch(`${service.url}/api/v1/activities/upload`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
          body,
        }).then(async (r) => ({
          status: r.status,
          body: (await r.json()) as unknown,
        })),
      ),
    );
    answered += answers.length;
    unexpected.push(...answers.filter((a) => a.status !== 422));
  }
  t.is(answered, 60);
  t.deepEqual(unexpected, [], 'every upload of 30 files is a 422');
  // What a file opened after the refusal left is removed by the second pass, a second later.
  const tmp = tmpDir(service.deps.config.DATA_DIR);
  const deadline = Date.now() + 5_000;
  while (readdirSync(tmp).length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  t.deepEqual(readdirSync(tmp), []);
});
