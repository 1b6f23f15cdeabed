/**
 * The lean decoding path of FIT files (engine/ingest/fit.ts): the record messages — thousands per
 * file, 1 a second — straight into columns of numbers, and every other message left to
 * fit-file-parser, which then decodes a copy of the file without the records (a few dozen messages
 * instead of thousands). fit-file-parser allocates an object per record, a Date per timestamp and
 * a closure-driven lookup per field; on a 2 h ride that was ~20 ms of its decode plus ~8 ms of
 * reading its objects back and most of the engine threads' garbage collection.
 *
 * Whatever the records decode to is exactly what fit-file-parser (6.1.2, the options fit.ts uses:
 * m/s, m, °C) gives for the record fields the channels read, value for value:
 *
 * - a field counts only when its base type on the wire is the profile's (enum, uint8 and byte
 *   interchange), its size is a whole number of elements (the first element is read), and its
 *   value is not the type's invalid value; of a field defined twice, the last valid value wins;
 * - timestamp: FIT epoch seconds → Unix ms; position: semicircles × 180 / 2³¹; every other field
 *   raw / scale + offset (the unit conversions of those options are × 1 + 0).
 *
 * The path declines (returns undefined, and fit.ts decodes the whole file with fit-file-parser as
 * before) whenever that equivalence is not certain: a header, size or CRC problem (fit-file-parser
 * then reports it in its own words), a compressed-timestamp header (its time depends on the
 * message before), a reserved header bit, a data message without a definition or one running past
 * the data, and — decided by fit.ts once the other messages are decoded — developer fields that
 * may fill channels or whose names collide with the fields read here (engine/ingest/developer-fields.ts).
 * The file CRC is checked here, over every byte, before anything is decoded (the strict check the
 * project relies on).
 */
import { MAX_RECORDS, tooManyRecords } from './limits.ts';

/** The record (global message 20) fields the channels are read from, in FIT profile terms. */
export const RECORD_FIELDS = [
  'timestamp',
  'position_lat',
  'position_long',
  'altitude',
  'heart_rate',
  'cadence',
  'distance',
  'speed',
  'power',
  'temperature',
  'fractional_cadence',
  'saturated_hemoglobin_percent',
  'enhanced_speed',
  'enhanced_altitude',
  'respiration_rate',
  'enhanced_respiration_rate',
  'core_temperature',
] as const;
export type RecordField = (typeof RECORD_FIELDS)[number];

/** Base types read (U8 stands for enum, uint8 and byte, which fit-file-parser interchanges). */
const U8 = 0;
const S8 = 1;
const U16 = 2;
const S32 = 3;
const U32 = 4;
type Base = typeof U8 | typeof S8 | typeof U16 | typeof S32 | typeof U32;
/** How a raw value becomes the parser's number. */
const TIME = 0;
const SEMICIRCLES = 1;
const SCALE = 2;
type Convert = typeof TIME | typeof SEMICIRCLES | typeof SCALE;

interface FieldProfile {
  field: RecordField;
  base: Base;
  convert: Convert;
  scale: number;
  offset: number;
}

/** FIT profile of the record message, for those fields (field number → type, scale, offset), as fit-file-parser 6.1.2 has it. */
const PROFILE = new Map<number, FieldProfile>(
  (
    [
      [253, 'timestamp', U32, TIME, 1, 0],
      [0, 'position_lat', S32, SEMICIRCLES, 1, 0],
      [1, 'position_long', S32, SEMICIRCLES, 1, 0],
      [2, 'altitude', U16, SCALE, 5, -500],
      [3, 'heart_rate', U8, SCALE, 1, 0],
      [4, 'cadence', U8, SCALE, 1, 0],
      [5, 'distance', U32, SCALE, 100, 0],
      [6, 'speed', U16, SCALE, 1000, 0],
      [7, 'power', U16, SCALE, 1, 0],
      [13, 'temperature', S8, SCALE, 1, 0],
      [53, 'fractional_cadence', U8, SCALE, 128, 0],
      [57, 'saturated_hemoglobin_percent', U16, SCALE, 10, 0],
      [73, 'enhanced_speed', U32, SCALE, 1000, 0],
      [78, 'enhanced_altitude', U32, SCALE, 5, -500],
      [99, 'respiration_rate', U8, SCALE, 1, 0],
      [108, 'enhanced_respiration_rate', U16, SCALE, 100, 0],
      [139, 'core_temperature', U16, SCALE, 100, 0],
    ] as const
  ).map(([num, field, base, convert, scale, offset]): [number, FieldProfile] => [num, { field, base, convert, scale, offset }]),
);

/** The wire base-type bytes (FIT fit_base_type, endian bit included) that read as each profile base type. */
const WIRE: Record<Base, readonly number[]> = {
  [U8]: [0x00, 0x02, 0x0d],
  [S8]: [0x01],
  [U16]: [0x84],
  [S32]: [0x85],
  [U32]: [0x86],
};
const ELEMENT_BYTES: Record<Base, number> = { [U8]: 1, [S8]: 1, [U16]: 2, [S32]: 4, [U32]: 4 };
const INVALID: Record<Base, number> = { [U8]: 0xff, [S8]: 0x7f, [U16]: 0xffff, [S32]: 0x7fffffff, [U32]: 0xffffffff };

const FIT_EPOCH_MS = 631065600000;
const SEMICIRCLE_DEGREES = 180 / 2 ** 31;
const RECORD = 20;

/** One field of a record definition that is read: where in the message, how, into which column. */
interface Read {
  at: number;
  base: Base;
  column: number;
  convert: Convert;
  scale: number;
  offset: number;
}

interface Definition {
  /** Bytes of a data message after its header. */
  size: number;
  /** Record definitions only: the fields read, in definition order. */
  reads: Read[] | undefined;
  littleEndian: boolean;
}

/** The record messages' fields, one row per record message in file order; NaN where a record lacks the field. */
export interface RecordTable {
  count: number;
  /** Indexed like RECORD_FIELDS; absent for a field no record definition has. */
  columns: (Float64Array | undefined)[];
}

export interface LeanFit {
  records: RecordTable;
  /** The file without its record data messages (header size and CRCs rewritten), for fit-file-parser. */
  rest: Uint8Array;
}

const CRC_TABLE = (() => {
  // FIT's CRC-16 (polynomial 0xA001, reflected), a byte at a time.
  const table = new Uint16Array(256);
  for (let b = 0; b < 256; b++) {
    let crc = b;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0xa001 : crc >>> 1;
    table[b] = crc;
  }
  return table;
})();

export function fitCrc(bytes: Uint8Array, start: number, end: number): number {
  let crc = 0;
  for (let i = start; i < end; i++) crc = (crc >>> 8) ^ CRC_TABLE[(crc ^ bytes[i]!) & 0xff]!;
  return crc;
}

/** The records as columns and the rest of the file, or undefined when this path declines the file (see the module comment). */
export function leanDecodeFit(bytes: Uint8Array, maxRecords = MAX_RECORDS): LeanFit | undefined {
  const frame = checkedFrame(bytes);
  if (!frame) return undefined;
  const walked = walkMessages(bytes, frame, maxRecords);
  if (!walked) return undefined;
  return { records: walked.records, rest: restOfFile(bytes, frame.headerSize, walked.kept) };
}

/** Where a FIT file's messages lie: after its header, up to its file CRC. */
interface Frame {
  headerSize: number;
  /** The end of the data (the file CRC's first byte). */
  end: number;
  view: DataView;
}

/** The file's frame, its header and file CRC checked, or undefined when either is wrong (fit-file-parser then says how). */
function checkedFrame(bytes: Uint8Array): Frame | undefined {
  const n = bytes.length;
  if (n < 12) return undefined;
  const headerSize = bytes[0]!;
  if ((headerSize !== 12 && headerSize !== 14) || n < headerSize) return undefined;
  if (bytes[8] !== 0x2e || bytes[9] !== 0x46 || bytes[10] !== 0x49 || bytes[11] !== 0x54) return undefined; // ".FIT"
  if (headerSize === 14) {
    const headerCrc = bytes[12]! | (bytes[13]! << 8);
    if (headerCrc !== 0 && headerCrc !== fitCrc(bytes, 0, 12)) return undefined;
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const end = headerSize + view.getUint32(4, true);
  if (end + 2 > n) return undefined;
  if ((bytes[end]! | (bytes[end + 1]! << 8)) !== fitCrc(bytes, 0, end)) return undefined;
  return { headerSize, end, view };
}

/**
 * Every message of the data in file order: definitions remembered, each record read into one row of
 * the columns, every other message (and every definition) kept for the rest of the file, as
 * [from, to) byte ranges (adjacent ones merged). Undefined when the path declines the file.
 */
function walkMessages(bytes: Uint8Array, frame: Frame, maxRecords: number): { records: RecordTable; kept: number[] } | undefined {
  const { end, view } = frame;
  const definitions: (Definition | undefined)[] = new Array(16);
  const kept: number[] = [];
  const columns: (Float64Array | undefined)[] = new Array(RECORD_FIELDS.length);
  let capacity = 0;
  let count = 0;

  let pos = frame.headerSize;
  while (pos < end) {
    const header = bytes[pos]!;
    if (header & 0x80) return undefined; // compressed timestamp
    if (header & 0x40) {
      const defined = readDefinition(bytes, pos, end, header);
      if (!defined) return undefined;
      definitions[header & 0x0f] = defined.definition;
      keepRange(kept, pos, defined.end);
      pos = defined.end;
      continue;
    }
    if (header & 0x30) return undefined; // reserved bits of a data message header: fit-file-parser refuses it
    const definition = definitions[header & 0x0f];
    if (!definition) return undefined;
    const next = pos + 1 + definition.size;
    if (next > end) return undefined;
    if (!definition.reads) {
      keepRange(kept, pos, next);
      pos = next;
      continue;
    }
    // A record: one row.
    if (count === maxRecords) throw tooManyRecords(maxRecords);
    if (count === capacity) {
      capacity = Math.max(1024, capacity * 2, Math.ceil((end - pos) / (1 + definition.size)));
      for (let c = 0; c < columns.length; c++) if (columns[c]) columns[c] = grow(columns[c]!, capacity);
    }
    const base = pos + 1;
    const little = definition.littleEndian;
    for (const read of definition.reads) {
      const raw = readRaw(view, base + read.at, read.base, little);
      if (raw === INVALID[read.base]) continue;
      (columns[read.column] ??= grow(new Float64Array(0), capacity))[count] = physical(read, raw);
    }
    count++;
    pos = next;
  }
  return { records: { count, columns: columns.map((c) => c?.subarray(0, count)) }, kept };
}

/** Add [from, to) to the kept ranges, merged with the last one when adjacent. */
function keepRange(kept: number[], from: number, to: number): void {
  if (kept.length && kept[kept.length - 1] === from) kept[kept.length - 1] = to;
  else kept.push(from, to);
}

/**
 * The definition message at `pos` and where it ends, or undefined when it runs past the data.
 * Layout: reserved, architecture, global number (2), field count, fields (3 bytes each); with the
 * developer flag, a developer field count and fields (3 bytes each).
 */
function readDefinition(bytes: Uint8Array, pos: number, end: number, header: number): { definition: Definition; end: number } | undefined {
  if (pos + 6 > end) return undefined;
  const littleEndian = bytes[pos + 2] === 0;
  const global = littleEndian ? bytes[pos + 3]! | (bytes[pos + 4]! << 8) : (bytes[pos + 3]! << 8) | bytes[pos + 4]!;
  const fieldCount = bytes[pos + 5]!;
  const fieldsAt = pos + 6;
  let definitionEnd = fieldsAt + fieldCount * 3;
  if (definitionEnd > end) return undefined;
  let developerCount = 0;
  if (header & 0x20) {
    if (definitionEnd + 1 > end) return undefined;
    developerCount = bytes[definitionEnd]!;
    definitionEnd += 1 + developerCount * 3;
    if (definitionEnd > end) return undefined;
  }
  let size = 0;
  const reads: Read[] | undefined = global === RECORD ? [] : undefined;
  for (let i = 0; i < fieldCount; i++) {
    const at = fieldsAt + i * 3;
    const fieldSize = bytes[at + 1]!;
    const profile = reads && PROFILE.get(bytes[at]!);
    if (profile) {
      const elementBytes = ELEMENT_BYTES[profile.base];
      if (WIRE[profile.base].includes(bytes[at + 2]!) && fieldSize >= elementBytes && fieldSize % elementBytes === 0) {
        reads!.push({
          at: size,
          base: profile.base,
          column: RECORD_FIELDS.indexOf(profile.field),
          convert: profile.convert,
          scale: profile.scale,
          offset: profile.offset,
        });
      }
    }
    size += fieldSize;
  }
  const developerAt = fieldsAt + fieldCount * 3 + 1;
  for (let i = 0; i < developerCount; i++) size += bytes[developerAt + i * 3 + 1]!;
  return { definition: { size, reads, littleEndian }, end: definitionEnd };
}

/** The rest of the file: its header (data size rewritten, header CRC 0 = not given), the kept messages, a new file CRC. */
function restOfFile(bytes: Uint8Array, headerSize: number, kept: number[]): Uint8Array {
  let restSize = 0;
  for (let i = 0; i < kept.length; i += 2) restSize += kept[i + 1]! - kept[i]!;
  const rest = new Uint8Array(headerSize + restSize + 2);
  rest.set(bytes.subarray(0, headerSize));
  new DataView(rest.buffer).setUint32(4, restSize, true);
  if (headerSize === 14) rest[12] = rest[13] = 0;
  let at = headerSize;
  for (let i = 0; i < kept.length; i += 2) {
    rest.set(bytes.subarray(kept[i]!, kept[i + 1]!), at);
    at += kept[i + 1]! - kept[i]!;
  }
  const crc = fitCrc(rest, 0, at);
  rest[at] = crc & 0xff;
  rest[at + 1] = crc >>> 8;
  return rest;
}

/**
 * One field of a record message as walkMessages reads it: its field name and value, or undefined
 * when it is not one of RECORD_FIELDS, its wire base type or size is not taken, or it holds the
 * invalid value. `at` is the field's first byte; a timestamp is Unix ms. For developer-fields.ts,
 * which restores the native values that a developer field of the same name hides in fit-file-parser's
 * records.
 */
export function recordFieldValue(
  bytes: Uint8Array,
  at: number,
  fieldNumber: number,
  size: number,
  baseType: number,
  littleEndian: boolean,
): { field: RecordField; value: number } | undefined {
  const profile = PROFILE.get(fieldNumber);
  if (!profile) return undefined;
  const elementBytes = ELEMENT_BYTES[profile.base];
  if (!WIRE[profile.base].includes(baseType) || size < elementBytes || size % elementBytes !== 0 || at + elementBytes > bytes.length)
    return undefined;
  const raw = readRaw(new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), at, profile.base, littleEndian);
  if (raw === INVALID[profile.base]) return undefined;
  return { field: profile.field, value: physical(profile, raw) };
}

/** The first element of the field at byte `at` (signed as its base type is). */
function readRaw(view: DataView, at: number, base: Base, littleEndian: boolean): number {
  switch (base) {
    case U8:
      return view.getUint8(at);
    case S8:
      return view.getInt8(at);
    case U16:
      return view.getUint16(at, littleEndian);
    case S32:
      return view.getInt32(at, littleEndian);
    case U32:
      return view.getUint32(at, littleEndian);
  }
}

/** A raw value as fit-file-parser gives it: timestamp → Unix ms, semicircles → degrees, else raw / scale + offset. */
function physical(p: { convert: Convert; scale: number; offset: number }, raw: number): number {
  return p.convert === TIME ? raw * 1000 + FIT_EPOCH_MS : p.convert === SEMICIRCLES ? raw * SEMICIRCLE_DEGREES : raw / p.scale + p.offset;
}

/** A copy of `from` in a longer array, NaN beyond its values. */
function grow(from: Float64Array, capacity: number): Float64Array {
  const to = new Float64Array(capacity);
  to.set(from);
  to.fill(Number.NaN, from.length);
  return to;
}
