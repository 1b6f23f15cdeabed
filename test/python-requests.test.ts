import test from 'ava';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestUser, tokenFor } from './helpers/users.ts';
import { fixturesDir } from './helpers/fixtures.ts';

/**
 * Issue 16, as a sloppy client behaves: python `requests` with its defaults, one pooled Session.
 * A file part without its own Content-Type is a file; a refused upload (11 files: 422; a file over
 * the limit, a chunked JSON body over the body limit, an archive over its limit: 413, read by requests
 * after sending its whole body) leaves the pooled connection usable for the next request. Without the
 * drain (api/http/middleware/drain-unread.ts) the request after the chunked JSON waited out its timeout. (.ci/run makes sure python3 has requests.)
 */
let service: TestService;
test.before(async () => {
  service = await startTestService({
    workers: true,
    env: { UPLOAD_MAX_FILE_BYTES: String(1024 * 1024), BACKFILL_MAX_ARCHIVE_BYTES: String(1024 * 1024) },
  });
});
test.after.always(() => service?.close());

const SCRIPT = `
import json, sys, time, requests
url, token, fit = sys.argv[1], sys.argv[2], open(sys.argv[3], 'rb').read()
s = requests.Session()
s.headers['Authorization'] = 'Bearer ' + token
out = {}
def timed(name, f):
    t0 = time.time()
    try:
        r = f()
        out[name] = {'status': r.status_code, 'seconds': time.time() - t0, 'body': r.text[:300]}
    except Exception as e:
        out[name] = {'error': type(e).__name__ + ': ' + str(e)[:300], 'seconds': time.time() - t0}
    print(name, json.dumps(out[name]), file=sys.stderr, flush=True)
timed('upload', lambda: s.post(url + '/api/v1/activities/upload', files={'files': ('ride.fit', fit)}, timeout=30))
timed('after_upload', lambda: s.get(url + '/api/v1/activities/', timeout=10))
timed('eleven', lambda: s.post(url + '/api/v1/activities/upload', files=[('files', ('r%d.csv' % i, b'timestamp,power\\n2024-01-01T00:00:00Z,1\\n')) for i in range(11)], timeout=30))
timed('after_eleven', lambda: s.get(url + '/api/v1/activities/', timeout=10))
timed('too_large', lambda: s.post(url + '/api/v1/activities/upload', files={'files': ('big.csv', b'x' * (3 * 1024 * 1024))}, timeout=30))
timed('after_too_large', lambda: s.get(url + '/api/v1/activities/', timeout=10))
def chunks():
    yield b'{"name": "'
    for _ in range(64):
        yield b'x' * 65536
    yield b'"}'
timed('chunked_json', lambda: s.post(url + '/api/v1/traces', data=chunks(), headers={'Content-Type': 'application/json'}, timeout=30))
timed('after_chunked_json', lambda: s.get(url + '/api/v1/activities/', timeout=10))
timed('archive_too_large', lambda: s.post(url + '/api/v1/activities/backfill', files={'archive': ('export.zip', b'PK' + b'x' * (3 * 1024 * 1024))}, timeout=30))
timed('after_archive_too_large', lambda: s.get(url + '/api/v1/activities/', timeout=10))
print(json.dumps(out))
`;

test('python requests, one Session: a part without Content-Type is a file; after a 422 and each kind of 413 (file, chunked JSON, archive) the pooled connection answers at once', async (t) => {
  const user = await createTestUser(service);
  const token = await tokenFor(service, user, ['data:read', 'data:write']);
  const dir = mkdtempSync(join(os.tmpdir(), 'py-requests-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const script = join(dir, 'client.py');
  writeFileSync(script, SCRIPT);
  const fit = join(fixturesDir(), 'fit', 'Garmin830_with_Stages.fit');
  t.true(readFileSync(fit).length < 1024 * 1024);
  // (Not spawnSync: the service runs in this process and must answer meanwhile.)
  const run = await promisify(execFile)('python3', [script, service.url, token, fit], { encoding: 'utf8', timeout: 200_000 });
  const out = JSON.parse(run.stdout) as Record<string, { status?: number; seconds: number; error?: string; body?: string }>;
  t.is(out.upload!.status, 202, JSON.stringify(out.upload));
  t.is(out.eleven!.status, 422, JSON.stringify(out.eleven));
  t.regex(out.eleven!.body!, /At most 10 files/);
  t.is(out.too_large!.status, 413, JSON.stringify(out.too_large));
  t.is(out.chunked_json!.status, 413, JSON.stringify(out.chunked_json));
  t.is(out.archive_too_large!.status, 413, JSON.stringify(out.archive_too_large));
  for (const name of ['after_upload', 'after_eleven', 'after_too_large', 'after_chunked_json', 'after_archive_too_large']) {
    t.is(out[name]!.status, 200, `${name}: ${JSON.stringify(out[name])}`);
    t.true(out[name]!.seconds < 5, `${name} answered in ${out[name]!.seconds} s`);
  }
});
