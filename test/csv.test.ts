import test, { type ExecutionContext } from 'ava';
import { parseCsv } from '../engine/ingest/csv.ts';
import { IngestError } from '../engine/ingest/recording.ts';

const csv = (text: string) => new TextEncoder().encode(text);
const values = (a: Float64Array | undefined) => Array.from(a ?? []);
const ms = (iso: string) => Date.parse(iso);

/** The IngestError a CSV text is refused with. */
async function refusal(t: ExecutionContext, text: string | Uint8Array, sport: string | null = 'cycling') {
  const error = await t.throwsAsync(parseCsv(typeof text === 'string' ? csv(text) : text, sport), { instanceOf: IngestError });
  return { code: error?.code, message: error?.message ?? '' };
}

// ─── Happy paths ────────────────────────────────────────────────────────────────────────────────

test('a CSV with offsets: UTC instants, the first row’s offset, metric columns, start and end', async (t) => {
  const rec = await parseCsv(
    csv(
      [
        'timestamp,power,heart_rate,cadence,notes',
        '2026-05-18T17:32:00+02:00,200,120,90,warm',
        '2026-05-18T17:32:01+02:00,210,,91,',
        '2026-05-18T17:32:02.5+02:00,220,125,,x',
      ].join('\n'),
    ),
    'cycling.road',
  );
  t.is(rec.sport, 'cycling.road');
  t.is(rec.utcOffsetSeconds, 7200);
  t.deepEqual(Array.from(rec.timestamps), [ms('2026-05-18T15:32:00Z'), ms('2026-05-18T15:32:01Z'), ms('2026-05-18T15:32:02.500Z')]);
  t.deepEqual(rec.start, new Date('2026-05-18T15:32:00Z'));
  t.deepEqual(rec.end, new Date('2026-05-18T15:32:03.500Z'), 'the last timestamp + 1 s');
  t.deepEqual(Object.keys(rec.channels), ['power', 'heart_rate', 'cadence'], 'notes is not a channel');
  t.deepEqual(values(rec.channels.power), [200, 210, 220]);
  t.deepEqual(values(rec.channels.heart_rate), [120, NaN, 125], 'an empty cell is NaN');
  t.deepEqual(values(rec.channels.cadence), [90, 91, NaN]);
  t.deepEqual(rec.devices, []);
  t.deepEqual(rec.laps, []);
});

test('offset forms: Z, ±hh:mm, ±hhmm, ±hh; the first row’s offset is the activity’s', async (t) => {
  const offsetOf = async (stamp: string) => (await parseCsv(csv(`timestamp,power\n${stamp},1\n`), 'running')).utcOffsetSeconds;
  t.is(await offsetOf('2026-05-18T15:32:00Z'), 0);
  t.is(await offsetOf('2026-05-18T15:32:00z'), 0);
  t.is(await offsetOf('2026-05-18T12:02:00-03:30'), -12600);
  t.is(await offsetOf('2026-05-18T21:17:00+0545'), 20700);
  t.is(await offsetOf('2026-05-18T20:32:00+05'), 18000);
  t.is(await offsetOf('2026-05-18 15:32:00-00:00'), 0, 'a space separator (RFC 3339); −00:00 is 0, not −0');
  const mixed = await parseCsv(csv('timestamp,power\n2026-05-18T17:32:00+02:00,1\n2026-05-18T15:32:01Z,2\n'), 'running');
  t.is(mixed.utcOffsetSeconds, 7200);
  t.deepEqual(Array.from(mixed.timestamps), [ms('2026-05-18T15:32:00Z'), ms('2026-05-18T15:32:01Z')], 'rows compared as instants');
});

test('headers: case-insensitive and trimmed; unknown columns ignored; channels without values dropped', async (t) => {
  const rec = await parseCsv(
    csv(
      ' TimeStamp , Power ,Speed,Distance,Altitude,lactate,Core_Temperature,SmO2\n2024-01-01T00:00:00Z, 250 ,5.5,0,100,2.1,,\n2024-01-01T00:00:01Z,260,5.6,5.6,101,,,\n',
    ),
    'cycling',
  );
  t.deepEqual(Object.keys(rec.channels), ['power', 'speed', 'altitude', 'distance'], 'in CHANNELS order');
  t.deepEqual(values(rec.channels.power), [250, 260], 'cells trimmed');
  t.deepEqual(values(rec.channels.speed), [5.5, 5.6]);
});

test('numbers: signs, fractions and exponents', async (t) => {
  const rec = await parseCsv(
    csv('timestamp,altitude,temperature\n2024-01-01T00:00:00Z,-12.5,+3\n2024-01-01T00:00:01Z,.5,1e1\n2024-01-01T00:00:02Z,7.,2.5E-1\n'),
    'hiking',
  );
  t.deepEqual(values(rec.channels.altitude), [-12.5, 0.5, 7]);
  t.deepEqual(values(rec.channels.temperature), [3, 10, 0.25]);
});

test('sport: the form field, else the first non-empty sport cell; normalised', async (t) => {
  const file = csv(
    'timestamp,sport,power\n2024-01-01T00:00:00Z,,1\n2024-01-01T00:00:01Z,Cycling.Trainer,2\n2024-01-01T00:00:02Z,running,3\n',
  );
  t.is((await parseCsv(file, null)).sport, 'cycling+stationary', 'the first non-empty cell, legacy name normalised');
  t.is((await parseCsv(file, '')).sport, 'cycling+stationary', 'an empty form field is no form field');
  t.is((await parseCsv(file, 'running.treadmill')).sport, 'running+stationary', 'the form field wins, normalised');
  t.is((await parseCsv(file, 'cross_country_skiing.skate')).sport, 'xc_skiing.skate');
  const noColumn = csv('timestamp,power\n2024-01-01T00:00:00Z,1\n');
  t.is((await parseCsv(noColumn, 'unknown')).sport, 'generic');
});

test('a lap column: laps split where its value changes', async (t) => {
  const rows = [
    ['2024-01-01T00:00:00Z', ''], // before the first label: the first lap
    ['2024-01-01T00:00:01Z', '1'],
    ['2024-01-01T00:00:02Z', ''], // empty: the current lap goes on
    ['2024-01-01T00:00:03Z', '1'],
    ['2024-01-01T00:00:04Z', 'B'],
    ['2024-01-01T00:00:05Z', 'B'],
    ['2024-01-01T00:00:06Z', '1'], // a label seen before, after another: a new lap
  ];
  const rec = await parseCsv(csv(`timestamp,power,Lap\n${rows.map(([ts, lap]) => `${ts},100,${lap}`).join('\n')}\n`), 'cycling');
  t.deepEqual(
    rec.laps.map((l) => [l.start.toISOString(), l.end.toISOString()]),
    [
      ['2024-01-01T00:00:00.000Z', '2024-01-01T00:00:04.000Z'],
      ['2024-01-01T00:00:04.000Z', '2024-01-01T00:00:06.000Z'],
      ['2024-01-01T00:00:06.000Z', '2024-01-01T00:00:07.000Z'],
    ],
  );
  t.false('lap' in rec.channels);
  const single = await parseCsv(csv('timestamp,lap,power\n2024-01-01T00:00:00Z,1,5\n2024-01-01T00:00:01Z,1,5\n'), 'cycling');
  t.is(single.laps.length, 1, 'one label: one lap spanning the activity');
  const empty = await parseCsv(csv('timestamp,lap,power\n2024-01-01T00:00:00Z,,5\n'), 'cycling');
  t.deepEqual(empty.laps, [], 'a lap column without labels: no laps');
});

test('a BOM, CRLF line ends and blank lines', async (t) => {
  const rec = await parseCsv(csv('\uFEFFtimestamp,power\r\n\r\n2024-01-01T00:00:00Z,100\r\n2024-01-01T00:00:01Z,200\r\n\r\n'), 'cycling');
  t.deepEqual(values(rec.channels.power), [100, 200]);
  const crlfError = await refusal(t, '\uFEFFtimestamp,power\r\n2024-01-01T00:00:00Z,100\r\n\r\n2024-01-01T00:00:01Z,abc\r\n');
  t.deepEqual(
    crlfError,
    { code: 'csv_bad_number', message: 'line 4, column power: "abc" is not a number.' },
    'lines counted across CRLF and blank lines',
  );
});

test('bytes that view part of a larger buffer, and a file larger than the 64 KiB chunks', async (t) => {
  // Lap labels in pairs, full of multi-byte characters: a label decoded wrongly where a chunk
  // boundary splits a character would start an extra lap.
  const rows = Array.from(
    { length: 20_000 },
    (_, i) => `${new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString()},${i % 500},"é€${i >> 1}ü€"`,
  );
  const text = csv(`timestamp,power,lap\n${rows.join('\n')}\n`);
  const padded = new Uint8Array(text.length + 16);
  padded.set(text, 8);
  const rec = await parseCsv(padded.subarray(8, 8 + text.length), 'cycling');
  t.is(rec.timestamps.length, 20_000);
  t.is(rec.channels.power![19_999], 19_999 % 500);
  t.is(rec.laps.length, 10_000);
  t.deepEqual(rec.end, new Date(Date.UTC(2024, 0, 1) + 20_000 * 1000));
});

// ─── Refusals: each with its own code, and the line (and column) in the message ─────────────────

test('empty_file: no bytes, or only blank lines', async (t) => {
  t.deepEqual(await refusal(t, new Uint8Array(0)), { code: 'empty_file', message: 'The file is empty (0 bytes).' });
  t.is((await refusal(t, '\n\r\n\n')).code, 'empty_file');
  t.is((await refusal(t, '\uFEFF')).code, 'empty_file');
});

test('csv_missing_timestamp: a header without a timestamp column', async (t) => {
  const { code, message } = await refusal(t, 'time,power\n2024-01-01T00:00:00Z,100\n');
  t.is(code, 'csv_missing_timestamp');
  t.regex(message, /^line 1: the header has no timestamp column/);
  t.is((await refusal(t, 'power\n')).code, 'csv_missing_timestamp', 'also without data rows');
});

test('csv_no_data: a header and no rows', async (t) => {
  t.deepEqual(await refusal(t, 'timestamp,power\n'), { code: 'csv_no_data', message: 'The CSV file has a header row but no data rows.' });
  t.is((await refusal(t, 'timestamp,power\r\n\r\n\r\n')).code, 'csv_no_data');
});

test('csv_duplicate_column: a column named twice', async (t) => {
  const { code, message } = await refusal(t, 'timestamp,Power,power\n2024-01-01T00:00:00Z,1,2\n');
  t.is(code, 'csv_duplicate_column');
  t.is(message, 'line 1: the header names the power column twice ("Power" and "power").');
  await t.notThrowsAsync(
    parseCsv(csv('timestamp,notes,notes,power\n2024-01-01T00:00:00Z,a,b,1\n'), 'cycling'),
    'ignored columns may repeat',
  );
});

test('csv_naive_timestamp: an instant without a UTC offset', async (t) => {
  const { code, message } = await refusal(t, 'timestamp,power\n2026-05-18T15:31:59Z,1\n2026-05-18T15:32:00,2\n');
  t.is(code, 'csv_naive_timestamp');
  t.true(message.startsWith('line 3: timestamp "2026-05-18T15:32:00" has no UTC offset'), message);
});

test('csv_invalid_timestamp: not an ISO 8601 date-time, an impossible date, an offset beyond ±14:00, empty', async (t) => {
  const cases: [string, RegExp][] = [
    ['18/05/2026 15:32', /^line 2: timestamp "18\/05\/2026 15:32" is not an ISO 8601 date-time/],
    ['1716046320', /is not an ISO 8601 date-time/],
    ['2026-05-18', /is not an ISO 8601 date-time/],
    ['2026-02-30T10:00:00Z', /is not a valid date and time/],
    ['2025-02-29T10:00:00Z', /is not a valid date and time/],
    ['2026-05-18T24:00:00Z', /is not a valid date and time/],
    ['2026-05-18T10:60:00Z', /is not a valid date and time/],
    ['2026-05-18T10:00:00+15:00', /has a UTC offset beyond ±14:00/],
    ['2026-05-18T10:00:00+02:75', /has a UTC offset beyond ±14:00/],
    ['', /^line 2: the timestamp is empty/],
  ];
  for (const [stamp, pattern] of cases) {
    const { code, message } = await refusal(t, `timestamp,power\n${stamp},1\n`);
    t.is(code, 'csv_invalid_timestamp', stamp);
    t.regex(message, pattern);
  }
  await t.notThrowsAsync(parseCsv(csv('timestamp,power\n2024-02-29T10:00:00Z,1\n'), 'cycling'), 'a leap day');
});

test('csv_unordered_timestamps: timestamps must strictly increase', async (t) => {
  const duplicate = await refusal(t, 'timestamp,power\n2024-01-01T00:00:00Z,1\n2024-01-01T00:00:01Z,2\n2024-01-01T02:00:01+02:00,3\n');
  t.is(duplicate.code, 'csv_unordered_timestamps');
  t.is(
    duplicate.message,
    'line 4: timestamp "2024-01-01T02:00:01+02:00" is not after the previous row\'s "2024-01-01T00:00:01Z" (line 3); timestamps must strictly increase.',
  );
  t.is((await refusal(t, 'timestamp,power\n2024-01-01T00:00:05Z,1\n2024-01-01T00:00:04Z,2\n')).code, 'csv_unordered_timestamps');
});

test('csv_bad_number: a metric cell that is not a finite number, with its line and column', async (t) => {
  t.deepEqual(
    await refusal(
      t,
      'timestamp,heart_rate,power\n2024-01-01T00:00:00Z,100,1\n2024-01-01T00:00:01Z,100,2\n2024-01-01T00:00:02Z,100,3\n2024-01-01T00:00:03Z,100,abc\n',
    ),
    {
      code: 'csv_bad_number',
      message: 'line 5, column power: "abc" is not a number.',
    },
  );
  for (const cell of ['NaN', 'Infinity', '0x10', '1,5', '12 W', '--1']) {
    const { code, message } = await refusal(t, `timestamp,Power\n2024-01-01T00:00:00Z,"${cell}"\n`);
    t.is(code, 'csv_bad_number', cell);
    t.is(message, `line 2, column Power: "${cell}" is not a number.`);
  }
  t.is(
    (await refusal(t, 'timestamp,power\n2024-01-01T00:00:00Z,1e999\n')).message,
    'line 2, column power: "1e999" is not a finite number.',
  );
});

test('csv_missing_sport: no form field and no sport in the file', async (t) => {
  const noColumn = await refusal(t, 'timestamp,power\n2024-01-01T00:00:00Z,1\n', null);
  t.is(noColumn.code, 'csv_missing_sport');
  t.regex(noColumn.message, /sport field or a sport column/);
  t.is(
    (await refusal(t, 'timestamp,sport,power\n2024-01-01T00:00:00Z,,1\n', null)).code,
    'csv_missing_sport',
    'a sport column without values',
  );
  t.is((await refusal(t, 'timestamp,sport,power\n2024-01-01T00:00:00Z,,1\n', '  ')).code, 'csv_missing_sport', 'a blank form field');
});

test('csv_invalid_sport: a sport that is not an OpenSportTaxonomy string', async (t) => {
  const form = await refusal(t, 'timestamp,power\n2024-01-01T00:00:00Z,1\n', 'road cycling');
  t.is(form.code, 'csv_invalid_sport');
  t.true(form.message.startsWith('the upload\'s sport field: "road cycling" is not a sport'), form.message);
  const column = await refusal(t, 'timestamp,Sport,power\n2024-01-01T00:00:00Z,,1\n2024-01-01T00:00:01Z,Cycling!,1\n', null);
  t.is(column.code, 'csv_invalid_sport');
  t.true(column.message.startsWith('line 3, column Sport: "Cycling!" is not a sport'), column.message);
  await t.notThrowsAsync(
    parseCsv(csv('timestamp,sport,power\n2024-01-01T00:00:00Z,Cycling!,1\n'), 'cycling'),
    'the column is not read when the form field gives the sport',
  );
});

test('csv_malformed: what csv-parse refuses, with the line', async (t) => {
  const cases: [string, string][] = [
    ['timestamp,power\n2024-01-01T00:00:00Z,1\n2024-01-01T00:00:01Z,2,3\n', 'line 3'],
    ['timestamp,power\n2024-01-01T00:00:00Z\n', 'line 2'],
    ['timestamp,power\n2024-01-01T00:00:00Z,"1"2\n', 'line 2'],
    ['timestamp,power\n2024-01-01T00:00:00Z,1\n2024-01-01T00:00:01Z,"2\n', 'line 3'],
  ];
  for (const [text, line] of cases) {
    const { code, message } = await refusal(t, text);
    t.is(code, 'csv_malformed', text);
    t.true(message.startsWith(`${line}: the CSV is malformed (`), message);
  }
});
