import test from 'ava';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { createServer, type ClientRequest, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { postWebhook, type WebhookClock } from '../lib/webhook-post.ts';
import { signWebhook } from '../lib/webhook-signature.ts';
import { isLoopbackAddress, isPublicAddress, parseIPv6 } from '../lib/ip-address.ts';
import { resolveWebhookTarget, type LookupAll } from '../lib/webhook-target.ts';
import { webhookUrlProblem } from '../lib/webhook-url.ts';

// ---------------------------------------------------------------------------------------------
// Loopback servers

type Received = { method: string; url: string; headers: IncomingMessage['headers']; body: Buffer };
type TestServer = { server: Server; port: number; received: Received[]; close: () => Promise<void> };

const servers: TestServer[] = [];
test.after.always(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

/** An HTTP server on 127.0.0.1 that records every request (body included) before `handler` answers it. */
async function serve(handler: RequestListener, opts: { readBody?: boolean } = {}): Promise<TestServer> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    res.on('error', () => {});
    if (opts.readBody === false) {
      received.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.alloc(0) });
      return handler(req, res);
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks) });
      handler(req, res);
    });
  });
  server.on('clientError', (_err, socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  const s = { server, port, received, close };
  servers.push(s);
  return s;
}

const loopbackTarget = (port: number, path = '/hook') =>
  ({ url: new URL(`http://127.0.0.1:${port}${path}`), address: '127.0.0.1', family: 4 }) as const;

/**
 * A clock the test moves by hand: postWebhook's deadline fires only when `advance` passes it, and
 * its measured duration is the time advanced. `armed` lists the deadlines not yet fired or cancelled.
 */
function manualClock() {
  let now = 0;
  const timers: { at: number; ms: number; fn: () => void; live: boolean }[] = [];
  const clock: WebhookClock = {
    now: () => now,
    after(ms, fn) {
      const timer = { at: now + ms, ms, fn, live: true };
      timers.push(timer);
      return () => void (timer.live = false);
    },
  };
  return {
    clock,
    advance(ms: number) {
      now += ms;
      for (const timer of timers) {
        if (timer.live && timer.at <= now) {
          timer.live = false;
          timer.fn();
        }
      }
    },
    armed: () => timers.filter((x) => x.live).map((x) => x.ms),
  };
}

/** A promise and whether it has settled yet (checked after the microtasks have run). */
function tracked<T>(promise: Promise<T>) {
  const state = { settled: false, promise };
  promise.then(
    () => (state.settled = true),
    () => (state.settled = true),
  );
  return state;
}
const microtasksRun = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Resolves when this process receives the status line and headers of a response from `port` (node:http's diagnostics channel). */
function responseHeadersFrom(port: number): Promise<number> {
  return new Promise((resolve) => {
    const onMessage = (message: unknown) => {
      const { request, response } = message as { request: ClientRequest; response: IncomingMessage };
      if (String(request.getHeader('host')).endsWith(`:${port}`)) {
        unsubscribe('http.client.response.finish', onMessage);
        resolve(response.statusCode!);
      }
    };
    subscribe('http.client.response.finish', onMessage);
  });
}

/** Resolves when the server's side of the request's connection closes (the client hung up or was answered). */
function connectionClosed(req: IncomingMessage): Promise<void> {
  return new Promise((resolve) => (req.socket.destroyed ? resolve() : req.socket.once('close', () => resolve())));
}

// ---------------------------------------------------------------------------------------------
// Signature

test('signWebhook: t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>, verifiable by a receiver', (t) => {
  const secret = 'whsec_test_0123456789';
  const body = JSON.stringify({
    user_id: 'u_1',
    event_type: 'activity_created',
    resource_id: 'a_1',
    timestamp: '2024-05-01T10:00:00Z',
    note: 'héllo ✓',
  });
  const header = signWebhook(secret, body, 1714557600);
  t.regex(header, /^t=1714557600,v1=[0-9a-f]{64}$/);

  // What a receiver does: parse, recompute over "<t>.<raw body>", compare in constant time.
  const parts = Object.fromEntries(header.split(',').map((p) => p.split('=') as [string, string]));
  t.is(parts.t, '1714557600');
  const expected = createHmac('sha256', secret).update(`${parts.t}.${body}`).digest();
  const given = Buffer.from(parts.v1!, 'hex');
  t.is(given.length, 32);
  t.true(timingSafeEqual(given, expected));

  // Any change to the secret, the time or the body changes the signature.
  t.not(signWebhook('other secret', body, 1714557600), header);
  t.not(signWebhook(secret, body, 1714557601), header);
  t.not(signWebhook(secret, `${body} `, 1714557600), header);
  t.throws(() => signWebhook(secret, body, 1.5), { instanceOf: RangeError });
});

// ---------------------------------------------------------------------------------------------
// postWebhook

test('a 2xx delivery: status, excerpt, headers and a byte-identical body', async (t) => {
  const time = manualClock();
  const srv = await serve((_req, res) => {
    time.advance(37); // the receiver takes 37 ms (on the test's clock) to answer
    res.writeHead(202, { 'Content-Type': 'text/plain; charset=utf-8' });
    res.end('accepted ✓');
  });
  const body = JSON.stringify({
    user_id: 'u_1',
    event_type: 'trace_created',
    resource_id: 'tr_9',
    timestamp: '2024-05-01T10:00:00Z',
    name: 'Zürich → Genève',
  });
  const signature = signWebhook('s3cret', body, 1714557600);
  const result = await postWebhook(loopbackTarget(srv.port), body, { 'X-Signature': signature }, { clock: time.clock });

  t.is(result.status, 202);
  t.is(result.excerpt, 'accepted ✓');
  t.is(result.error, null);
  t.is(result.durationMs, 37, 'the duration is measured from the start to the answer');
  t.deepEqual(time.armed(), [], 'the 5 s deadline was cancelled with the answer');

  t.is(srv.received.length, 1);
  const got = srv.received[0]!;
  t.is(got.method, 'POST');
  t.is(got.url, '/hook');
  t.is(got.headers['content-type'], 'application/json');
  t.is(got.headers['x-signature'], signature);
  t.is(got.headers['user-agent'], 'training-data-service-webhooks');
  t.is(got.headers['content-length'], String(Buffer.byteLength(body)));
  t.true(got.body.equals(Buffer.from(body, 'utf8')));
});

test('the query string is kept and caller headers are sent as given', async (t) => {
  const srv = await serve((_req, res) => res.end());
  const result = await postWebhook(loopbackTarget(srv.port, '/in/hooks?app=7'), '{}', { 'X-Event-Type': 'source_failed' });
  t.is(result.status, 200);
  t.is(result.excerpt, '');
  t.is(srv.received[0]!.url, '/in/hooks?app=7');
  t.is(srv.received[0]!.headers['x-event-type'], 'source_failed');
});

test('a 500 is returned with its status and an excerpt of its body', async (t) => {
  const srv = await serve((_req, res) => {
    res.writeHead(500);
    res.end('internal failure: database unavailable');
  });
  const result = await postWebhook(loopbackTarget(srv.port), '{}', {});
  t.is(result.status, 500);
  t.is(result.excerpt, 'internal failure: database unavailable');
  t.is(result.error, null);
});

test('a redirect is not followed: the 302 is the result and its target receives nothing', async (t) => {
  const elsewhere = await serve((_req, res) => res.end('should not be reached'));
  const srv = await serve((_req, res) => {
    res.writeHead(302, { Location: `http://127.0.0.1:${elsewhere.port}/steal` });
    res.end('moved');
  });
  const result = await postWebhook(loopbackTarget(srv.port), '{}', {});
  t.is(result.status, 302);
  t.is(result.error, null);
  // No wait needed: a client following the redirect would have had `elsewhere`'s answer (so
  // `elsewhere` would have recorded the request) before it could return a result.
  t.is(srv.received.length, 1);
  t.is(elsewhere.received.length, 0);
});

test('a server that never answers: timed out at the deadline, not before, status null', async (t) => {
  let arrived!: (req: IncomingMessage) => void;
  const request = new Promise<IncomingMessage>((resolve) => (arrived = resolve));
  const srv = await serve((req) => arrived(req), { readBody: false });
  const time = manualClock();
  const pending = tracked(postWebhook(loopbackTarget(srv.port), '{"a":1}', {}, { timeoutMs: 300, clock: time.clock }));
  const req = await request;
  t.is(srv.received.length, 1, 'the request did arrive');
  t.deepEqual(time.armed(), [300], 'one deadline, of timeoutMs');

  time.advance(299);
  await microtasksRun();
  t.false(pending.settled, 'still waiting 1 ms before the deadline');

  time.advance(1);
  const result = await pending.promise;
  t.is(result.status, null);
  t.is(result.error, 'timed out after 300 ms');
  t.is(result.durationMs, 300);
  await connectionClosed(req);
  t.true(req.socket.destroyed, 'the client hung up: the receiver saw its connection close');
});

test('the deadline also covers a response body that never ends', async (t) => {
  const srv = await serve((_req, res) => {
    res.writeHead(200);
    res.write('partial'); // ... and nothing more
  });
  const time = manualClock();
  const headers = responseHeadersFrom(srv.port);
  const pending = tracked(postWebhook(loopbackTarget(srv.port), '{}', {}, { timeoutMs: 300, clock: time.clock }));
  t.is(await headers, 200, 'the status line and headers arrived');
  await microtasksRun();
  t.false(pending.settled, 'a response has begun, but its body has not ended: still waiting');

  time.advance(300);
  const result = await pending.promise;
  t.is(result.status, null, 'an unfinished response is not a result');
  t.is(result.error, 'timed out after 300 ms');
  t.is(result.durationMs, 300);
});

test('a 10 MB response: at most 512 bytes are kept and the connection is dropped at once', async (t) => {
  const total = 10 * 1024 * 1024;
  let written = 0;
  let serverSawClose!: () => void;
  const closed = new Promise<void>((resolve) => (serverSawClose = resolve));
  const srv = await serve((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': String(total) });
    res.on('close', () => serverSawClose());
    const chunk = Buffer.alloc(64 * 1024, 'x');
    const pump = () => {
      while (written < total && !res.destroyed) {
        written += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      if (written >= total) res.end();
    };
    pump();
  });
  const time = manualClock();
  const result = await postWebhook(loopbackTarget(srv.port), '{}', {}, { clock: time.clock });
  t.is(result.status, 200);
  t.is(result.error, null, 'finished by the byte limit, not by the deadline (which never fires on this clock)');
  t.true(Buffer.byteLength(result.excerpt) <= 512);
  t.is(result.excerpt, 'x'.repeat(512));
  t.deepEqual(time.armed(), []);
  await closed;
  t.true(written < total, `the server could write only ${written} of ${total} bytes`);
});

test('the excerpt limit is in bytes and never ends in half a character', async (t) => {
  const srv = await serve((_req, res) => res.end('é'.repeat(20))); // 40 bytes
  const result = await postWebhook(loopbackTarget(srv.port), '{}', {}, { excerptBytes: 9 });
  t.is(result.excerpt, 'éééé');
  const invalid = await serve((_req, res) => res.end(Buffer.from([0x6f, 0x6b, 0xff, 0x21])));
  t.is((await postWebhook(loopbackTarget(invalid.port), '{}', {})).excerpt, 'ok\uFFFD!');
});

test('connection refused: an error, status null, no exception', async (t) => {
  const srv = await serve(() => {});
  const port = srv.port;
  await srv.close();
  const result = await postWebhook(loopbackTarget(port), '{}', {});
  t.is(result.status, null);
  t.regex(result.error ?? '', /ECONNREFUSED/);
});

test('a bad header value is reported, not thrown', async (t) => {
  const srv = await serve((_req, res) => res.end());
  const result = await postWebhook(loopbackTarget(srv.port), '{}', { 'X-Signature': 'a\r\nInjected: yes' });
  t.is(result.status, null);
  t.truthy(result.error);
  t.is(srv.received.length, 0);
});

test('pinning: the connection goes to the checked address, the Host header keeps the name', async (t) => {
  const srv = await serve((_req, res) => res.end('pinned'));
  const result = await postWebhook({ url: new URL(`http://pinned.invalid:${srv.port}/hook`), address: '127.0.0.1', family: 4 }, '{}', {});
  t.is(result.error, null);
  t.is(result.status, 200);
  t.is(result.excerpt, 'pinned');
  t.is(srv.received[0]!.headers.host, `pinned.invalid:${srv.port}`);
});

// ---------------------------------------------------------------------------------------------
// resolveWebhookTarget

const dnsAnswer =
  (...addresses: string[]): LookupAll =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

test('loopback http is allowed only with allowHttpLoopback', async (t) => {
  const allowed = await resolveWebhookTarget('http://127.0.0.1:8123/hook', { allowHttpLoopback: true });
  t.true(allowed.ok);
  if (allowed.ok) {
    t.is(allowed.address, '127.0.0.1');
    t.is(allowed.family, 4);
    t.is(allowed.url.href, 'http://127.0.0.1:8123/hook');
  }
  const refused = await resolveWebhookTarget('http://127.0.0.1:8123/hook', { allowHttpLoopback: false });
  t.false(refused.ok);
  if (!refused.ok) t.regex(refused.reason, /localhost/);

  const v6 = await resolveWebhookTarget('http://[::1]:8123/', { allowHttpLoopback: true });
  t.like(v6, { ok: true, address: '::1', family: 6 });
});

test('http://localhost resolves to a loopback address when allowed, and is refused without the flag', async (t) => {
  const allowed = await resolveWebhookTarget('http://localhost:8123/hook', { allowHttpLoopback: true });
  t.true(allowed.ok, JSON.stringify(allowed));
  if (allowed.ok) t.true(isLoopbackAddress(allowed.address), allowed.address);
  t.false((await resolveWebhookTarget('http://localhost:8123/hook', { allowHttpLoopback: false })).ok);
  t.false((await resolveWebhookTarget('https://localhost/hook', { allowHttpLoopback: false })).ok);
});

test('a loopback name must resolve to loopback addresses only', async (t) => {
  const result = await resolveWebhookTarget('http://localhost:8123/', {
    allowHttpLoopback: true,
    lookup: dnsAnswer('127.0.0.1', '192.168.1.1'),
  });
  t.false(result.ok);
  if (!result.ok) t.regex(result.reason, /192\.168\.1\.1/);
  t.false((await resolveWebhookTarget('http://localhost:8123/', { allowHttpLoopback: true, lookup: dnsAnswer('93.184.216.34') })).ok);
});

test('private IP literals are refused', async (t) => {
  for (const url of ['https://10.0.0.1/', 'https://[fe80::1]/', 'https://169.254.169.254/latest/meta-data', 'https://[::ffff:a00:1]/']) {
    const result = await resolveWebhookTarget(url, { allowHttpLoopback: true });
    t.false(result.ok, url);
  }
  // The URL parser normalises other spellings of 127.0.0.1 before any rule sees them.
  t.false((await resolveWebhookTarget('https://0x7f.1/', { allowHttpLoopback: false })).ok);
  // Save time and delivery share one table of non-public ranges, so every one of them is refused by both.
  for (const url of ['https://198.18.0.1/', 'https://224.0.0.1/', 'https://[2001:db8::1]/', 'https://[64:ff9b::a00:1]/']) {
    t.regex(webhookUrlProblem(url, { allowHttpLoopback: false }) ?? '', /private network address/, url);
    const result = await resolveWebhookTarget(url, { allowHttpLoopback: false });
    t.false(result.ok, url);
    if (!result.ok) t.regex(result.reason, /private network address/, url);
  }
  t.like(await resolveWebhookTarget('https://1.1.1.1/hook', { allowHttpLoopback: false }), { ok: true, address: '1.1.1.1', family: 4 });
  t.like(await resolveWebhookTarget('https://[2606:4700::1111]/', { allowHttpLoopback: false }), {
    ok: true,
    address: '2606:4700::1111',
    family: 6,
  });
});

test('the scheme rules are the save-time ones', async (t) => {
  const lookup = dnsAnswer('93.184.216.34');
  for (const url of ['http://hooks.example.com/', 'ftp://hooks.example.com/', 'https://user:pw@hooks.example.com/', 'not a url']) {
    t.false((await resolveWebhookTarget(url, { allowHttpLoopback: true, lookup })).ok, url);
  }
});

test('DNS answers are checked: every address must be public, the first is returned', async (t) => {
  const url = 'https://hooks.example.com/in';
  const ok = await resolveWebhookTarget(url, { allowHttpLoopback: false, lookup: dnsAnswer('93.184.216.34') });
  t.like(ok, { ok: true, address: '93.184.216.34', family: 4 });
  if (ok.ok) t.is(ok.url.hostname, 'hooks.example.com');

  const both = await resolveWebhookTarget(url, { allowHttpLoopback: false, lookup: dnsAnswer('2606:2800:220:1::1', '93.184.216.34') });
  t.like(both, { ok: true, address: '2606:2800:220:1::1', family: 6 });

  const priv = await resolveWebhookTarget(url, { allowHttpLoopback: false, lookup: dnsAnswer('10.1.2.3') });
  t.false(priv.ok);
  if (!priv.ok) t.regex(priv.reason, /10\.1\.2\.3/);

  const mixed = await resolveWebhookTarget(url, { allowHttpLoopback: false, lookup: dnsAnswer('93.184.216.34', '192.168.1.1') });
  t.false(mixed.ok);
  if (!mixed.ok) t.regex(mixed.reason, /192\.168\.1\.1/);
});

test('a non-loopback name resolving to 127.0.0.1 is refused even with allowHttpLoopback', async (t) => {
  let asked = '';
  const lookup: LookupAll = async (hostname) => {
    asked = hostname;
    return [{ address: '127.0.0.1', family: 4 }];
  };
  const result = await resolveWebhookTarget('https://evil.example/', { allowHttpLoopback: true, lookup });
  t.is(asked, 'evil.example');
  t.false(result.ok);
  if (!result.ok) t.regex(result.reason, /127\.0\.0\.1/);
});

test('a lookup failure or an empty answer is refused with a reason', async (t) => {
  const failing: LookupAll = async () => {
    throw Object.assign(new Error('getaddrinfo ENOTFOUND hooks.example.com'), { code: 'ENOTFOUND' });
  };
  const failed = await resolveWebhookTarget('https://hooks.example.com/', { allowHttpLoopback: false, lookup: failing });
  t.false(failed.ok);
  if (!failed.ok) t.regex(failed.reason, /could not resolve hooks\.example\.com: ENOTFOUND/);

  const empty = await resolveWebhookTarget('https://hooks.example.com/', { allowHttpLoopback: false, lookup: dnsAnswer() });
  t.false(empty.ok);
  if (!empty.ok) t.regex(empty.reason, /no addresses/);
});

// ---------------------------------------------------------------------------------------------
// Address ranges

test('isPublicAddress: every non-public range is refused', (t) => {
  const refused = [
    // IPv4
    '0.0.0.0',
    '0.255.255.255', // 0/8
    '10.0.0.0',
    '10.255.255.255', // 10/8
    '100.64.0.0',
    '100.127.255.255', // 100.64/10
    '127.0.0.1',
    '127.255.255.254', // 127/8
    '169.254.0.1',
    '169.254.169.254', // 169.254/16
    '172.16.0.1',
    '172.31.255.255', // 172.16/12
    '192.0.0.1',
    '192.0.0.255', // 192.0.0/24
    '192.0.2.1',
    '198.51.100.7',
    '203.0.113.9', // documentation
    '192.168.0.1',
    '192.168.255.255', // 192.168/16
    '198.18.0.1',
    '198.19.255.255', // 198.18/15
    '224.0.0.1',
    '239.255.255.255', // 224/4 multicast
    '240.0.0.1',
    '254.255.255.255', // 240/4 reserved
    '255.255.255.255',
    // IPv6
    '::',
    '::1',
    '0:0:0:0:0:0:0:1',
    'fc00::1',
    'fd12:3456:789a::1', // fc00::/7
    'fe80::1',
    'febf:ffff::1',
    'fe80::1%eth0', // fe80::/10
    'ff02::1',
    'ff0e::1', // ff00::/8
    '::ffff:10.0.0.1',
    '::ffff:127.0.0.1',
    '::ffff:a00:1',
    '::ffff:169.254.169.254', // IPv4-mapped
    '64:ff9b::a00:1',
    '64:ff9b::10.0.0.1',
    '64:ff9b::127.0.0.1', // NAT64 of private IPv4
    '2001:db8::1',
    '2001:db8:ffff::1', // documentation
    '::10.0.0.1',
    '::8.8.8.8', // IPv4-compatible (deprecated)
    '2002:a00:1::1',
    '2002:c0a8:101::1', // 6to4 of private IPv4
    '2001:0:4136:e378::1', // Teredo
    '100::1',
    '64:ff9b:1::1',
    'fec0::1',
    '4000::1', // discard, local NAT64, site-local, not global unicast
    // Not addresses
    '',
    'localhost',
    '256.1.1.1',
    '1.2.3',
    '1:::2',
    '[::1]',
  ];
  for (const address of refused) t.false(isPublicAddress(address), address);
});

test('isPublicAddress: public addresses are allowed', (t) => {
  const allowed = [
    '1.1.1.1',
    '8.8.8.8',
    '93.184.216.34',
    '9.255.255.255',
    '11.0.0.0',
    '100.63.255.255',
    '100.128.0.0',
    '126.255.255.255',
    '128.0.0.0',
    '169.253.255.255',
    '172.15.255.255',
    '172.32.0.0',
    '192.0.1.1',
    '192.167.255.255',
    '192.169.0.0',
    '198.17.255.255',
    '198.20.0.0',
    '223.255.255.255',
    '2606:4700::1111',
    '2001:4860:4860::8888',
    '2a00:1450:4001::1',
    '2001:db9::1',
    '2001:db7::1',
    '::ffff:1.1.1.1',
    '::ffff:808:808',
    '64:ff9b::1.1.1.1',
    '64:ff9b::808:808',
    '2002:808:808::1',
  ];
  for (const address of allowed) t.true(isPublicAddress(address), address);
});

test('parseIPv6: compression, dotted-quad tails and malformed input', (t) => {
  t.deepEqual(parseIPv6('::'), [0, 0, 0, 0, 0, 0, 0, 0]);
  t.deepEqual(parseIPv6('::1'), [0, 0, 0, 0, 0, 0, 0, 1]);
  t.deepEqual(parseIPv6('1::'), [1, 0, 0, 0, 0, 0, 0, 0]);
  t.deepEqual(parseIPv6('2606:4700::1111'), [0x2606, 0x4700, 0, 0, 0, 0, 0, 0x1111]);
  t.deepEqual(parseIPv6('1:2:3:4:5:6:7:8'), [1, 2, 3, 4, 5, 6, 7, 8]);
  t.deepEqual(parseIPv6('1:2:3:4:5:6:7::'), [1, 2, 3, 4, 5, 6, 7, 0]);
  t.deepEqual(parseIPv6('::FFFF:10.0.0.1'), [0, 0, 0, 0, 0, 0xffff, 0x0a00, 0x0001]);
  t.deepEqual(parseIPv6('1:2:3:4:5:6:1.2.3.4'), [1, 2, 3, 4, 5, 6, 0x0102, 0x0304]);
  t.deepEqual(parseIPv6('fe80::1%eth0'), [0xfe80, 0, 0, 0, 0, 0, 0, 1]);
  for (const bad of [
    '',
    '[::1]',
    ':',
    ':::',
    '1:::2',
    '1::2::3',
    '1:2:3:4:5:6:7:8:9',
    '1:2:3:4:5:6:7',
    '12345::',
    'g::1',
    '::1.2.3.256',
    '1:2:3:4:5:6:7:1.2.3.4',
    '1.2.3.4',
  ]) {
    t.is(parseIPv6(bad), undefined, bad);
  }
});
