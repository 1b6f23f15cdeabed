/**
 * Implausible samples end to end, as a client sees them: a ride with four 21,733 W glitch samples and
 * one 251 bpm heart rate is uploaded and processed; its details count them, its sample file (read
 * through /data and from disk with an independent Parquet reader) has them as nulls, and its summary,
 * laps and stored curves (mean-max, AWD, the longitudinal value-indexed curve) start at the real peak.
 * The original file downloads byte for byte as uploaded. A clean ride reports `{}`.
 */
import test from 'ava';
import { readFileSync } from 'node:fs';
import { sampleKey } from '../lib/object-store.ts';
import { objectFile } from '../lib/object-store-local.ts';
import { api, uploadAndWait } from './helpers/activities.ts';
import { get, getFrame, readParquet } from './helpers/curves.ts';
import { buildActivityFit } from './helpers/fit-builder.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestUser, tokenFor } from './helpers/users.ts';

const START = Date.parse('2024-05-01T08:00:00Z');
const SECONDS = 600;
const SPIKES = new Set([100, 101, 400, 500]);
const SPIKE_W = 21733;
const PEAK_W = 1150; // a real 10 s sprint from 300 s

/** Power of second i as the ride really was (what the spikes hide). */
const realPower = (i: number) => (i >= 300 && i < 310 ? PEAK_W : 200 + (i % 50));
const heartRate = (i: number) => 120 + (i % 30);

const rideFit = buildActivityFit({
  sessions: [
    {
      sport: 'cycling',
      start: new Date(START),
      seconds: SECONDS,
      laps: 2,
      record: (i) => ({
        power: SPIKES.has(i) ? SPIKE_W : realPower(i),
        heartRate: i === 200 ? 251 : heartRate(i),
        cadence: 90,
        speed: 9,
        distance: i * 9,
      }),
    },
  ],
});
const cleanFit = buildActivityFit({ sessions: [{ sport: 'cycling', start: new Date(START + 86_400_000), seconds: 120 }] });

let service: TestService;
let token: string;
let userId: string;
let ride: string;
let clean: string;

test.before(async () => {
  service = await startTestService({ workers: true });
  const user = await createTestUser(service);
  userId = user.id;
  token = await tokenFor(service, user, ['data:read', 'data:write']);
  const sources = await uploadAndWait(service, token, [
    { name: 'glitchy.fit', bytes: rideFit },
    { name: 'clean.fit', bytes: cleanFit },
  ]);
  for (const s of sources) if (s.status !== 'processed' || s.activity_ids.length !== 1) throw new Error(JSON.stringify(s));
  [ride, clean] = sources.map((s) => s.activity_ids[0]);
});
test.after.always(() => service?.close());

test('the details count the dropped samples per channel; the summary and laps are without them', async (t) => {
  const { status, body } = await api(service, token, 'GET', `/api/v1/activities/${ride}`);
  t.is(status, 200);
  t.deepEqual(body.implausible_samples, { power: 4, heart_rate: 1 });
  t.deepEqual(body.metrics, ['power', 'heart_rate', 'speed', 'cadence', 'distance']);
  t.is(body.summary.power.max, PEAK_W, 'the real peak, not the glitch');
  const kept = Array.from({ length: SECONDS }, (_, i) => i).filter((i) => !SPIKES.has(i));
  t.true(
    Math.abs(body.summary.power.mean - kept.reduce((s, i) => s + realPower(i), 0) / kept.length) < 1e-9,
    'the mean is over the plausible samples',
  );
  t.is(body.summary.heart_rate.max, 149);
  t.deepEqual(
    body.laps.map((l: { power: { max: number } }) => l.power.max),
    [249, PEAK_W],
  );

  const list = await api(service, token, 'GET', '/api/v1/activities/');
  t.false('implausible_samples' in list.body[0], 'lists carry the summary only');
  const latest = await api(service, token, 'GET', '/api/v1/activities/latest');
  t.deepEqual(latest.body.implausible_samples, {}, '/latest is ActivityDetails too (the clean ride is the newer)');
});

test('a file without implausible samples reports {}', async (t) => {
  const { body } = await api(service, token, 'GET', `/api/v1/activities/${clean}`);
  t.deepEqual(body.implausible_samples, {});
  t.is(body.summary.power.max, 249);
});

test('the sample file has the glitches as nulls: through /data and read from disk', async (t) => {
  const expectedPower = Array.from({ length: SECONDS }, (_, i) => (SPIKES.has(i) ? null : realPower(i)));
  const expectedHeart = Array.from({ length: SECONDS }, (_, i) => (i === 200 ? null : heartRate(i)));
  const answer = await getFrame(service, token, `/api/v1/activities/${ride}/data?metrics=power,heart_rate`);
  t.deepEqual(answer.parquet.columns.power, expectedPower);
  t.deepEqual(answer.parquet.columns.heart_rate, expectedHeart);
  t.deepEqual(answer.json.power, expectedPower);

  const bytes = readFileSync(objectFile(service.config.DATA_DIR, sampleKey(userId, ride)));
  const file = await readParquet(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  t.is(file.rows, SECONDS);
  t.deepEqual(file.columns.power, expectedPower, 'the stored Parquet file itself');
  t.deepEqual(file.columns.heart_rate, expectedHeart);
  t.true(
    file.columns.speed!.every((v) => v === 9),
    'other channels of the glitchy records are kept',
  );
});

test('the stored curves start at the real peak: mean-max, AWD, the longitudinal value-indexed curve', async (t) => {
  const mm = await getFrame(service, token, `/api/v1/activities/${ride}/mean-max?durations=1,5,10,20`);
  t.deepEqual(mm.json.duration, [1, 5, 10, 20]);
  t.deepEqual(mm.json.power!.slice(0, 3), [PEAK_W, PEAK_W, PEAK_W]);
  t.true((mm.json.power![3] as number) < PEAK_W);
  t.deepEqual(
    mm.json.start!.slice(0, 3),
    ['2024-05-01T08:05:00Z', '2024-05-01T08:05:00Z', '2024-05-01T08:05:00Z'],
    'the sprint, not a glitch',
  );

  const segmented = await getFrame(service, token, `/api/v1/activities/${ride}/mean-max?durations=1&segmentation=true`);
  t.is(segmented.json.power![0], PEAK_W, 'computed from the sample file, segmented: the same peak');

  const awd = await getFrame(service, token, `/api/v1/activities/${ride}/accumulated-work-duration?metric=power`);
  t.is(awd.json.power![0], PEAK_W, 'the highest AWD level is the real peak');
  t.is(awd.json.duration![0], 10);

  const longitudinal = await get(service, token, '/api/v1/activities/longitudinal-mean-max?sport=cycling&format=json');
  t.is(longitudinal.status, 200);
  const levels = JSON.parse(Buffer.from(longitudinal.bytes).toString('utf8'));
  t.is(Math.max(...(levels.power as number[])), PEAK_W, 'the stored value-indexed curve ends at the real peak');
});

test('the original file downloads byte for byte as uploaded', async (t) => {
  const res = await get(service, token, `/api/v1/activities/${ride}/download`);
  t.is(res.status, 200);
  t.deepEqual(Buffer.from(res.bytes), Buffer.from(rideFit));
});

test('the OpenAPI document describes implausible_samples', async (t) => {
  const { body } = await api(service, undefined, 'GET', '/openapi.json');
  const details = body.components.schemas.ActivityDetails.properties.implausible_samples;
  t.truthy(details);
  const counts = body.components.schemas.ImplausibleSamples;
  t.regex(counts.description, /stored as missing/);
  t.is(counts.properties.power.description, 'Samples below 0 W or above 3000 W');
  t.is(counts.properties.distance.description, 'Samples below 0 m (no ceiling)');
});
