import test from 'ava';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import http from 'node:http';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestUser, tokenFor } from './helpers/users.ts';
import { fixturesDir } from './helpers/fixtures.ts';
import { reference } from './helpers/fit-reference.ts';
import { buildActivityFit } from './helpers/fit-builder.ts';
import { api, upload, uploadAndWait, waitForSource } from './helpers/activities.ts';
import { formatInstant, formatLocal } from '../lib/time.ts';
import { multipartBody } from './helpers/multipart.ts';

const FIXTURES = join(fixturesDir(), 'fit');
const FILES = readdirSync(FIXTURES)
  .filter((f) => f.toLowerCase().endsWith('.fit'))
  .sort();
const fixture = (name: string) => new Uint8Array(readFileSync(join(FIXTURES, name)));
const csv = (text: string) => new TextEncoder().encode(text);

let service: TestService;
test.before(async () => {
  service = await startTestService({ workers: true, env: { UPLOAD_MAX_FILE_BYTES: String(4 * 1024 * 1024) } });
});
test.after.always(() => service?.close());

async function athlete(scopes: ('data:read' | 'data:write')[] = ['data:read', 'data:write']) {
  const user = await createTestUser(service);
  return { user, token: await tokenFor(service, user, scopes) };
}

async function storedSources(userId: string) {
  return service.deps.db.selectFrom('sources').selectAll().where('user_id', '=', userId).execute();
}

test('every FIT fixture is ingested through the API and agrees with fitsdk: sport, start/end, local times, laps, metrics', async (t) => {
  const { token } = await athlete();
  const sources = [
    ...(await uploadAndWait(
      service,
      token,
      FILES.slice(0, 10).map((name) => ({ name, bytes: fixture(name) })),
    )),
    ...(await uploadAndWait(
      service,
      token,
      FILES.slice(10).map((name) => ({ name, bytes: fixture(name) })),
    )),
  ];
  t.is(sources.length, FILES.length);
  for (const [i, name] of FILES.entries()) {
    const source = sources[i];
    const expected = reference(fixture(name));
    t.is(source.filename, name);
    if (!expected.length) {
      t.like(source, { status: 'failed', activity_ids: [], error: { code: 'no_activity' } }, name);
      continue;
    }
    t.is(source.status, 'processed', `${name}: ${JSON.stringify(source.error)}`);
    t.is(source.activity_ids.length, expected.length, `${name}: one activity per session`);
    for (const [k, id] of source.activity_ids.entries()) {
      const exp = expected[k]!;
      const { status, body: a } = await api(service, token, 'GET', `/api/v1/activities/${id}`);
      t.is(status, 200);
      const at = `${name} session ${k}`;
      t.is(a.sport, exp.sport, at);
      t.is(a.source_id, source.id);
      t.is(a.start, formatInstant(Math.floor(exp.start / 1000) * 1000), `${at}: start`);
      t.true(Math.abs(Date.parse(a.end) - exp.end) < 1, `${at}: end ${a.end}`);
      t.is(a.start_local, formatLocal(Date.parse(a.start), exp.utcOffsetSeconds), `${at}: start_local`);
      t.is(a.end_local, formatLocal(Date.parse(a.end), exp.utcOffsetSeconds), `${at}: end_local`);
      t.regex(a.duration, /^PT/);
      t.true(Array.isArray(a.laps) && a.laps.length === Math.max(1, exp.lapStarts.length), `${at}: laps`);
      if (exp.lapStarts.length)
        t.deepEqual(
          a.laps.map((l: { start: string }) => Date.parse(l.start)),
          exp.lapStarts,
          `${at}: lap starts`,
        );
      for (const lap of a.laps) t.is(lap.start_local, formatLocal(Date.parse(lap.start), exp.utcOffsetSeconds));
      // A pool swim's speed, cadence and distance come from its length messages (docs/api-clients.md: How a recording
      // becomes the 1 Hz grid).
      t.deepEqual([...a.metrics].sort(), [...new Set([...Object.keys(exp.channels), ...exp.lengthChannels])].sort(), `${at}: metrics`);
      for (const [channel, values] of Object.entries(exp.channels)) {
        if ((exp.lengthChannels as string[]).includes(channel)) continue;
        const finite = values.filter(Number.isFinite);
        const stats = a.summary?.[channel];
        if (stats?.max !== undefined) t.true(Math.abs(stats.max - Math.max(...finite)) < 1e-6, `${at}: ${channel} max`);
      }
      t.true(Array.isArray(a.devices));
      t.true(a.distance === null || typeof a.distance === 'number');
      // The sample file exists where the id says.
      t.true(
        existsSync(
          join(
            service.config.DATA_DIR,
            'users',
            (await service.deps.db.selectFrom('activities').select('user_id').where('id', '=', id).executeTakeFirstOrThrow()).user_id,
            'activities',
            `${id}.parquet`,
          ),
        ),
      );
    }
  }
});

test('a multisport FIT file gives one activity per session, in order, with their sports', async (t) => {
  const { token } = await athlete();
  const start = new Date('2026-05-18T08:00:00Z');
  const bytes = buildActivityFit({
    utcOffsetSeconds: 3600,
    sessions: [
      { sport: 'running', start, seconds: 600, laps: 2 },
      { sport: 'cycling', subSport: 'road', start: new Date(start.getTime() + 700_000), seconds: 900, laps: 3 },
    ],
  });
  const [source] = await uploadAndWait(service, token, [{ name: 'brick.fit', bytes }]);
  t.is(source.status, 'processed', JSON.stringify(source.error));
  t.is(source.activity_ids.length, 2);
  const [run, ride] = await Promise.all(
    source.activity_ids.map((id: string) => api(service, token, 'GET', `/api/v1/activities/${id}`).then((r) => r.body)),
  );
  t.is(run.sport, 'running');
  t.is(ride.sport, 'cycling.road');
  t.like(run, { start: '2026-05-18T08:00:00Z', start_local: '2026-05-18T09:00:00', duration: 'PT10M' });
  t.is(run.laps.length, 2);
  t.is(ride.laps.length, 3);
  t.is(ride.start, '2026-05-18T08:11:40Z');
});

test('CSV uploads: timestamps with offsets give local times; sport from the form or a column; each problem a distinct failure code', async (t) => {
  const { token } = await athlete();
  const good = csv(
    'timestamp,power,heart_rate\n2026-05-18T17:00:00+02:00,200,120\n2026-05-18T17:00:01+02:00,210,121\n2026-05-18T17:00:02+02:00,220,\n',
  );
  const withColumn = csv('timestamp,sport,speed\n2026-05-19T06:00:00Z,running.treadmill,3.0\n2026-05-19T06:00:01Z,,3.2\n');
  const cases: [string, Uint8Array, string][] = [
    ['no-timestamp.csv', csv('time,power\n1,2\n'), 'csv_missing_timestamp'],
    ['naive.csv', csv('timestamp,power\n2026-05-18T17:00:00,200\n'), 'csv_naive_timestamp'],
    ['header-only.csv', csv('timestamp,power\n'), 'csv_no_data'],
    ['bad-number.csv', csv('timestamp,power\n2026-05-18T17:00:00Z,200\n2026-05-18T17:00:01Z,abc\n'), 'csv_bad_number'],
    ['empty.csv', new Uint8Array(0), 'empty_file'],
  ];
  const res = await upload(
    service,
    token,
    [{ name: 'ride.csv', bytes: good }, { name: 'treadmill.csv', bytes: withColumn }, ...cases.map(([name, bytes]) => ({ name, bytes }))],
    { sport: 'cycling' },
  );
  t.is(res.status, 202);
  const done = await Promise.all(res.body.sources.map((s: { id: string }) => waitForSource(service, token, s.id)));
  t.like(done[0], { type: 'csv', status: 'processed' });
  const ride = (await api(service, token, 'GET', `/api/v1/activities/${done[0].activity_ids[0]}`)).body;
  t.like(ride, { sport: 'cycling', start: '2026-05-18T15:00:00Z', start_local: '2026-05-18T17:00:00', metrics: ['power', 'heart_rate'] });
  t.like(ride.summary, { power: { max: 220, mean: 210 }, heart_rate: { start: 120, end: 121, min: 120, max: 121 } });
  // The form field wins over the column when both are given.
  t.is((await api(service, token, 'GET', `/api/v1/activities/${done[1].activity_ids[0]}`)).body.sport, 'cycling');
  for (const [i, [name, , code]] of cases.entries()) {
    t.like(done[i + 2], { filename: name, status: 'failed', activity_ids: [] }, name);
    t.is(done[i + 2].error.code, code, `${name}: ${done[i + 2].error.message}`);
    t.true(done[i + 2].error.message.length > 0);
  }

  // Without a form field, the sport column is used (legacy names normalised); without either, a distinct code.
  const [fromColumn, noSport] = await uploadAndWait(service, token, [
    { name: 'treadmill-2.csv', bytes: csv('timestamp,sport,speed\n2026-05-20T06:00:00Z,running.treadmill,3.0\n') },
    { name: 'nosport.csv', bytes: csv('timestamp,speed\n2026-05-21T06:00:00Z,3.0\n') },
  ]);
  t.is((await api(service, token, 'GET', `/api/v1/activities/${fromColumn.activity_ids[0]}`)).body.sport, 'running+stationary');
  t.is(noSport.error.code, 'csv_missing_sport');
});

test('the same content uploaded again gives the existing source and activities, marked duplicate; gzip uploads are the same content', async (t) => {
  const { user, token } = await athlete();
  const bytes = fixture('Garmin830_with_Stages.fit');
  const [first] = await uploadAndWait(service, token, [{ name: 'ride.fit', bytes }]);
  const fresh = await upload(service, token, [
    { name: 'new.fit', bytes: fixture('4078723797.fit') },
    { name: 'same-again.fit', bytes: fixture('4078723797.fit') },
  ]);
  t.deepEqual(
    fresh.body.sources.map((s: { duplicate: boolean }) => s.duplicate),
    [false, true],
    'new content is not a duplicate; the same content later in the request is',
  );
  const again = await upload(service, token, [
    { name: 'copy.fit', bytes },
    { name: 'ride.fit.gz', bytes: gzipSync(bytes) },
  ]);
  t.is(again.status, 202);
  t.is(again.body.sources[0].id, first.id);
  t.is(again.body.sources[1].id, first.id);
  t.true(again.body.sources[0].duplicate && again.body.sources[1].duplicate);
  t.like(again.body.sources[0], { status: 'processed', activity_ids: first.activity_ids, filename: 'ride.fit' });
  t.is((await storedSources(user.id)).length, 2);
  // Another user uploading the same bytes gets their own.
  const other = await athlete();
  const [theirs] = await uploadAndWait(service, other.token, [{ name: 'ride.fit', bytes }]);
  t.not(theirs.id, first.id);
  t.not(theirs.activity_ids[0], first.activity_ids[0]);
});

test('a corrupt file fails alone: truncated and bit-flipped FIT files fail with invalid_fit while the good file of the request succeeds', async (t) => {
  const { token } = await athlete();
  const good = fixture('4078723797.fit');
  const truncated = good.slice(0, Math.floor(good.length / 2));
  const flipped = good.slice();
  flipped[Math.floor(flipped.length / 3)]! ^= 0x40;
  const [ok, cut, flip, empty] = await uploadAndWait(service, token, [
    { name: 'good.fit', bytes: good },
    { name: 'cut.fit', bytes: truncated },
    { name: 'flip.fit', bytes: flipped },
    { name: 'empty.fit', bytes: new Uint8Array(0) },
  ]);
  t.like(ok, { status: 'processed', error: null });
  t.like(cut, { status: 'failed', error: { code: 'invalid_fit' } });
  t.like(flip, { status: 'failed', error: { code: 'invalid_fit' } });
  t.like(empty, { status: 'failed', error: { code: 'empty_file' } });
});

// Serial: it checks that DATA_DIR/tmp is empty afterwards, which a concurrent upload of another test would break.
test.serial(
  'upload validation: 11 files, no file, an unknown format (refused at once, nothing stored), a bad sport, too large (413)',
  async (t) => {
    const { user, token } = await athlete();
    const one = { name: 'a.fit', bytes: fixture('4078723797.fit') };
    const eleven = await upload(
      service,
      token,
      Array.from({ length: 11 }, (_, i) => ({
        name: `f${i}.csv`,
        bytes: csv(`timestamp,power\n2026-01-0${1 + (i % 9)}T00:00:0${i % 10}Z,1\n`),
      })),
    );
    t.is(eleven.status, 422);
    t.deepEqual(eleven.body.detail[0].loc, ['body', 'files']);

    const none = await upload(service, token, [], { sport: 'cycling' });
    t.is(none.status, 422);
    t.deepEqual(none.body.detail[0].loc, ['body', 'files']);

    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]);
    // XML that is neither GPX nor TCX (a KML file named .gpx): refused by its root element.
    const gpx = csv('<?xml version="1.0"?><kml xmlns="http://www.opengis.net/kml/2.2"></kml>');
    const unknown = await upload(service, token, [one, { name: 'photo.fit', bytes: png }, { name: 'track.gpx', bytes: gpx }]);
    t.is(unknown.status, 422);
    t.deepEqual(
      unknown.body.detail.map((d: { loc: unknown[] }) => d.loc),
      [
        ['body', 'files', 1],
        ['body', 'files', 2],
      ],
    );
    t.regex(unknown.body.detail[0].msg, /PNG/);
    t.regex(unknown.body.detail[1].msg, /root element <kml>, neither GPX \(<gpx>\) nor TCX/);
    t.is((await storedSources(user.id)).length, 0, 'nothing of a refused request is stored');

    const badSport = await upload(service, token, [one], { sport: 'Cycling Road!' });
    t.is(badSport.status, 422);
    t.deepEqual(badSport.body.detail[0].loc, ['body', 'sport']);

    const big = new Uint8Array(4 * 1024 * 1024 + 10);
    big.set(fixture('4078723797.fit').subarray(0, 14));
    const tooLarge = await upload(service, token, [{ name: 'big.fit', bytes: big }]);
    t.is(tooLarge.status, 413);
    t.regex(tooLarge.body.detail, /bytes/);
    const bomb = gzipSync(new Uint8Array(5 * 1024 * 1024));
    const tooLargeInside = await upload(service, token, [{ name: 'bomb.csv.gz', bytes: bomb }]);
    t.is(tooLargeInside.status, 413);
    t.is((await storedSources(user.id)).length, 0);

    const notMultipart = await api(service, token, 'POST', '/api/v1/activities/upload', { files: [] });
    t.is(notMultipart.status, 422);
    t.false(readdirSync(join(service.config.DATA_DIR, 'tmp')).length > 0, 'temporary upload files are removed');
  },
);

test('a file part without a Content-Type, or with a generic one, is a file: its content decides (.fit, .csv, .csv.gz)', async (t) => {
  const { user, token } = await athlete();
  const send = async (type: string | undefined, day: number) => {
    const start = new Date(Date.parse('2026-03-01T07:00:00Z') + day * 86_400_000);
    const rows = (at: string) => `timestamp,power\n${at},200\n`;
    const { body, contentType } = multipartBody([
      { name: 'files', filename: 'ride.fit', type, data: buildActivityFit({ sessions: [{ sport: 'cycling', start, seconds: 60 }] }) },
      { name: 'files', filename: 'ride.csv', type, data: rows(`2026-03-0${day + 1}T08:00:00Z`) },
      { name: 'files', filename: 'ride.csv.gz', type, data: gzipSync(rows(`2026-03-0${day + 1}T09:00:00Z`)) },
      { name: 'sport', data: 'cycling' },
    ]);
    const res = await fetch(`${service.url}/api/v1/activities/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
      body,
    });
    return { status: res.status, body: (await res.json()) as { sources: { id: string; type: string; filename: string }[] } };
  };
  for (const [day, type] of [undefined, 'application/octet-stream', 'text/plain'].entries()) {
    const res = await send(type, day);
    t.is(res.status, 202, `Content-Type ${type ?? 'none'}: ${JSON.stringify(res.body)}`);
    t.deepEqual(
      res.body.sources.map((s: { type: string; filename: string }) => [s.type, s.filename]),
      [
        ['fit', 'ride.fit'],
        ['csv', 'ride.csv'],
        ['csv', 'ride.csv'],
      ],
    );
    for (const source of res.body.sources)
      t.is((await waitForSource(service, token, source.id)).status, 'processed', `${type ?? 'none'}: ${source.filename}`);
  }
  t.is((await storedSources(user.id)).length, 9);
});

test('a file name with a NUL or another control character is 422 naming the file, and nothing of the request is stored', async (t) => {
  const { user, token } = await athlete();
  const good = (n: number) => `timestamp,power\n2026-04-0${n}T08:00:00Z,200\n`;
  for (const [i, name] of ['ride\u0000.csv', 'ride\u0001.csv', 'ride\u007f.csv', 'ri\tde.csv'].entries()) {
    const { body, contentType } = multipartBody([
      { name: 'files', filename: 'first.csv', data: good(1) },
      { name: 'files', filename: name, data: good(2) },
      { name: 'sport', data: 'cycling' },
    ]);
    const res = await fetch(`${service.url}/api/v1/activities/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
      body,
    });
    t.is(res.status, 422, `name ${i}`);
    const detail = ((await res.json()) as { detail: { loc: unknown[]; msg: string; type: string }[] }).detail;
    t.deepEqual(
      detail.map((d) => d.loc),
      [['body', 'files', 1]],
      `name ${i}`,
    );
    t.regex(detail[0]!.msg, /files\[1\] contains a control character/);
  }
  t.is((await storedSources(user.id)).length, 0, 'the good file of each request was not stored');
});

test('an upload takes at most 50 tags (repeated or comma-separated): more is 422 naming tags, and nothing is stored', async (t) => {
  const { user, token } = await athlete();
  const file = { name: 'ride.csv', bytes: new TextEncoder().encode('timestamp,power\n2026-04-01T08:00:00Z,200\n') };
  const many = Array.from({ length: 51 }, (_, i) => `t${i}`);
  for (const tags of [
    many.join(','),
    [many.slice(0, 30).join(','), many.slice(30).join(',')],
    Array.from({ length: 5000 }, (_, i) => `x${i}`).join(','),
  ]) {
    const res = await upload(service, token, [file], { sport: 'cycling', tags });
    t.is(res.status, 422);
    t.deepEqual(res.body.detail[0].loc, ['body', 'tags']);
    t.regex(res.body.detail[0].msg, /at most 50 tags/);
    t.is(res.body.detail.length, 1, 'one item, not one per tag');
  }
  // 51 tag fields: past the form's 50 fields, refused by the multipart reader itself.
  const fields = await upload(service, token, [file], { sport: 'cycling', tags: many });
  t.is(fields.status, 422);
  t.regex(fields.body.detail[0].msg, /Too many or too large form fields/);
  t.is((await storedSources(user.id)).length, 0);
  const fifty = await upload(service, token, [file], { sport: 'cycling', tags: many.slice(0, 50).join(',') });
  t.is(fifty.status, 202, JSON.stringify(fifty.body));
});

test("a malformed multipart body is 422 in our words, not the parser's", async (t) => {
  const { token } = await athlete();
  const { body } = multipartBody(
    [{ name: 'files', filename: 'ride.csv', data: 'timestamp,power\n2026-04-01T08:00:00Z,200\n' }],
    'right-boundary',
  );
  for (const [what, contentType, sent] of [
    ['another boundary', 'multipart/form-data; boundary=wrong-boundary', body],
    ['a body cut short', 'multipart/form-data; boundary=right-boundary', body.subarray(0, 60)],
    ['no boundary', 'multipart/form-data', body],
  ] as const) {
    const res = await fetch(`${service.url}/api/v1/activities/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
      body: sent,
    });
    t.true(res.status === 422 || res.status === 400, `${what}: ${res.status}`);
    const detail = JSON.stringify(((await res.json()) as { detail: unknown }).detail);
    t.notRegex(detail, /MultipartParser|state =|formidable|stream ended unexpectedly/i, `${what}: ${detail}`);
  }
});

// No memory assertion: in this process (API, workers, engine threads, the client) RSS moved by 13–28 MiB
// for 40 MiB decompressed with streaming and 27–41 MiB without, too close to tell apart reliably.
test('gzip uploads are checked and stored streaming: the stored original is the decompressed content with its sha256', async (t) => {
  const { user, token } = await athlete();
  const limit = service.config.UPLOAD_MAX_FILE_BYTES;
  // Ten files, each inflating to just under the limit.
  const row = (s: number) =>
    `2026-04-01T${String(Math.floor(s / 3600) % 24).padStart(2, '0')}:${String(Math.floor(s / 60) % 60).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}Z,200\n`;
  const contents = Array.from({ length: 10 }, (_, i) => {
    const header = `timestamp,power\n${row(i)}`;
    return Buffer.concat([Buffer.from(header), Buffer.alloc(limit - header.length - 1, ' ')]);
  });
  const files = contents.map((c, i) => ({ name: `big-${i}.csv.gz`, bytes: gzipSync(c) }));
  const res = await upload(service, token, files, { sport: 'cycling' });
  t.is(res.status, 202, JSON.stringify(res.body));
  const rows = await service.deps.db
    .selectFrom('sources')
    .select(['id', 'content_sha256', 'size_bytes', 'filename'])
    .where('user_id', '=', user.id)
    .execute();
  t.is(rows.length, 10);
  for (const [i, source] of res.body.sources.entries()) {
    const row = rows.find((r) => r.id === source.id)!;
    t.is(row.filename, `big-${i}.csv`);
    t.is(row.size_bytes, contents[i]!.length);
    t.is(row.content_sha256, createHash('sha256').update(contents[i]!).digest('hex'));
    t.true(readFileSync(join(service.config.DATA_DIR, 'users', user.id, 'sources', `${source.id}.csv`)).equals(contents[i]!));
  }
});

/** Bytes under `dir`, recursively (0 before it exists). */
function bytesUnder(dir: string): number {
  let total = 0;
  if (!existsSync(dir)) return 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true }))
    if (entry.isFile()) total += statSync(join(entry.parentPath, entry.name), { throwIfNoEntry: false })?.size ?? 0;
  return total;
}

// Serial: it measures DATA_DIR/tmp, which a concurrent upload of another test would add to.
test.serial(
  'an over-size file is refused as its bytes pass the limit: 413 while it is still being sent, never much more than the limit on disk',
  async (t) => {
    const { user, token } = await athlete();
    const limit = service.config.UPLOAD_MAX_FILE_BYTES;
    const tmp = join(service.config.DATA_DIR, 'tmp');
    const boundary = 'over-size-boundary';
    // Chunked (no Content-Length), so only the bytes themselves can tell.
    const req = http.request(`${service.url}/api/v1/activities/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
    });
    const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
      req.on('response', (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      req.on('error', reject);
    });
    let answered = false;
    void answer.then(
      () => (answered = true),
      () => (answered = true),
    );
    req.write(`--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="big.csv"\r\nContent-Type: text/csv\r\n\r\n`);
    const chunk = Buffer.alloc(256 * 1024, 'x');
    let sent = 0;
    let most = 0;
    // Send until two chunks past the limit, slowly enough to watch the temporary directory; then send
    // nothing more: the answer must come while the body is still open (however loaded the machine).
    while (!answered && sent < limit + 2 * chunk.length) {
      await new Promise<void>((resolve) => req.write(chunk, () => resolve()));
      sent += chunk.length;
      await new Promise((resolve) => setTimeout(resolve, 5));
      most = Math.max(most, bytesUnder(tmp));
    }
    for (const deadline = Date.now() + 15_000; !answered && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      most = Math.max(most, bytesUnder(tmp));
    }
    t.true(answered, `no answer within 15 s after ${sent} bytes of a body still being sent (limit ${limit})`);
    req.end(`\r\n--${boundary}--\r\n`);
    const res = await answer;
    t.is(res.status, 413, res.body);
    t.regex(JSON.parse(res.body).detail, /bytes/);
    t.true(most <= limit + 1024 * 1024, `the temporary directory held ${most} bytes (limit ${limit})`);
    t.is((await storedSources(user.id)).length, 0);
  },
);

test('a declared Content-Length beyond what the files may add up to is 413 before the body is read', async (t) => {
  const { token } = await athlete();
  const declared = 10 * service.config.UPLOAD_MAX_FILE_BYTES + 2 * 1024 * 1024;
  const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = http.request(
      `${service.url}/api/v1/activities/upload`,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'multipart/form-data; boundary=x',
          'content-length': String(declared),
        },
      },
      (r) => {
        let body = '';
        r.on('data', (c) => (body += c));
        r.on('end', () => resolve({ status: r.statusCode!, body }));
      },
    );
    req.on('error', reject);
    req.write('--x\r\n'); // and nothing more: the answer must not wait for the body
  });
  t.is(res.status, 413);
  t.regex(JSON.parse(res.body).detail, /larger than/);
});

test("upload and source auth: no token 401, read-only 403, write-only may upload, another user's source is 404", async (t) => {
  const one = [{ name: 'a.csv', bytes: csv('timestamp,power\n2026-02-01T00:00:00Z,1\n') }];
  const anonymous = await fetch(`${service.url}/api/v1/activities/upload`, { method: 'POST', body: new FormData() });
  t.is(anonymous.status, 401);
  const reader = await athlete(['data:read']);
  const refused = await upload(service, reader.token, one, { sport: 'rowing' });
  t.is(refused.status, 403);
  t.regex(refused.headers.get('www-authenticate') ?? '', /insufficient_scope/);
  const writer = await athlete(['data:write']);
  const accepted = await upload(service, writer.token, one, { sport: 'rowing' });
  t.is(accepted.status, 202);
  t.like(accepted.body.sources[0], {
    type: 'csv',
    origin: 'manual_upload',
    filename: 'a.csv',
    status: 'processing',
    error: null,
    activity_ids: [],
  });
  t.regex(accepted.body.sources[0].created_at, /Z$/);
  t.is((await api(service, writer.token, 'GET', `/api/v1/sources/${accepted.body.sources[0].id}`)).status, 403, 'reading needs data:read');
  const other = await athlete();
  t.is((await api(service, other.token, 'GET', `/api/v1/sources/${accepted.body.sources[0].id}`)).status, 404);
  t.is((await api(service, other.token, 'GET', '/api/v1/sources/not-a-uuid')).status, 404);
  const mine = await tokenFor(service, writer.user, ['data:read']);
  const list = await api(service, mine, 'GET', '/api/v1/sources/');
  t.is(list.status, 200);
  t.is(list.body.length, 1);
});
