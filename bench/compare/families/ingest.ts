import type * as ServiceHelpers from '../../../test/helpers/service.ts';
import type * as UserHelpers from '../../../test/helpers/users.ts';
import { fitCopy } from '../../../test/helpers/fixtures.ts';
import { fitFileParserDecode } from '../../fit-decode.ts';
import { buildRideFit } from '../../../test/helpers/synthetic.ts';
import type { Family, Tree } from '../row.ts';

/**
 * The ingest benchmark (bench/ingest.ts) as compare rows: one sample of `ingest/upload-to-processed-2h`
 * is one 2 h 1 Hz FIT file (the benchmark's synthetic ride, made here) uploaded to the tree's own
 * service, in this process with its workers (the tree's test/helpers/service.ts: real PostgreSQL and
 * Redis, a throwaway database, INGEST_CONCURRENCY=2 and ENGINE_THREADS=2 as the benchmark sets
 * them), and GET /api/v1/sources/{id} polled every 10 ms until it is processed: HTTP, queue,
 * engine pool, sample file, rows. Each upload is another copy of the ride (fitCopy: other bytes,
 * the same content; uploads are deduplicated by their bytes' hash), copy 1, 2, 3, … on both sides.
 * The job's work after the commit (the channel columns) is not waited for, as in the benchmark.
 * One sample of `ingest/fit-file-parser-decode` is one decode of the same file by fit-file-parser
 * (bench/fit-decode.ts, the same library code on both sides): a control.
 */
const SECONDS = 2 * 3600;
const POLL_MS = 10;

export const ingestFamily: Family = {
  name: 'ingest',
  // A service per tree, with its workers: each side's rows in its own process, in its own tree.
  isolation: 'process',
  // Provisional, as the other service families': to be set from an A/A run's bias (bench/README.md, "compare");
  // two short A/A runs on a loaded machine put the upload row's ratio at +6 %.
  threshold: 0.05,
  about: 'a 2 h FIT file, upload → processed, on the tree\u2019s in-process service with workers; a fit-file-parser decode as a control',
  async open(tree: Tree) {
    const { startTestService } = await tree.load<typeof ServiceHelpers>('test/helpers/service.ts');
    const { createTestUser, tokenFor } = await tree.load<typeof UserHelpers>('test/helpers/users.ts');
    const ride = buildRideFit({ start: new Date(Date.UTC(2025, 4, 1, 7, 0, 0)), seconds: SECONDS, seed: 42 });
    if (fitFileParserDecode(ride) !== SECONDS) throw new Error('the synthetic ride did not decode to one record a second');

    const service = await startTestService({ workers: true, env: { INGEST_CONCURRENCY: '2', ENGINE_THREADS: '2' } });
    let token: string;
    try {
      token = await tokenFor(service, await createTestUser(service), ['data:read', 'data:write']);
    } catch (err) {
      await service.close();
      throw err;
    }
    let copy = 0;
    return {
      rows: [
        {
          id: 'ingest/upload-to-processed-2h',
          label: 'a 2 h FIT file: POST upload → processed, polled every 10 ms (service with workers, in process)',
          run: () => uploadAndPoll(service.url, token, fitCopy(ride, ++copy), `ride-${copy}.fit`),
        },
        {
          id: 'ingest/fit-file-parser-decode',
          label: 'control: fit-file-parser decode of the same 2 h file',
          run: () => fitFileParserDecode(ride),
        },
      ],
      close: () => service.close(),
    };
  },
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** bench/ingest.ts's upload and poll, the total only. */
async function uploadAndPoll(url: string, token: string, bytes: Uint8Array, name: string): Promise<void> {
  const form = new FormData();
  form.append('files', new Blob([bytes as Uint8Array<ArrayBuffer>], { type: 'application/octet-stream' }), name);
  const t0 = performance.now();
  const res = await fetch(`${url}/api/v1/activities/upload`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
  const body = (await res.json()) as { sources?: { id: string; status: string }[] };
  const source = body.sources?.[0];
  if (res.status !== 202 || !source) throw new Error(`upload: ${res.status} ${JSON.stringify(body)}`);
  if (source.status !== 'processing') throw new Error(`upload: source ${source.id} is already ${source.status} (deduplicated?)`);
  for (;;) {
    const r = await fetch(`${url}/api/v1/sources/${source.id}`, { headers: { authorization: `Bearer ${token}` } });
    const now = (await r.json()) as { status: string };
    if (r.status !== 200) throw new Error(`GET source: ${r.status} ${JSON.stringify(now)}`);
    if (now.status === 'processed') return;
    if (now.status !== 'processing') throw new Error(`source ${source.id} ${now.status}: ${JSON.stringify(now)}`);
    if (performance.now() - t0 > 60_000) throw new Error(`source ${source.id} still processing after 60 s`);
    await sleep(POLL_MS);
  }
}
