import test from 'ava';
import http from 'node:http';
import zlib from 'node:zlib';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestUser, tokenFor } from './helpers/users.ts';
import { uploadAndWait } from './helpers/activities.ts';
import { buildActivityFit } from './helpers/fit-builder.ts';
import { createBackfill } from '../db/backfills.ts';

/** A CSV ride of `seconds` s of power and heart rate starting at `stamp` (UTC). */
function ride(stamp: string, seconds: number) {
  const start = Date.parse(stamp);
  const lines = Array.from(
    { length: seconds },
    (_, i) => `${new Date(start + i * 1000).toISOString().slice(0, 19)}Z,${150 + (i % 50)},${120 + (i % 30)}`,
  );
  return new TextEncoder().encode(`timestamp,power,heart_rate\n${lines.join('\n')}\n`);
}

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The bytes as sent (not decoded). */
  bytes: Buffer;
  /** The body decoded by its Content-Encoding. */
  text: string;
}

/** A request whose answer is read as sent (fetch would decode it): the bytes on the wire and their decoding. */
function raw(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Raw> {
  return new Promise((resolve, reject) => {
    http
      .request(url, { method, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const bytes = Buffer.concat(chunks);
          const coding = res.headers['content-encoding'];
          const decoded = coding === 'gzip' ? zlib.gunzipSync(bytes) : coding === 'br' ? zlib.brotliDecompressSync(bytes) : bytes;
          resolve({ status: res.statusCode!, headers: res.headers, bytes, text: decoded.toString('utf8') });
        });
      })
      .on('error', reject)
      .end();
  });
}

let service: TestService;
let token: string;
let activityId: string;
let fitActivityId: string;
test.before(async () => {
  service = await startTestService({ workers: true, env: { BACKFILL_STATUS_SECONDS: '10' } });
  const user = await createTestUser(service);
  token = await tokenFor(service, user, ['data:read', 'data:write']);
  const [csv] = await uploadAndWait(service, token, [{ name: 'ride.csv', bytes: ride('2026-03-01T08:00:00Z', 3600) }], {
    sport: 'cycling',
  });
  activityId = csv.activity_ids[0];
  const fit = buildActivityFit({ sessions: [{ sport: 'cycling', start: new Date('2026-03-02T08:00:00Z'), seconds: 1800 }] });
  const [fitSource] = await uploadAndWait(service, token, [{ name: 'ride.fit', bytes: fit }]);
  fitActivityId = fitSource.activity_ids[0];
});
test.after.always(async () => {
  await service?.close();
});

const auth = () => ({ authorization: `Bearer ${token}` });

test('JSON answers are compressed as negotiated (br, gzip, none), decode to the same body, and say Vary: Accept-Encoding', async (t) => {
  const url = `${service.url}/api/v1/activities/${activityId}/data?format=json`;
  const identity = await raw(url, auth());
  t.is(identity.status, 200);
  t.is(identity.headers['content-encoding'], undefined, 'no Accept-Encoding: identity');
  t.regex(String(identity.headers.vary), /Accept-Encoding/i);
  t.regex(identity.headers.etag!, /^"[A-Za-z0-9_-]{32}"$/, 'an identity answer keeps its strong tag');
  t.true(identity.bytes.length > 50_000);

  for (const [accept, coding] of [
    ['gzip', 'gzip'],
    ['br', 'br'],
    ['gzip, deflate, br', 'br'],
    ['gzip;q=1, br;q=0.5', 'gzip'],
    ['zstd, deflate', undefined],
  ] as const) {
    const res = await raw(url, { ...auth(), 'accept-encoding': accept });
    t.is(res.status, 200);
    t.is(res.headers['content-encoding'], coding, accept);
    t.regex(String(res.headers.vary), /Accept-Encoding/i);
    t.is(res.text, identity.text, `${accept}: the same JSON`);
    if (coding) {
      t.true(res.bytes.length < identity.bytes.length / 3, `${accept}: ${res.bytes.length} of ${identity.bytes.length} bytes`);
      // Coded once and kept (a tagged frame): sent with its Content-Length; a streamed coding has none.
      if (res.headers['content-length'] !== undefined) t.is(Number(res.headers['content-length']), res.bytes.length);
      t.is(res.headers.etag, `W/${identity.headers.etag}`, 'a compressed answer carries the tag weak');
    }
  }
});

test('the polled activity list (read cache) is compressed as negotiated too, coded once and sent the same on every poll', async (t) => {
  const url = `${service.url}/api/v1/activities/?limit=50`;
  const identity = await raw(url, auth());
  t.is(identity.status, 200);
  t.is(identity.headers['content-encoding'], undefined);
  t.true(identity.bytes.length > 1024, `a page over the threshold (${identity.bytes.length} bytes)`);
  for (const [accept, coding] of [
    ['gzip, deflate', 'gzip'],
    ['br', 'br'],
    ['gzip, deflate, br', 'br'],
    ['gzip;q=1, br;q=0.5', 'gzip'],
    ['zstd, deflate', undefined],
  ] as const) {
    const first = await raw(url, { ...auth(), 'accept-encoding': accept });
    const again = await raw(url, { ...auth(), 'accept-encoding': accept });
    for (const res of [first, again]) {
      t.is(res.status, 200);
      t.is(res.headers['content-encoding'], coding, accept);
      t.regex(String(res.headers.vary), /Accept-Encoding/i);
      t.is(res.text, identity.text, `${accept}: the same JSON`);
      t.is(res.headers.etag, coding ? `W/${identity.headers.etag}` : identity.headers.etag);
      t.is(res.headers.link, identity.headers.link);
    }
    t.deepEqual(again.bytes, first.bytes, `${accept}: the same bytes on the next poll`);
  }
  const revalidated = await raw(url, { ...auth(), 'accept-encoding': 'gzip', 'if-none-match': `W/${identity.headers.etag}` });
  t.is(revalidated.status, 304);
});

test('If-None-Match with the tag of a compressed answer revalidates (304, the tag as the client holds it); HEAD is not compressed', async (t) => {
  const url = `${service.url}/api/v1/activities/${activityId}/data?format=json`;
  const compressed = await raw(url, { ...auth(), 'accept-encoding': 'br' });
  const weak = compressed.headers.etag!;
  t.true(weak.startsWith('W/"'));
  const revalidated = await raw(url, { ...auth(), 'accept-encoding': 'br', 'if-none-match': weak });
  t.is(revalidated.status, 304);
  t.is(revalidated.bytes.length, 0);
  t.is(revalidated.headers.etag, weak);
  t.is(revalidated.headers['cache-control'], 'private, no-cache');
  t.regex(String(revalidated.headers.vary), /Accept-Encoding/i);
  const strong = weak.slice(2);
  const byStrong = await raw(url, { ...auth(), 'accept-encoding': 'gzip', 'if-none-match': strong });
  t.is(byStrong.status, 304);
  t.is(byStrong.headers.etag, strong);

  const head = await raw(url, { ...auth(), 'accept-encoding': 'gzip, br' }, 'HEAD');
  t.is(head.status, 200);
  t.is(head.headers['content-encoding'], undefined);
  t.is(head.headers.etag, strong);
  t.is((await raw(url, { ...auth(), 'accept-encoding': 'gzip', 'if-none-match': strong }, 'HEAD')).status, 304);
});

test('Parquet frames and FIT originals are sent as they are; CSV originals, the OpenAPI document and the Swagger bundle are compressed; small bodies are not', async (t) => {
  const ae = { ...auth(), 'accept-encoding': 'gzip, br' };
  const parquet = await raw(`${service.url}/api/v1/activities/${activityId}/data`, ae);
  t.is(parquet.status, 200);
  t.is(parquet.headers['content-type'], 'application/vnd.apache.parquet');
  t.is(parquet.headers['content-encoding'], undefined);
  t.is(parquet.bytes.subarray(0, 4).toString('latin1'), 'PAR1');

  const fit = await raw(`${service.url}/api/v1/activities/${fitActivityId}/download`, ae);
  t.is(fit.status, 200);
  t.is(fit.headers['content-encoding'], undefined);
  t.is(Number(fit.headers['content-length']), fit.bytes.length, 'a FIT download keeps its Content-Length');

  const csv = await raw(`${service.url}/api/v1/activities/${activityId}/download`, ae);
  t.is(csv.headers['content-encoding'], 'br');
  t.true(csv.text.startsWith('timestamp,power,heart_rate\n'));

  for (const path of ['/openapi.json', '/docs/assets/swagger-ui-bundle.js', '/docs/assets/swagger-ui.css']) {
    const res = await raw(`${service.url}${path}`, { 'accept-encoding': 'gzip' });
    t.is(res.status, 200, path);
    t.is(res.headers['content-encoding'], 'gzip', path);
    t.true(res.bytes.length < res.text.length / 2, `${path}: ${res.bytes.length} of ${res.text.length}`);
  }
  t.is(
    (await raw(`${service.url}/docs/assets/favicon-32x32.png`, { 'accept-encoding': 'gzip' })).headers['content-encoding'],
    undefined,
    'an image',
  );
  const small = await raw(`${service.url}/healthz`, { 'accept-encoding': 'gzip' });
  t.is(small.status, 200);
  t.is(small.headers['content-encoding'], undefined, 'under 1 KiB');
  t.regex(String(small.headers.vary), /Accept-Encoding/i);
  const error = await raw(`${service.url}/api/v1/activities/${activityId}/data?metrics=nope`, ae);
  t.is(error.status, 422);
  t.regex(String(error.headers.vary), /Accept-Encoding/i, 'an error answer too');
  t.regex(error.text, /metrics/);
});

/** Open the backfill status stream with `coding`; resolves with the first line once it has arrived, and whether the answer had ended by then. */
function firstLine(
  bearer: string,
  coding: 'gzip' | 'br',
): Promise<{ line: unknown; ended: boolean; encoding: string | undefined; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${service.url}/api/v1/activities/backfill-status`,
      { headers: { authorization: `Bearer ${bearer}`, 'accept-encoding': coding } },
      (res) => {
        let ended = false;
        res.once('end', () => (ended = true));
        const decoder = coding === 'gzip' ? zlib.createGunzip() : zlib.createBrotliDecompress();
        let text = '';
        decoder.on('data', (chunk: Buffer) => {
          text += chunk.toString('utf8');
          const end = text.indexOf('\n');
          if (end < 0) return;
          resolve({
            line: JSON.parse(text.slice(0, end)),
            ended,
            encoding: res.headers['content-encoding'],
            ms: performance.now() - started,
          });
          req.destroy();
        });
        decoder.on('error', reject);
        res.pipe(decoder);
      },
    );
    req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
    req.end();
  });
}

test('a compressed backfill status stream still streams: the first line arrives while the stream is open', async (t) => {
  // A backfill still scanning (no archive behind it): the stream writes a line at once, then every 2 s, for 10 s.
  const user = await createTestUser(service);
  const own = await tokenFor(service, user, ['data:read']);
  await createBackfill(service.deps.db, { user_id: user.id, origin: 'api', filename: 'export.zip' });
  for (const coding of ['gzip', 'br'] as const) {
    const first = await firstLine(own, coding);
    t.is(first.encoding, coding);
    t.deepEqual(first.line, { backfill_loaded_until: null });
    t.false(first.ended, `${coding}: the line came before the end of the stream`);
    t.true(first.ms < 1500, `${coding}: the first line came after ${first.ms.toFixed(0)} ms`);
  }
});
