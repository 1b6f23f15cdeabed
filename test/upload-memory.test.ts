import test from 'ava';
import { createGzip } from 'node:zlib';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestUser, tokenFor } from './helpers/users.ts';
import { upload } from './helpers/activities.ts';

/**
 * Uploads are decompressed, checked and stored by streaming through temporary files, one file at a
 * time: a request's memory does not grow with what its files inflate to. Three users each send ten
 * small .csv.gz files that inflate to just under UPLOAD_MAX_FILE_BYTES (64 MiB) at once: about 1.9 GiB
 * to decompress and hash. Holding them in memory took an API from 461 MB to 2,550 MB RSS; holding even
 * one inflated file per request at a time costs about 250 MiB here, and fails this test.
 */

const MiB = 1024 * 1024;
const FILE_BYTES = 64 * MiB - 64 * 1024;

let service: TestService;
test.before(async () => {
  service = await startTestService({ workers: false });
});
test.after.always(() => service?.close());

/** A gzip file (about 65 KB) of a CSV that inflates to FILE_BYTES, made without holding the CSV. */
async function inflatingCsvGz(n: number): Promise<Buffer> {
  const gzip = createGzip({ level: 9 });
  const out: Buffer[] = [];
  gzip.on('data', (c: Buffer) => out.push(c));
  const ended = new Promise((resolve) => gzip.on('end', resolve));
  const head = `timestamp,power\n2025-01-${String(n + 1).padStart(2, '0')}T07:00:00Z,${100 + n}\n`;
  gzip.write(head);
  const row = Buffer.from('2025-01-01T07:00:01Z,200\n'.repeat(4096));
  let written = head.length;
  while (written + row.length <= FILE_BYTES) {
    if (!gzip.write(row)) await new Promise((r) => gzip.once('drain', r));
    written += row.length;
  }
  gzip.end();
  await ended;
  return Buffer.concat(out);
}

test('three concurrent uploads of ten files inflating to ~64 MiB each: all stored, RSS grows by far less than what they inflate to', async (t) => {
  const files = await Promise.all(Array.from({ length: 10 }, (_, i) => inflatingCsvGz(i)));
  t.true(
    files.every((f) => f.length < 200 * 1024),
    'each sent file is small',
  );
  const tokens = await Promise.all([0, 1, 2].map(async () => tokenFor(service, await createTestUser(service), ['data:write'])));

  const before = process.memoryUsage.rss();
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 20);
  try {
    const answers = await Promise.all(
      tokens.map((token) =>
        upload(
          service,
          token,
          files.map((bytes, i) => ({ name: `ride-${i}.csv.gz`, bytes, type: 'application/gzip' })),
        ),
      ),
    );
    for (const answer of answers) {
      t.is(answer.status, 202, JSON.stringify(answer.body));
      t.is(answer.body.sources.length, 10);
    }
  } finally {
    clearInterval(sampler);
  }
  const grewMiB = (peak - before) / MiB;
  t.log(
    `RSS ${Math.round(before / MiB)} MiB before, peak ${Math.round(peak / MiB)} MiB (+${Math.round(grewMiB)} MiB) for ${Math.round((30 * FILE_BYTES) / MiB)} MiB inflated`,
  );
  t.true(grewMiB < 160, `RSS grew by ${Math.round(grewMiB)} MiB`);
  const stored = await service.deps.db
    .selectFrom('sources')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  t.is(Number(stored.n), 30, 'every file stored');
});
