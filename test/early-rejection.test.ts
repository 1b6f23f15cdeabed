import test, { type ExecutionContext } from 'ava';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { gzipSync } from 'node:zlib';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestUser, tokenFor } from './helpers/users.ts';
import { KeepAliveConnection, type KeepAliveResponse } from './helpers/keep-alive.ts';
import { multipartBody, type Part } from './helpers/multipart.ts';

/**
 * A request refused before its body was read to the end must not cost the client its keep-alive
 * connection: the refusal arrives, and the next request on the same socket is answered promptly.
 */

const KiB = 1024;
const MiB = 1024 * KiB;
const LIMITS = { UPLOAD_MAX_FILE_BYTES: 64 * KiB, BODY_LIMIT_BYTES: 16 * KiB, BACKFILL_MAX_ARCHIVE_BYTES: 64 * KiB, DRAIN_BYTES: 4 * MiB };

let service: TestService;
let token: string;
test.before(async () => {
  service = await startTestService({
    env: {
      UPLOAD_MAX_FILE_BYTES: String(LIMITS.UPLOAD_MAX_FILE_BYTES),
      BODY_LIMIT_BYTES: String(LIMITS.BODY_LIMIT_BYTES),
      BACKFILL_MAX_ARCHIVE_BYTES: String(LIMITS.BACKFILL_MAX_ARCHIVE_BYTES),
      REJECTED_BODY_DRAIN_BYTES: String(LIMITS.DRAIN_BYTES),
    },
  });
  token = await tokenFor(service, await createTestUser(service), ['data:read', 'data:write']);
});
test.after.always(() => service?.close());

function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms))),
  ]).finally(() => clearTimeout(timer));
}

const csvFile = (i: number, bytes = 1 * KiB): Part => ({
  name: 'files',
  filename: `ride-${i}.csv`,
  type: 'text/csv',
  data: `timestamp,power\n${'2025-01-01T07:00:00Z,200\n'.repeat(Math.ceil(bytes / 25))}`,
});
const filler = (bytes: number) => randomBytes(bytes / 2).toString('hex');

/** Send the refused request, then GET /healthz on the same connection; both answer within a few seconds. */
async function refusedThenNext(
  t: ExecutionContext,
  method: string,
  path: string,
  request: { headers?: Record<string, string>; body?: Uint8Array; chunks?: Uint8Array[] },
  expected: number,
  { sockets = 1 } = {},
): Promise<KeepAliveResponse> {
  const conn = new KeepAliveConnection(service.url);
  try {
    const refused = await within(5_000, `${method} ${path}`, conn.request(method, path, request));
    t.is(refused.status, expected, refused.body);
    t.truthy(JSON.parse(refused.body).detail, 'the refusal says why');
    const next = await within(5_000, 'the next request on the connection', conn.get('/healthz'));
    t.is(next.status, 200);
    t.is(conn.sockets.size, sockets, sockets === 1 ? 'the connection was kept' : 'the client reconnected');
    return refused;
  } finally {
    conn.close();
  }
}

const auth = () => ({ authorization: `Bearer ${token}` });

test('11 files in an upload: 422, and the connection serves the next request', async (t) => {
  const { body, contentType } = multipartBody([...Array.from({ length: 11 }, (_, i) => csvFile(i)), csvFile(11, 512 * KiB)]);
  const refused = await refusedThenNext(
    t,
    'POST',
    '/api/v1/activities/upload',
    { headers: { ...auth(), 'content-type': contentType }, body },
    422,
  );
  t.deepEqual(JSON.parse(refused.body).detail[0].loc, ['body', 'files']);
});

test('an over-size file followed by more data: 413, and the connection serves the next request', async (t) => {
  const { body, contentType } = multipartBody([csvFile(0, 1 * MiB), csvFile(1, 512 * KiB)]);
  await refusedThenNext(t, 'POST', '/api/v1/activities/upload', { headers: { ...auth(), 'content-type': contentType }, body }, 413);
});

test('two archives in one backfill: 422, and the connection serves the next request', async (t) => {
  const zip = (n: number) => ({ name: 'archive', filename: `export-${n}.zip`, type: 'application/zip', data: filler(32 * KiB) });
  const { body, contentType } = multipartBody([zip(1), zip(2), zip(3)]);
  await refusedThenNext(t, 'POST', '/api/v1/activities/backfill', { headers: { ...auth(), 'content-type': contentType }, body }, 422);
});

test('an archive over its limit: the client reads the 413, and the connection serves the next request', async (t) => {
  const { body, contentType } = multipartBody([
    { name: 'archive', filename: 'export.zip', type: 'application/zip', data: filler(1 * MiB) },
  ]);
  await refusedThenNext(t, 'POST', '/api/v1/activities/backfill', { headers: { ...auth(), 'content-type': contentType }, body }, 413);
});

const chunked = (text: string, size = 4 * KiB) =>
  Array.from({ length: Math.ceil(text.length / size) }, (_, i) => Buffer.from(text.slice(i * size, (i + 1) * size)));

test('a chunked JSON body over the body limit (traces): 413, and the connection serves the next request', async (t) => {
  const json = JSON.stringify({ name: filler(256 * KiB) });
  await refusedThenNext(
    t,
    'POST',
    '/api/v1/traces',
    { headers: { ...auth(), 'content-type': 'application/json' }, chunks: chunked(json) },
    413,
  );
});

test('a chunked form over the body limit (/signin, the token endpoint): 413, and the connection serves the next request', async (t) => {
  const form = `email=a%40example.com&password=${filler(256 * KiB)}`;
  for (const path of ['/signin', '/api/v1/oauth/token']) {
    await refusedThenNext(
      t,
      'POST',
      path,
      { headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, chunks: chunked(form) },
      413,
    );
  }
});

test('a gzip-encoded body over the limit: 413, and the connection serves the next request', async (t) => {
  const body = gzipSync(JSON.stringify({ name: filler(512 * KiB) }));
  t.true(body.length > 128 * KiB, 'more compressed bytes than one read takes');
  await refusedThenNext(
    t,
    'POST',
    '/api/v1/traces',
    { headers: { ...auth(), 'content-type': 'application/json', 'content-encoding': 'gzip' }, body },
    413,
  );
});

test('a body that is not the gzip it says it is: 400 naming the encoding, on any path, and the connection serves the next request', async (t) => {
  for (const path of ['/api/v1/traces', '/no/such/path']) {
    const refused = await refusedThenNext(
      t,
      'POST',
      path,
      { headers: { ...auth(), 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: randomBytes(256 * KiB) },
      400,
    );
    const detail = JSON.parse(refused.body).detail as string;
    t.regex(detail, /gzip/i);
    t.notRegex(
      detail,
      /incorrect header check|invalid (block|stored|distance)|unexpected end|Z_[A-Z_]+_ERROR|zlib/i,
      "in our words, not zlib's",
    );
  }
});

test('an unsupported Content-Encoding: 415 naming it, and the connection serves the next request', async (t) => {
  const refused = await refusedThenNext(
    t,
    'POST',
    '/api/v1/traces',
    { headers: { ...auth(), 'content-type': 'application/json', 'content-encoding': 'br-x' }, body: randomBytes(64 * KiB) },
    415,
  );
  t.regex(JSON.parse(refused.body).detail, /br-x/);
});

test('a refusal before the body is read at all (no token): the connection serves the next request', async (t) => {
  const { body, contentType } = multipartBody([csvFile(0, 1 * MiB)]);
  await refusedThenNext(t, 'POST', '/api/v1/activities/upload', { headers: { 'content-type': contentType }, body }, 401);
});

test('a body declared longer than the drain bound: the client still reads the 413 with Connection: close, then reconnects', async (t) => {
  const { body, contentType } = multipartBody([csvFile(0, LIMITS.DRAIN_BYTES + 1 * MiB)]);
  const refused = await refusedThenNext(
    t,
    'POST',
    '/api/v1/activities/upload',
    { headers: { ...auth(), 'content-type': contentType }, body },
    413,
    { sockets: 2 },
  );
  t.is(refused.headers.connection, 'close');
});

/** `request` written raw on a new connection; the answer's status line, headers and body once the server closes it. */
function rawExchange(request: string): Promise<{ status: number; headers: string; body: string }> {
  const { port } = new URL(service.url);
  return within(
    5_000,
    'raw request',
    new Promise((resolve, reject) => {
      const socket = net.connect(Number(port), '127.0.0.1', () => socket.end(request));
      const chunks: Buffer[] = [];
      socket.on('data', (c) => chunks.push(c));
      socket.on('error', reject);
      socket.on('close', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const [head = '', body = ''] = text.split('\r\n\r\n');
        resolve({ status: Number(head.split(' ')[1]), headers: head, body });
      });
    }),
  );
}

test('a URL or a header over 16 KiB: 431 with a JSON detail, not a bare status line; the service answers the next request', async (t) => {
  const longUrl = await fetch(`${service.url}/api/v1/activities?tags=${'a'.repeat(20 * KiB)}`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  t.is(longUrl.status, 431);
  t.regex(longUrl.headers.get('content-type') ?? '', /^application\/json/);
  t.regex(((await longUrl.json()) as { detail: string }).detail, /over 16 KiB.*shorten the URL/);
  const longHeader = await fetch(`${service.url}/api/v1/activities`, {
    headers: { Authorization: `Bearer ${token}`, 'X-Padding': 'p'.repeat(20 * KiB) },
  });
  t.is(longHeader.status, 431);
  t.truthy(((await longHeader.json()) as { detail: string }).detail);
  t.is((await fetch(`${service.url}/healthz`)).status, 200);
});

test('a request that is not HTTP: 400 with a JSON detail naming the parse error, and the connection closed', async (t) => {
  const answer = await rawExchange('GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header Without Colon\r\n\r\n');
  t.is(answer.status, 400);
  t.regex(answer.headers, /Content-Type: application\/json/);
  t.regex(answer.headers, /Connection: close/);
  t.regex((JSON.parse(answer.body) as { detail: string }).detail, /not valid HTTP\/1\.1 \(HPE_/);
  t.is((await fetch(`${service.url}/healthz`)).status, 200);
});
