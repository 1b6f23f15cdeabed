/**
 * Developer fields of FIT records (field_description + developer_data_id: Connect IQ apps' data
 * fields — Stryd's running power, the CORE sensor's core temperature, Moxy's muscle oxygen) as
 * channels, for the library decoding path of engine/ingest/fit.ts.
 *
 * ## Which field stands for which channel
 *
 * A field description whose `native_mesg_num` is 20 (record) and that has a `native_field_num`
 * names the record field it stands for: that number decides, and the name is not looked at (a
 * number no channel reads — 39 vertical_oscillation — means the field is not taken). A description
 * without a `native_field_num` (and for records or without `native_mesg_num`) is matched by its name,
 * lower-cased without spaces and punctuation. Either way its `units` (lower-cased, letters and `%`
 * only: `°C` is `c`, `M/S` is `ms`) must be among the channel's, and the value is converted to the
 * channel's unit; a unit the channel does not list contradicts it and the field is not taken.
 *
 * | channel            | native_field_num | names without a native_field_num (the `RULES` patterns)     | units (→ channel unit)                         |
 * |--------------------|------------------|-------------------------------------------------------------|------------------------------------------------|
 * | `power`            | 7                | `Power`, `Running Power`, `Stryd Power`; only with W units    | none, W, watt(s)                               |
 * | `heart_rate`       | 3                | —                                                           | none, bpm                                      |
 * | `cadence`          | 4                | —                                                           | none, rpm; spm, steps/min ÷ 2 (strides, as the native running cadence) |
 * | `speed`            | 6, 73            | —                                                           | none, m/s; km/h ÷ 3.6; mph × 0.44704           |
 * | `altitude`         | 2, 78            | —                                                           | none, m; ft × 0.3048                           |
 * | `distance`         | 5                | —                                                           | none, m; km × 1000; mi × 1609.344              |
 * | `temperature`      | 13               | —                                                           | none, °C; °F → °C                              |
 * | `core_temperature` | 139              | `core_temperature`, `core temp`, `body core temp`, `CIQ core temp` | none, °C; °F → °C                       |
 * | `smo2`             | 57               | `SmO2`, `saturated_hemoglobin_percent`, `currHemoPerc`, `muscle oxygen (saturation)`, `oxygen saturation`; not `THb` | none, % |
 * | `respiration_rate` | 99, 108          | `respiration rate`, `respiratory rate`, `breathing rate`     | none, brpm, breaths/min                        |
 *
 * Names match only these channels: a name such as Stryd's `Speed` or `Distance` (a footpod beside
 * the watch's own) is not taken without a native number.
 *
 * ## Which field fills a channel, and where
 *
 * - The native field wins: in each record the native record field's value is kept where present,
 *   and the developer field fills only the records without it (fit.ts channelsOf reads the native
 *   field first).
 * - One developer field per channel for the whole file: of several (two apps writing power), the
 *   one with the most values in the file's records (values that are not FIT's invalid value), on a
 *   tie the lowest developer_data_index, then the lowest field_definition_number. The others are not read at all, so two sensors are never
 *   mixed record by record.
 * - CORE's "Moxy compatibility": the CORE app writes the core temperature × 10 into a field
 *   `saturated_hemoglobin_percent` (native 57) beside its real `core_temperature` (native 139), under
 *   the same developer_data_index. A field that would be smo2 is therefore not taken when its app
 *   (developer_data_index) also has a field that would be core_temperature.
 * - A field redefined within the file is read with its last description.
 *
 * ## How the values are read
 *
 * fit-file-parser (6.1.2) puts a developer field's value in the record object under its
 * `field_name`, after the native fields. Two apps' fields of the same name therefore overwrite
 * each other record by record (whichever the record has, the later-defined winning), and a
 * developer field named like a native one (CORE's `core_temperature` and
 * `saturated_hemoglobin_percent`, an app's `power`) replaces the native value wherever it has one.
 * Its `includeRawMessages` option would tell them apart but copies every field of every record.
 * So the records' developer fields are read here from the file's bytes, by (developer_data_index,
 * field_definition_number), with the description's base type, scale and offset and the message's
 * byte order; the record messages are matched to fit-file-parser's records by their order in the
 * file (the walk below frames messages as fit-file-parser does, and gives up — no developer field
 * taken, the records as fit-file-parser gave them — when its count of records differs). Where a
 * developer field hides a native field that the channels read, the native value is read from the
 * bytes too (engine/ingest/fit-records.ts recordFieldValue, value for value fit-file-parser's) and
 * put back into the record, or the field cleared when the record has no native value (a developer
 * field named `timestamp` is left as fit-file-parser gives it). An array or string developer field,
 * or one whose base type fit-file-parser cannot resolve, is not read (nor is it by fit-file-parser).
 *
 * The lean path (engine/ingest/fit-records.ts) reads no developer field: fit.ts leaves every file
 * for which `developerFieldsConcernChannels` holds to the library path.
 */
import type { ParsedFit } from 'fit-file-parser';
import type { Channel } from '../channels.ts';
import { RECORD_FIELDS, recordFieldValue, type RecordField } from './fit-records.ts';

type Fields = Record<string, unknown>;
type Reader = (r: Fields) => number | undefined;
type Convert = (v: number) => number;

// ─── The mapping ─────────────────────────────────────────────────────────────────────────────────

const same: Convert = (v) => v;
const times =
  (factor: number): Convert =>
  (v) =>
    v * factor;
const fahrenheitToCelsius: Convert = (f) => ((f - 32) * 5) / 9;

/** Units each channel takes (normalised as `unitKey` does; '' is none given) and the conversion to the channel's unit. */
const POWER_UNITS = { '': same, w: same, watt: same, watts: same };
const HEART_RATE_UNITS = { '': same, bpm: same, beatsmin: same, beatsperminute: same };
const CADENCE_UNITS = { '': same, rpm: same, spm: times(0.5), stepsmin: times(0.5), stepsperminute: times(0.5) };
const SPEED_UNITS = { '': same, ms: same, mps: same, meterspersecond: same, kmh: times(1 / 3.6), kph: times(1 / 3.6), mph: times(0.44704) };
const ALTITUDE_UNITS = { '': same, m: same, meters: same, metres: same, ft: times(0.3048), feet: times(0.3048) };
const DISTANCE_UNITS = { '': same, m: same, meters: same, metres: same, km: times(1000), mi: times(1609.344), miles: times(1609.344) };
const CELSIUS_UNITS = {
  '': same,
  c: same,
  degc: same,
  celsius: same,
  f: fahrenheitToCelsius,
  degf: fahrenheitToCelsius,
  fahrenheit: fahrenheitToCelsius,
};
const PERCENT_UNITS = { '': same, '%': same, percent: same };
const BREATHS_UNITS = { '': same, brpm: same, breathsmin: same, breathsperminute: same };

interface ChannelRule {
  channel: Channel;
  /** The record fields (native_field_num) it stands for. */
  native: readonly number[];
  /** Names (`nameKey`) taken when the description has no native_field_num. */
  names?: RegExp;
  units: Record<string, Convert>;
  /** A name match needs units given (a bare `Power` may be anything). */
  namedNeedsUnits?: boolean;
}

const RULES: readonly ChannelRule[] = [
  { channel: 'power', native: [7], names: /^(run(ning)?|stryd)?power$/, units: POWER_UNITS, namedNeedsUnits: true },
  { channel: 'heart_rate', native: [3], units: HEART_RATE_UNITS },
  { channel: 'cadence', native: [4], units: CADENCE_UNITS },
  { channel: 'speed', native: [6, 73], units: SPEED_UNITS },
  { channel: 'altitude', native: [2, 78], units: ALTITUDE_UNITS },
  { channel: 'distance', native: [5], units: DISTANCE_UNITS },
  { channel: 'temperature', native: [13], units: CELSIUS_UNITS },
  { channel: 'core_temperature', native: [139], names: /^(ciq)?(body)?core(body)?temp(erature)?$/, units: CELSIUS_UNITS },
  {
    channel: 'smo2',
    native: [57],
    names: /^(muscle)?(smo2|saturatedhemoglobin(percent)?|muscleoxygen(saturation)?|oxygensaturation)$|^(curr)?hemoperc(ent)?$/,
    units: PERCENT_UNITS,
  },
  {
    channel: 'respiration_rate',
    native: [99, 108],
    names: /^(enhanced)?(respiration|respiratory|breathing|breath)rate$/,
    units: BREATHS_UNITS,
  },
];

const RECORD_MESG = 20;

const nameKey = (name: string) => name.toLowerCase().replace(/[^a-z0-9]/g, '');
const unitKey = (units: string) => units.toLowerCase().replace(/[^a-z%]/g, '');

/** The rule a description falls under and its unit conversion, or undefined when it is not taken. */
function ruleOf(d: Fields): { rule: ChannelRule; convert: Convert } | undefined {
  const nativeMesg = d['native_mesg_num'];
  if (nativeMesg !== undefined && nativeMesg !== RECORD_MESG && nativeMesg !== 'record') return undefined;
  const nativeField = d['native_field_num'];
  const name = typeof d['field_name'] === 'string' ? nameKey(d['field_name']) : '';
  const rule = typeof nativeField === 'number' ? RULES.find((r) => r.native.includes(nativeField)) : RULES.find((r) => r.names?.test(name));
  if (!rule) return undefined;
  const units = typeof d['units'] === 'string' ? unitKey(d['units']) : '';
  if (typeof nativeField !== 'number' && rule.namedNeedsUnits && units === '') return undefined;
  const convert = Object.hasOwn(rule.units, units) ? rule.units[units] : undefined;
  return convert && { rule, convert };
}

// ─── Developer base types ────────────────────────────────────────────────────────────────────────

/** How fit-file-parser reads a single-element developer field of a FIT base type. */
interface BaseType {
  size: number;
  read: (view: DataView, at: number, littleEndian: boolean) => number;
  invalid: number;
  /** Whether the description's scale and offset apply (fit-file-parser leaves enum and byte values raw). */
  scaled: boolean;
}

const baseType = (size: number, read: BaseType['read'], invalid: number, scaled = true): BaseType => ({ size, read, invalid, scaled });
const BASE_TYPES: Record<string, BaseType> = {
  enum: baseType(1, (v, at) => v.getUint8(at), 0xff, false),
  sint8: baseType(1, (v, at) => v.getInt8(at), 0x7f),
  uint8: baseType(1, (v, at) => v.getUint8(at), 0xff),
  sint16: baseType(2, (v, at, le) => v.getInt16(at, le), 0x7fff),
  uint16: baseType(2, (v, at, le) => v.getUint16(at, le), 0xffff),
  sint32: baseType(4, (v, at, le) => v.getInt32(at, le), 0x7fffffff),
  uint32: baseType(4, (v, at, le) => v.getUint32(at, le), 0xffffffff),
  float32: baseType(4, (v, at, le) => v.getFloat32(at, le), Number.NaN),
  float64: baseType(8, (v, at, le) => v.getFloat64(at, le), Number.NaN),
  uint8z: baseType(1, (v, at) => v.getUint8(at), 0),
  uint16z: baseType(2, (v, at, le) => v.getUint16(at, le), 0),
  uint32z: baseType(4, (v, at, le) => v.getUint32(at, le), 0),
  byte: baseType(1, (v, at) => v.getUint8(at), 0xff, false),
};
/** fit_base_type codes (endian bit included) as fit-file-parser names them; it resolves no other code. */
const BASE_TYPE_NAMES: Record<number, string> = {
  0x00: 'enum',
  0x01: 'sint8',
  0x02: 'uint8',
  0x83: 'sint16',
  0x84: 'uint16',
  0x85: 'sint32',
  0x86: 'uint32',
  0x88: 'float32',
  0x89: 'float64',
  0x0a: 'uint8z',
  0x8b: 'uint16z',
  0x8c: 'uint32z',
  0x0d: 'byte',
};

function baseTypeOf(d: Fields): BaseType | undefined {
  const id = d['fit_base_type_id'];
  const name = typeof id === 'number' ? BASE_TYPE_NAMES[id] : id;
  return typeof name === 'string' && Object.hasOwn(BASE_TYPES, name) ? BASE_TYPES[name] : undefined;
}

// ─── Descriptions ────────────────────────────────────────────────────────────────────────────────

/** A developer field that may fill a channel. */
interface Candidate {
  /** developer_data_index: the app. */
  app: number;
  /** field_definition_number. */
  number: number;
  channel: Channel;
  type: BaseType;
  /** raw → the channel's unit: the description's scale and offset, then the unit conversion. */
  value: Convert;
}

const keyOf = (app: number, number: number) => app * 256 + number;

/** The file's field descriptions, the last of each (developer_data_index, field_definition_number). */
function descriptions(fit: ParsedFit): Fields[] {
  const latest = new Map<number, Fields>();
  for (const description of fit.field_descriptions ?? []) {
    const d = description as Fields;
    const app = d['developer_data_index'];
    const number = d['field_definition_number'];
    if (typeof app === 'number' && typeof number === 'number') latest.set(keyOf(app, number), d);
  }
  return [...latest.values()];
}

function candidateOf(d: Fields): Candidate | undefined {
  const mapped = ruleOf(d);
  const type = baseTypeOf(d);
  if (!mapped || !type) return undefined;
  const scale = typeof d['scale'] === 'number' && d['scale'] !== 0 && type.scaled ? d['scale'] : undefined;
  const offset = typeof d['offset'] === 'number' ? d['offset'] : 0;
  const { convert } = mapped;
  return {
    app: d['developer_data_index'] as number,
    number: d['field_definition_number'] as number,
    channel: mapped.rule.channel,
    type,
    value: scale === undefined ? convert : (raw) => convert(raw / scale - offset),
  };
}

/** The developer fields that may fill a channel, without the smo2 fields of an app that writes core temperature (CORE's Moxy compatibility). */
function candidates(fit: ParsedFit): Candidate[] {
  const all = descriptions(fit)
    .map(candidateOf)
    .filter((c): c is Candidate => c !== undefined);
  const coreApps = new Set(all.filter((c) => c.channel === 'core_temperature').map((c) => c.app));
  return all.filter((c) => !(c.channel === 'smo2' && coreApps.has(c.app)));
}

/** The native record fields read by the channels that a developer field of the same name hides in fit-file-parser's records. */
function hiddenFields(fit: ParsedFit, withTimestamp: boolean): Set<RecordField> {
  const hidden = new Set<RecordField>();
  for (const d of fit.field_descriptions ?? []) {
    const name = (d as Fields)['field_name'];
    const field = RECORD_FIELDS.find((f) => f === name);
    if (field && (withTimestamp || field !== 'timestamp')) hidden.add(field);
  }
  return hidden;
}

/**
 * Whether the file's developer fields concern the channels: one may fill a channel, or one is named
 * like a record field the channels read (fit-file-parser then hides the native value). The lean
 * path declines such a file (fit.ts leanDecode).
 */
export function developerFieldsConcernChannels(fit: ParsedFit): boolean {
  return candidates(fit).length > 0 || hiddenFields(fit, true).size > 0;
}

// ─── Reading ─────────────────────────────────────────────────────────────────────────────────────

/**
 * The channels developer fields fill, each with the reader of its chosen field (one per channel),
 * for fit.ts channelsOf after the native readers. Reads the record messages' developer fields from
 * `bytes` (the file `fit` was decoded from) and puts back into `fit.records` the native values that
 * same-named developer fields hid. See the module comment.
 */
export function readDeveloperFields(fit: ParsedFit, bytes: Uint8Array): Partial<Record<Channel, Reader[]>> {
  const wanted = candidates(fit);
  const hidden = hiddenFields(fit, false);
  const records = (fit.records ?? []) as Fields[];
  if ((wanted.length === 0 && hidden.size === 0) || records.length === 0) return {};
  const read = readRecordMessages(bytes, records.length, wanted, hidden);
  if (!read) return {};
  restoreNative(records, read.native);
  const rowOf = new Map<object, number>(records.map((r, k) => [r, k]));
  const out: Partial<Record<Channel, Reader[]>> = {};
  for (const [channel, column] of chosenColumns(wanted, read.developer)) {
    out[channel] = [
      (r) => {
        const k = rowOf.get(r);
        const v = k === undefined ? Number.NaN : column[k]!;
        return Number.isNaN(v) ? undefined : v;
      },
    ];
  }
  return out;
}

/** Per channel, the values of the one field chosen (most values; then lowest developer_data_index, field_definition_number). */
function chosenColumns(wanted: Candidate[], columns: Float64Array[]): Map<Channel, Float64Array> {
  const best = new Map<Channel, { candidate: Candidate; column: Float64Array; count: number }>();
  for (const [i, candidate] of wanted.entries()) {
    const column = columns[i]!;
    let count = 0;
    for (const v of column) if (!Number.isNaN(v)) count++;
    if (count === 0) continue;
    const held = best.get(candidate.channel);
    if (
      !held ||
      count > held.count ||
      (count === held.count && keyOf(candidate.app, candidate.number) < keyOf(held.candidate.app, held.candidate.number))
    ) {
      best.set(candidate.channel, { candidate, column, count });
    }
  }
  return new Map([...best].map(([channel, { column }]) => [channel, column]));
}

/** The native values read from the bytes, in place of what fit-file-parser left under their names (cleared where the record has none). */
function restoreNative(records: Fields[], native: Map<RecordField, Float64Array>): void {
  for (const [field, values] of native) {
    for (const [k, r] of records.entries()) r[field] = Number.isNaN(values[k]!) ? undefined : values[k];
  }
}

interface Definition {
  global: number;
  littleEndian: boolean;
  /** Bytes of a data message after its header (all fields). */
  size: number;
  /** Native fields: number, size, base type byte. */
  fields: { number: number; size: number; baseType: number }[];
  developer: { app: number; number: number; size: number }[];
}

interface RecordValues {
  /** Per wanted field, its value in each record message (NaN where absent or invalid). */
  developer: Float64Array[];
  /** Per hidden native field, its value in each record message. */
  native: Map<RecordField, Float64Array>;
}

/**
 * Walks the file's messages as fit-file-parser frames them (a compressed-timestamp message skips a
 * leading timestamp field of its definition, as it does) and reads, in each record message, the
 * wanted developer fields and the hidden native ones. Undefined when the walk does not find exactly
 * `count` record messages in well-framed data (fit-file-parser decoded the file, so this does not
 * happen; the developer fields are then not read).
 */
function readRecordMessages(bytes: Uint8Array, count: number, wanted: Candidate[], hidden: Set<RecordField>): RecordValues | undefined {
  if (bytes.length < 12) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerSize = bytes[0]!;
  const end = Math.min(headerSize + view.getUint32(4, true), bytes.length);
  const columnOf = new Map(wanted.map((c, i) => [keyOf(c.app, c.number), i]));
  const developer = wanted.map(() => new Float64Array(count).fill(Number.NaN));
  const native = new Map([...hidden].map((f) => [f, new Float64Array(count).fill(Number.NaN)]));
  const definitions: (Definition | undefined)[] = [];
  let row = 0;
  let pos = headerSize;
  while (pos < end) {
    const header = bytes[pos]!;
    const compressed = (header & 0x80) !== 0;
    if (!compressed && header & 0x40) {
      const next = readDefinition(bytes, view, pos, end, definitions);
      if (next === undefined) return undefined;
      pos = next;
      continue;
    }
    const definition = definitions[compressed ? (header >> 5) & 0x03 : header & 0x0f];
    if (!definition) return undefined;
    const first = compressed && definition.fields[0]?.number === 253 ? 1 : 0;
    const size = first ? definition.size - definition.fields[0]!.size : definition.size;
    if (pos + 1 + size > end) return undefined;
    if (definition.global === RECORD_MESG) {
      if (row === count) return undefined;
      let at = pos + 1;
      for (let i = first; i < definition.fields.length; i++) {
        const f = definition.fields[i]!;
        const v = native.size > 0 ? recordFieldValue(bytes, at, f.number, f.size, f.baseType, definition.littleEndian) : undefined;
        if (v && native.has(v.field)) native.get(v.field)![row] = v.value;
        at += f.size;
      }
      for (const f of definition.developer) {
        const i = columnOf.get(keyOf(f.app, f.number));
        if (i !== undefined) developer[i]![row] = developerValue(wanted[i]!, view, at, f.size, definition.littleEndian);
        at += f.size;
      }
      row++;
    }
    pos += 1 + size;
  }
  return row === count ? { developer, native } : undefined;
}

/** Reads the definition message at `pos` into `definitions`; the position after it, or undefined when it runs past the data. */
function readDefinition(
  bytes: Uint8Array,
  view: DataView,
  pos: number,
  end: number,
  definitions: (Definition | undefined)[],
): number | undefined {
  if (pos + 6 > end) return undefined;
  const header = bytes[pos]!;
  const littleEndian = bytes[pos + 2] === 0;
  const global = view.getUint16(pos + 3, littleEndian);
  const fieldCount = bytes[pos + 5]!;
  let at = pos + 6;
  const developerCountAt = at + fieldCount * 3;
  const developerCount = header & 0x20 && developerCountAt < end ? bytes[developerCountAt]! : 0;
  const next = header & 0x20 ? developerCountAt + 1 + developerCount * 3 : developerCountAt;
  if (next > end) return undefined;
  const fields: Definition['fields'] = [];
  for (let i = 0; i < fieldCount; i++, at += 3) fields.push({ number: bytes[at]!, size: bytes[at + 1]!, baseType: bytes[at + 2]! });
  const developer: Definition['developer'] = [];
  for (let i = 0, d = developerCountAt + 1; i < developerCount; i++, d += 3)
    developer.push({ number: bytes[d]!, size: bytes[d + 1]!, app: bytes[d + 2]! });
  const size = [...fields, ...developer].reduce((total, f) => total + f.size, 0);
  definitions[header & 0x0f] = { global, littleEndian, size, fields, developer };
  return next;
}

/** A developer field's value in the channel's unit, NaN when invalid or not a single element of its base type. */
function developerValue(candidate: Candidate, view: DataView, at: number, size: number, littleEndian: boolean): number {
  const { type } = candidate;
  if (size !== type.size) return Number.NaN;
  const raw = type.read(view, at, littleEndian);
  if (raw === type.invalid || !Number.isFinite(raw)) return Number.NaN;
  const value = candidate.value(raw);
  return Number.isFinite(value) ? value : Number.NaN;
}
