import test from 'ava';
import fc from 'fast-check';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { leanDecodes, parseFit } from '../engine/ingest/fit.ts';
import { fitCrc, leanDecodeFit } from '../engine/ingest/fit-records.ts';
import { fixturesDir } from './helpers/fixtures.ts';
import { buildActivityFit, fitSeconds } from './helpers/fit-builder.ts';
import { FitWriter } from './helpers/fit-writer.ts';

/**
 * The lean FIT path (engine/ingest/fit-records.ts) against fit-file-parser decoding the whole file
 * (parseFit's `decoder: 'library'`, what every file went through before): the same recordings,
 * bit for bit, or the same refusal.
 */

const FIXTURES = join(fixturesDir(), 'fit');
const fixture = (name: string) => new Uint8Array(readFileSync(join(FIXTURES, name)));

async function outcome(bytes: Uint8Array, decoder: 'lean' | 'library') {
  try {
    return await parseFit(bytes, { decoder });
  } catch (error) {
    return { error: (error as { code?: string }).code ?? String(error), message: (error as Error).message };
  }
}

/** Identical outcomes (typed arrays compared bit for bit: NaN where NaN, −0 where −0). */
async function same(bytes: Uint8Array): Promise<boolean> {
  return isDeepStrictEqual(await outcome(bytes, 'lean'), await outcome(bytes, 'library'));
}

/** Rewrite the file CRC (after the data the header announces), so that a changed file is a valid one. */
function withCrc(bytes: Uint8Array): Uint8Array {
  const end = bytes[0]! + new DataView(bytes.buffer, bytes.byteOffset).getUint32(4, true);
  if (end + 2 > bytes.length) return bytes;
  const crc = fitCrc(bytes, 0, end);
  bytes[end] = crc & 0xff;
  bytes[end + 1] = crc >>> 8;
  return bytes;
}

test('the FIT CRC: the parser rejects a file whose CRC is not this one', async (t) => {
  const bytes = fixture('moxy.fit');
  const end = bytes.length - 2;
  t.is(fitCrc(bytes, 0, end), bytes[end]! | (bytes[end + 1]! << 8));
  t.is(fitCrc(bytes, 0, bytes.length), 0, 'a file followed by its CRC has CRC 0');
});

for (const name of readdirSync(FIXTURES).filter((f) => f.toLowerCase().endsWith('.fit'))) {
  test(`fixture ${name}: the lean path gives exactly fit-file-parser's recordings`, async (t) => {
    const bytes = fixture(name);
    t.truthy(leanDecodeFit(bytes), 'the record walk accepts the file');
    t.true(await same(bytes));
  });
}

test('the lean path decodes the real files, declining those whose developer fields are channels', (t) => {
  const decoded = readdirSync(FIXTURES)
    .filter((f) => f.toLowerCase().endsWith('.fit'))
    .filter((f) => leanDecodes(fixture(f)));
  t.true(decoded.length >= 11, decoded.join(', '));
  const withDeveloperChannels = buildActivityFit({
    sessions: [
      {
        sport: 'cycling',
        start: new Date('2024-07-01T07:00:00Z'),
        seconds: 20,
        developerFields: [{ name: 'core_temperature', units: '°C', value: () => 37.5 }],
      },
    ],
  });
  t.false(leanDecodes(withDeveloperChannels));
  const withOtherDeveloperFields = buildActivityFit({
    sessions: [
      {
        sport: 'cycling',
        start: new Date('2024-07-01T07:00:00Z'),
        seconds: 20,
        developerFields: [{ name: 'Form Power', units: 'Watts', value: () => 80 }],
      },
    ],
  });
  t.true(leanDecodes(withOtherDeveloperFields));
});

test('developer fields on records: channels, skipped ones, a name shared with a native field — same as fit-file-parser', async (t) => {
  const start = new Date('2024-07-01T07:00:00Z');
  for (const developerFields of [
    [{ name: 'Form Power', units: 'Watts', value: () => 80 }],
    [{ name: 'power', units: 'W', value: () => 999 }],
    [{ name: 'SmO2', units: '%', value: (i: number) => 60 + i }],
    [{ name: 'core_temperature', units: '°C', value: (i: number) => (i % 4 ? undefined : 37.5) }],
  ]) {
    const bytes = buildActivityFit({ sessions: [{ sport: 'cycling', start, seconds: 30, developerFields }] });
    t.true(await same(bytes), developerFields[0]!.name);
  }
});

test('property: a real file changed anywhere (its CRC made right again) decodes or fails exactly as with fit-file-parser', async (t) => {
  const files = ['6471559601_ACTIVITY.fit', '2020-06-01-16-52-40.fit', 'moxy.fit', '6449921903_ACTIVITY.fit'].map(fixture);
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 0, max: files.length - 1 }),
      fc.array(fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 0, max: 255 }), fc.boolean()), {
        minLength: 1,
        maxLength: 3,
      }),
      async (which, changes) => {
        const bytes = files[which]!.slice();
        const headerSize = bytes[0]!;
        const dataSize = bytes.length - headerSize - 2;
        for (const [where, value, xor] of changes) {
          const at = headerSize + Math.min(dataSize - 1, Math.floor(where * dataSize));
          bytes[at] = xor ? bytes[at]! ^ (1 << (value % 8)) : value;
        }
        return same(withCrc(bytes));
      },
    ),
    { numRuns: 400, seed: 15 },
  );
  t.pass();
});

// ─── Hand-written record definitions: what the encoder never writes ─────────────────────────────

const le = (v: number, n: number) => Array.from({ length: n }, (_, i) => Math.floor(v / 2 ** (8 * i)) & 0xff);
const be = (v: number, n: number) => le(v, n).reverse();
const T0 = fitSeconds(new Date('2024-03-03T10:00:00Z'));
const UINT8 = 0x02;
const ENUM = 0x00;
const BYTE = 0x0d;
const SINT8 = 0x01;
const UINT16 = 0x84;
const SINT32 = 0x85;
const UINT32 = 0x86;

/** A session of 20 s from T0 (local 0) around whatever records `records` writes (local 1 onwards). */
function activity(records: (w: FitWriter) => FitWriter, headerSize: 12 | 14 = 14): Uint8Array {
  const w = new FitWriter().define(0, 18, [
    [253, 4, UINT32],
    [2, 4, UINT32],
    [7, 4, UINT32],
    [5, 1, ENUM],
  ]);
  records(w);
  w.data(0, ...le(T0 + 20, 4), ...le(T0, 4), ...le(20_000, 4), 2);
  return w.finish(headerSize);
}

test('hand-written records: endianness, base types, sizes, invalid values, duplicates, order — same as fit-file-parser', async (t) => {
  const cases: [string, Uint8Array, boolean][] = [
    [
      'little-endian, every field read',
      activity((w) =>
        w
          .define(1, 20, [
            [253, 4, UINT32],
            [0, 4, SINT32],
            [1, 4, SINT32],
            [2, 2, UINT16],
            [3, 1, UINT8],
            [4, 1, UINT8],
            [5, 4, UINT32],
            [6, 2, UINT16],
            [7, 2, UINT16],
            [13, 1, SINT8],
            [53, 1, UINT8],
            [57, 2, UINT16],
            [73, 4, UINT32],
            [78, 4, UINT32],
            [99, 1, UINT8],
            [108, 2, UINT16],
            [139, 2, UINT16],
          ])
          .data(
            1,
            ...le(T0, 4),
            ...le(607_000_000, 4),
            ...le(-15_000_000 >>> 0, 4),
            ...le(2600, 2),
            140,
            90,
            ...le(12_345, 4),
            ...le(8_123, 2),
            ...le(250, 2),
            0xf6,
            64,
            ...le(655, 2),
            ...le(8_124, 4),
            ...le(2601, 4),
            20,
            ...le(2050, 2),
            ...le(3777, 2),
          )
          .data(
            1,
            ...le(T0 + 1, 4),
            ...le(0x7fffffff, 4),
            ...le(0x7fffffff, 4),
            ...le(0xffff, 2),
            0xff,
            0xff,
            ...le(0xffffffff, 4),
            ...le(0xffff, 2),
            ...le(0xffff, 2),
            0x7f,
            0xff,
            ...le(0xffff, 2),
            ...le(0xffffffff, 4),
            ...le(0xffffffff, 4),
            0xff,
            ...le(0xffff, 2),
            ...le(0xffff, 2),
          ),
      ),
      true,
    ],
    [
      'big-endian',
      activity((w) =>
        w
          .define(
            1,
            20,
            [
              [253, 4, UINT32],
              [0, 4, SINT32],
              [7, 2, UINT16],
              [78, 4, UINT32],
            ],
            { bigEndian: true },
          )
          .data(1, ...be(T0, 4), ...be(-1_000_000 >>> 0, 4), ...be(321, 2), ...be(3000, 4))
          .data(1, ...be(T0 + 2, 4), ...be(1_000_000, 4), ...be(322, 2), ...be(3001, 4)),
      ),
      true,
    ],
    [
      'wire base types: uint16 without the endian bit, heart rate as enum and byte, cadence as uint8z, a float power',
      activity((w) =>
        w
          .define(1, 20, [
            [253, 4, UINT32],
            [7, 2, 0x04],
            [3, 1, ENUM],
            [4, 1, 0x0a],
          ])
          .data(1, ...le(T0, 4), ...le(200, 2), 120, 80)
          .define(2, 20, [
            [253, 4, UINT32],
            [3, 1, BYTE],
            [7, 4, 0x88],
          ])
          .data(2, ...le(T0 + 1, 4), 121, 0, 0, 0x48, 0x43),
      ),
      true,
    ],
    [
      'sizes: power of 4 bytes (first element read), of 3 bytes (invalid), a timestamp of 8 bytes',
      activity((w) =>
        w
          .define(1, 20, [
            [253, 8, UINT32],
            [7, 4, UINT16],
            [3, 3, UINT16],
          ])
          .data(1, ...le(T0, 4), ...le(T0 + 100, 4), ...le(210, 2), ...le(999, 2), 1, 2, 3)
          .define(2, 20, [
            [253, 4, UINT32],
            [7, 3, UINT16],
          ])
          .data(2, ...le(T0 + 1, 4), 1, 2, 3),
      ),
      true,
    ],
    [
      'a field defined twice: the last valid value',
      activity((w) =>
        w
          .define(1, 20, [
            [253, 4, UINT32],
            [7, 2, UINT16],
            [7, 2, UINT16],
            [253, 4, UINT32],
          ])
          .data(1, ...le(T0, 4), ...le(100, 2), ...le(0xffff, 2), ...le(0xffffffff, 4))
          .data(1, ...le(T0 + 1, 4), ...le(100, 2), ...le(101, 2), ...le(T0 + 3, 4)),
      ),
      true,
    ],
    [
      'records out of order, duplicated timestamps, one without a timestamp, interleaved with other messages and a redefinition',
      activity((w) =>
        w
          .define(1, 20, [
            [253, 4, UINT32],
            [7, 2, UINT16],
          ])
          .data(1, ...le(T0 + 5, 4), ...le(5, 2))
          .data(1, ...le(T0 + 2, 4), ...le(2, 2))
          .define(2, 21, [
            [253, 4, UINT32],
            [0, 1, ENUM],
            [1, 1, ENUM],
          ])
          .data(2, ...le(T0 + 3, 4), 0, 0)
          .data(1, ...le(T0 + 2, 4), ...le(22, 2))
          .data(1, ...le(0xffffffff, 4), ...le(7, 2))
          .define(1, 20, [
            [7, 2, UINT16],
            [253, 4, UINT32],
          ])
          .data(1, ...le(9, 2), ...le(T0 + 9, 4)),
      ),
      true,
    ],
    [
      'developer fields on records (a description the file never gives)',
      activity((w) =>
        w
          .define(
            1,
            20,
            [
              [253, 4, UINT32],
              [7, 2, UINT16],
            ],
            { developer: [[0, 2, 0]] },
          )
          .data(1, ...le(T0, 4), ...le(150, 2), 9, 9),
      ),
      true,
    ],
    [
      'a 12-byte header',
      activity(
        (w) =>
          w
            .define(1, 20, [
              [253, 4, UINT32],
              [7, 2, UINT16],
            ])
            .data(1, ...le(T0 + 1, 4), ...le(77, 2)),
        12,
      ),
      true,
    ],
    [
      'a compressed timestamp (declined)',
      activity((w) =>
        w
          .define(1, 20, [
            [253, 4, UINT32],
            [7, 2, UINT16],
          ])
          .data(1, ...le(T0, 4), ...le(1, 2))
          .define(2, 20, [[7, 2, UINT16]])
          .compressed(2, (T0 + 3) & 0x1f, ...le(3, 2)),
      ),
      false,
    ],
    ['a data message without a definition (declined)', activity((w) => w.data(3, 1, 2, 3)), false],
    ['reserved bits in a data header (declined)', activity((w) => w.define(1, 20, [[253, 4, UINT32]]).data(0x11, ...le(T0, 4))), false],
  ];
  for (const [what, bytes, walked] of cases) {
    t.is(leanDecodeFit(bytes) !== undefined, walked, `${what}: walked`);
    const lean = await outcome(bytes, 'lean');
    t.true(
      isDeepStrictEqual(lean, await outcome(bytes, 'library')),
      `${what}: ${JSON.stringify(lean, (_, v) => (ArrayBuffer.isView(v) ? Array.from(v as Float64Array) : v)).slice(0, 300)}`,
    );
  }
});
