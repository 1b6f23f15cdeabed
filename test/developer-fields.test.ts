import test from 'ava';
import { leanDecodes, parseFit } from '../engine/ingest/fit.ts';
import { ingestFile } from '../engine/ingest/ingest.ts';
import type { IngestResult } from '../engine/ingest/ingested.ts';
import type { Recording } from '../engine/ingest/recording.ts';
import { buildActivityFit, fitSeconds, type DeveloperFieldSpec, type RecordFields } from './helpers/fit-builder.ts';
import { FitWriter } from './helpers/fit-writer.ts';

/**
 * Developer fields (engine/ingest/developer-fields.ts) in the layouts real devices write: mapped by
 * native field number, then by name; the native field winning per record; one field per channel;
 * CORE's Moxy compatibility field not taken as SmO2.
 */

const START = new Date('2024-07-01T07:00:00Z');
const UINT8 = 0x02;
const UINT16 = 0x84;
const _FLOAT32 = 0x88;

/** A watch's run without power (heart rate, speed, distance, cadence). */
const watchRun = (i: number): RecordFields => ({ heartRate: 150 + (i % 5), speed: 3.2, distance: i * 3.2, cadence: 85 });

async function parseRun(
  developerFields: DeveloperFieldSpec[],
  record: (i: number) => RecordFields = watchRun,
  seconds = 60,
): Promise<Recording> {
  const bytes = buildActivityFit({ sessions: [{ sport: 'running', start: START, seconds, record, developerFields }] });
  const [rec, ...rest] = await parseFit(bytes);
  if (!rec || rest.length > 0) throw new Error('expected one recording');
  return rec;
}

const values = (rec: Recording, channel: keyof Recording['channels']) => Array.from(rec.channels[channel] ?? []);
const seq = (n: number, f: (i: number) => number) => Array.from({ length: n }, (_, i) => f(i));
const near = (a: number[], b: number[]) =>
  a.length === b.length && a.every((v, i) => (Number.isNaN(v) && Number.isNaN(b[i]!)) || Math.abs(v - b[i]!) < 1e-4);

/** Stryd's Connect IQ fields as the app describes them: Power is the record's power (native 7). */
const stryd = (power: (i: number) => number | undefined): DeveloperFieldSpec[] => [
  { name: 'Power', units: 'Watts', baseType: UINT16, nativeFieldNum: 7, value: power },
  { name: 'Form Power', units: 'Watts', baseType: UINT16, value: () => 80 },
  { name: 'Leg Spring Stiffness', units: 'KN/m', value: () => 11.5 },
  { name: 'Air Power', units: 'Watts', baseType: UINT16, value: () => 3 },
];

test('Stryd: the developer field Power (native 7, Watts) is the power channel', async (t) => {
  const rec = await parseRun(stryd((i) => 250 + (i % 20)));
  t.deepEqual(
    values(rec, 'power'),
    seq(60, (i) => 250 + (i % 20)),
  );
  t.deepEqual(
    Object.keys(rec.channels).sort(),
    ['cadence', 'distance', 'heart_rate', 'power', 'speed'],
    'Form Power, Leg Spring Stiffness, Air Power are no channel',
  );
  t.false(
    leanDecodes(
      buildActivityFit({
        sessions: [{ sport: 'running', start: START, seconds: 10, record: watchRun, developerFields: stryd(() => 250) }],
      }),
    ),
    'the library path decodes it',
  );
});

test('Stryd beside a native power meter: the native value wins in each record that has one', async (t) => {
  const rec = await parseRun(
    stryd((i) => 250 + i),
    (i) => ({ ...watchRun(i), ...(i % 3 === 0 ? { power: 180 } : {}) }),
  );
  t.deepEqual(
    values(rec, 'power'),
    seq(60, (i) => (i % 3 === 0 ? 180 : 250 + i)),
  );
});

test('Stryd through ingestFile: power is a metric with its summary and a power curve', async (t) => {
  const bytes = buildActivityFit({
    sessions: [{ sport: 'running', start: START, seconds: 600, record: watchRun, developerFields: stryd((i) => 240 + (i % 21)) }],
  });
  const result: IngestResult = await ingestFile({ format: 'fit', bytes, sport: null });
  if (!result.ok) return t.fail(`${result.code}: ${result.message}`);
  const [run] = result.activities;
  t.true(run!.metrics.includes('power'), run!.metrics.join(', '));
  const power = seq(600, (i) => 240 + (i % 21));
  t.is(run!.summary.power?.max, 260);
  t.true(Math.abs((run!.summary.power?.mean ?? Number.NaN) - power.reduce((a, b) => a + b) / 600) < 1e-9, 'the mean of the Stryd values');
  const curve = run!.curves.find((c) => c.metric === 'power');
  t.truthy(curve?.levelDuration, 'a value-indexed power curve');
  t.is(curve!.levelDuration!.length, 260, 'its top level is the peak');
});

test('Moxy: currHemoPerc (native 57, %) is smo2, THb is not; SmO2 without a native number is smo2 by its name', async (t) => {
  const moxy = await parseRun([
    { name: 'currHemoPerc', units: '%', nativeFieldNum: 57, value: (i) => 60 + (i % 10) / 2 },
    { name: 'THb', units: 'g/dl', nativeFieldNum: 54, value: () => 12.3 },
  ]);
  t.true(
    near(
      values(moxy, 'smo2'),
      seq(60, (i) => 60 + (i % 10) / 2),
    ),
  );
  t.false('temperature' in moxy.channels);

  const byName = await parseRun([
    { name: 'SmO2', units: '%', value: (i) => (i % 2 ? 55 : undefined) },
    { name: 'THb', units: 'g/dl', value: () => 12.3 },
  ]);
  t.deepEqual(
    values(byName, 'smo2'),
    seq(60, (i) => (i % 2 ? 55 : Number.NaN)),
  );
  t.deepEqual(Object.keys(byName.channels).sort(), ['cadence', 'distance', 'heart_rate', 'smo2', 'speed']);
});

/** The CORE app's fields: core temperature (139) and, for Moxy compatibility, the same × 10 as saturated_hemoglobin_percent (57). */
const core = (celsius: (i: number) => number): DeveloperFieldSpec[] => [
  { name: 'core_temperature', units: '°C', nativeFieldNum: 139, value: celsius },
  { name: 'skin_temperature', units: '°C', value: () => 33.1 },
  { name: 'core_data_quality', units: 'Q', baseType: UINT8, value: () => 4 },
  { name: 'saturated_hemoglobin_percent', units: '%', baseType: UINT16, nativeFieldNum: 57, value: (i) => Math.round(celsius(i) * 10) },
];

test("CORE's Moxy compatibility: core temperature is taken, its ×10 copy in saturated_hemoglobin_percent is not smo2", async (t) => {
  const rec = await parseRun(core((i) => 37.2 + i / 100));
  t.true(
    near(
      values(rec, 'core_temperature'),
      seq(60, (i) => 37.2 + i / 100),
    ),
    'float32 values',
  );
  t.false('smo2' in rec.channels);
  t.false('temperature' in rec.channels, 'skin temperature is no channel');
});

test('CORE beside a native Moxy: smo2 is the native field, not the CORE app field that fit-file-parser puts under the same name', async (t) => {
  const rec = await parseRun(
    core(() => 37.5),
    (i) => ({ ...watchRun(i), ...(i < 30 ? { saturatedHemoglobinPercent: 62.5 } : {}) }),
  );
  t.deepEqual(
    values(rec, 'smo2'),
    seq(60, (i) => (i < 30 ? 62.5 : Number.NaN)),
  );
  t.true(
    near(
      values(rec, 'core_temperature'),
      seq(60, () => 37.5),
    ),
  );
});

test('CORE in °F: converted to °C', async (t) => {
  const rec = await parseRun([{ name: 'core_temperature', units: '°F', nativeFieldNum: 139, value: () => 99.5 }]);
  t.true(
    near(
      values(rec, 'core_temperature'),
      seq(60, () => 37.5),
    ),
  );
});

test('a separate Moxy app (its own developer_data_index) beside CORE: both are taken', async (t) => {
  const rec = await parseRun([
    ...core(() => 37.5),
    { name: 'SmO2', units: '%', developerDataIndex: 1, nativeFieldNum: 57, value: () => 48 },
  ]);
  t.deepEqual(
    values(rec, 'smo2'),
    seq(60, () => 48),
  );
  t.true(
    near(
      values(rec, 'core_temperature'),
      seq(60, () => 37.5),
    ),
  );
});

test('two apps writing power under the same name: one is chosen for the whole file (the most values), never mixed', async (t) => {
  const fewer: DeveloperFieldSpec = {
    name: 'Power',
    units: 'Watts',
    baseType: UINT16,
    nativeFieldNum: 7,
    developerDataIndex: 0,
    value: (i) => (i < 40 ? 300 + i : undefined),
  };
  const more: DeveloperFieldSpec = {
    name: 'Power',
    units: 'W',
    baseType: UINT16,
    nativeFieldNum: 7,
    developerDataIndex: 1,
    value: (i) => (i >= 10 ? 400 + i : undefined),
  };
  const rec = await parseRun([fewer, more]);
  t.deepEqual(
    values(rec, 'power'),
    seq(60, (i) => (i >= 10 ? 400 + i : Number.NaN)),
    'app 1 (50 values) over app 0 (40)',
  );

  const tie = await parseRun([
    { ...more, value: (i) => 400 + i },
    { ...fewer, value: (i) => 300 + i },
  ]);
  t.deepEqual(
    values(tie, 'power'),
    seq(60, (i) => 300 + i),
    'a tie: the lower developer_data_index',
  );

  const sameApp = await parseRun([
    { name: 'Power', units: 'W', baseType: UINT16, nativeFieldNum: 7, fieldNumber: 5, value: (i) => 500 + i },
    { name: 'Running Power', units: 'W', baseType: UINT16, fieldNumber: 2, value: (i) => 600 + i },
  ]);
  t.deepEqual(
    values(sameApp, 'power'),
    seq(60, (i) => 600 + i),
    'a tie in one app: the lower field_definition_number',
  );
});

test('a developer field named like the native one (power) fills only the records without native power', async (t) => {
  const rec = await parseRun([{ name: 'power', units: 'W', baseType: UINT16, value: (i) => 900 + i }], (i) => ({
    ...watchRun(i),
    ...(i % 2 ? { power: 200 } : {}),
  }));
  t.deepEqual(
    values(rec, 'power'),
    seq(60, (i) => (i % 2 ? 200 : 900 + i)),
  );
});

test('respiration rate: native 108 or 99 (brpm), or by name', async (t) => {
  const enhanced = await parseRun([{ name: 'Respiration Rate', units: 'brpm', nativeFieldNum: 108, value: (i) => 30 + (i % 4) / 4 }]);
  t.deepEqual(
    values(enhanced, 'respiration_rate'),
    seq(60, (i) => 30 + (i % 4) / 4),
  );
  const plain = await parseRun([{ name: 'RR', units: 'breaths/min', baseType: UINT8, nativeFieldNum: 99, value: () => 28 }]);
  t.deepEqual(
    values(plain, 'respiration_rate'),
    seq(60, () => 28),
  );
  const named = await parseRun([{ name: 'Breathing Rate', units: '', value: () => 26 }]);
  t.deepEqual(
    values(named, 'respiration_rate'),
    seq(60, () => 26),
  );
});

test('units: converted where they differ (spm cadence halved, km/h speed) and a contradicting unit means the field is not taken', async (t) => {
  const rec = await parseRun(
    [
      { name: 'Cadence', units: 'spm', nativeFieldNum: 4, value: () => 172 },
      { name: 'Speed', units: 'km/h', nativeFieldNum: 6, value: () => 36 },
    ],
    (i) => ({ heartRate: 150 + (i % 5) }),
  );
  t.deepEqual(
    values(rec, 'cadence'),
    seq(60, () => 86),
  );
  t.true(
    near(
      values(rec, 'speed'),
      seq(60, () => 10),
    ),
  );

  const contradicted = await parseRun([
    { name: 'Power', units: 'kJ', baseType: UINT16, nativeFieldNum: 7, value: () => 250 },
    { name: 'core_temperature', units: '%', nativeFieldNum: 139, value: () => 37 },
    { name: 'Power', units: '', baseType: UINT16, developerDataIndex: 1, value: () => 260 },
    { name: 'SmO2', units: 'g/dl', developerDataIndex: 2, value: () => 50 },
  ]);
  t.deepEqual(
    Object.keys(contradicted.channels).sort(),
    ['cadence', 'distance', 'heart_rate', 'speed'],
    'kJ is not power, % not a temperature; a bare Power by name has no W; SmO2 in g/dl is not %',
  );
});

test('a native file without developer fields: unchanged, and decoded by the lean path', async (t) => {
  const bytes = buildActivityFit({ sessions: [{ sport: 'cycling', start: START, seconds: 60 }] });
  t.true(leanDecodes(bytes));
  const [lean] = await parseFit(bytes);
  const [library] = await parseFit(bytes, { decoder: 'library' });
  t.deepEqual(lean, library);
  t.deepEqual(Object.keys(lean!.channels).sort(), ['cadence', 'distance', 'heart_rate', 'power', 'speed']);
  t.deepEqual(
    values(lean!, 'power'),
    seq(60, (i) => 200 + (i % 50)),
  );
});

// ─── Hand-written: big-endian records, compressed timestamps ────────────────────────────────────

const le = (v: number, n: number) => Array.from({ length: n }, (_, i) => Math.floor(v / 2 ** (8 * i)) & 0xff);
const be = (v: number, n: number) => le(v, n).reverse();
const text = (s: string, n: number) => [...new TextEncoder().encode(s), ...Array(n).fill(0)].slice(0, n);
const UINT32 = 0x86;
const ENUM = 0x00;
const STRING = 0x07;
const BYTE = 0x0d;

test('big-endian records and compressed timestamps (as a Karoo and older devices write them): each record its own value', async (t) => {
  const t0 = fitSeconds(START);
  const w = new FitWriter()
    .define(0, 18, [
      [253, 4, UINT32],
      [2, 4, UINT32],
      [7, 4, UINT32],
      [5, 1, ENUM],
    ])
    .define(1, 207, [
      [0, 16, BYTE],
      [3, 1, UINT8],
    ])
    .data(1, ...seq(16, (i) => i + 1), 0)
    .define(2, 206, [
      [0, 1, UINT8],
      [1, 1, UINT8],
      [2, 1, UINT8],
      [3, 8, STRING],
      [8, 8, STRING],
      [14, 2, UINT16],
      [15, 1, UINT8],
    ])
    .data(2, 0, 0, UINT16, ...text('Power', 8), ...text('Watts', 8), ...le(20, 2), 7)
    // Big-endian records with a timestamp; little-endian ones with a compressed one, their definition
    // without a timestamp field (the FIT way) or with one that the message leaves out (which
    // fit-file-parser accepts, skipping the field).
    .define(
      3,
      20,
      [
        [253, 4, UINT32],
        [3, 1, UINT8],
      ],
      { bigEndian: true, developer: [[0, 2, 0]] },
    )
    .define(1, 20, [[3, 1, UINT8]], { developer: [[0, 2, 0]] })
    .define(
      2,
      20,
      [
        [253, 4, UINT32],
        [3, 1, UINT8],
      ],
      { developer: [[0, 2, 0]] },
    );
  for (let i = 0; i < 4; i++) w.data(3, ...be(t0 + i, 4), 140, ...be(300 + i, 2));
  for (let i = 4; i < 8; i++) w.compressed(1, t0 + i, 141, ...le(300 + i, 2));
  for (let i = 8; i < 12; i++) w.compressed(2, t0 + i, 142, ...le(300 + i, 2));
  w.data(0, ...le(t0 + 12, 4), ...le(t0, 4), ...le(12_000, 4), 1);
  const [rec] = await parseFit(w.finish());
  t.deepEqual(
    Array.from(rec!.timestamps),
    seq(12, (i) => START.getTime() + i * 1000),
  );
  t.deepEqual(
    values(rec!, 'power'),
    seq(12, (i) => 300 + i),
  );
  t.deepEqual(
    values(rec!, 'heart_rate'),
    seq(12, (i) => 140 + Math.floor(i / 4)),
  );
});
