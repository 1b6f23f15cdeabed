/**
 * The byte encodings of the Int32 arrays stored per activity in `activity_curves` (level_duration,
 * level_start, awd: engine/curves/activity-curves.ts), and their decoding in the engine pool.
 *
 * Why: stored raw (4 bytes a level) the curves took more room than the activity's sample file. The
 * arrays are runs: the value-indexed view (level_duration, level_start) is a staircase, one run of
 * equal duration and start per corner of the mean-max curve, non-increasing in the level; the AWD is
 * non-increasing with small steps (the samples at exactly each level) and runs where no sample lies.
 * Runs of zigzag-delta varints take about a byte per run or step: 4–16 % of the raw size on real and
 * synthetic rides (a 2 h ride's arrays: about 4.5 KB instead of 30 KB).
 *
 * Encodings (the row's `encoding` column):
 * - 0 (RAW): little-endian Int32, 4 bytes per value (rows written before the compact encoding).
 * - 1 (DELTA_RUNS): a sequence of varints (LEB128: 7 bits per byte, least significant first, the high
 *   bit set on every byte but the last). First the array's length n; then runs until n values are
 *   produced. A run of `count` copies of a value v is the token t = zigzag(v − previous)·2 + (count > 1)
 *   (previous: the value of the run before, 0 for the first; the difference wraps in Int32, so every
 *   Int32 array is encoded, lossless), followed, when t is odd, by the varint count − 2.
 *   zigzag(x) = 2x for x ≥ 0, −2x − 1 below (0, −1, 1, −2 … → 0, 1, 2, 3 …). A token is below 2^33,
 *   so it is written and read with arithmetic, not 32-bit bitwise operators.
 *
 * The encoder is deterministic (maximal runs), so equal arrays have equal bytes. The decoder checks
 * what it reads (truncation, runs past the length, trailing bytes) and throws a RangeError on a
 * malformed array rather than returning wrong values.
 */

export const CurveEncoding = { RAW: 0, DELTA_RUNS: 1 } as const;
export type CurveEncoding = (typeof CurveEncoding)[keyof typeof CurveEncoding];
/** The encoding new rows are written with. */
export const CURRENT_ENCODING: CurveEncoding = CurveEncoding.DELTA_RUNS;

/** Many activities' encoded arrays in one buffer: array a is bytes[offsets[a] .. offsets[a+1]) in encoding[a]. */
export interface EncodedArrays {
  bytes: Uint8Array;
  offsets: Int32Array;
  encoding: Uint8Array;
}

if (new Uint8Array(new Uint16Array([1]).buffer)[0] !== 1)
  throw new Error('curve arrays are stored little-endian; this platform is big-endian');

/** A growable byte buffer for the encoder. */
class Bytes {
  buf = new Uint8Array(64);
  n = 0;
  varint(x: number): void {
    if (this.n + 5 > this.buf.length) {
      const next = new Uint8Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    while (x >= 128) {
      this.buf[this.n++] = (x % 128) + 128;
      x = Math.floor(x / 128);
    }
    this.buf[this.n++] = x;
  }
}

/** `values` in DELTA_RUNS (see the header). */
export function encodeDeltaRuns(values: Int32Array): Uint8Array {
  const out = new Bytes();
  const n = values.length;
  out.varint(n);
  let previous = 0;
  for (let i = 0; i < n; ) {
    const v = values[i]!;
    let j = i + 1;
    while (j < n && values[j] === v) j++;
    const delta = (v - previous) | 0;
    const zigzag = ((delta << 1) ^ (delta >> 31)) >>> 0;
    const count = j - i;
    out.varint(zigzag * 2 + (count > 1 ? 1 : 0));
    if (count > 1) out.varint(count - 2);
    previous = v;
    i = j;
  }
  return out.buf.slice(0, out.n);
}

/** `values` as little-endian Int32 bytes (RAW). */
export function encodeRaw(values: Int32Array): Uint8Array {
  return new Uint8Array(values.buffer.slice(values.byteOffset, values.byteOffset + values.byteLength));
}

export function encodeInt32s(values: Int32Array, encoding: number = CURRENT_ENCODING): Uint8Array {
  if (encoding === CurveEncoding.RAW) return encodeRaw(values);
  if (encoding === CurveEncoding.DELTA_RUNS) return encodeDeltaRuns(values);
  throw new RangeError(`unknown curve encoding ${encoding}`);
}

function malformed(what: string): never {
  throw new RangeError(`malformed curve array: ${what}`);
}

/** Where readVarint stopped (a module variable: no allocation per value on the hot path). */
let cursor = 0;

/** The varint at bytes[p] (p < end); `cursor` is left after it. */
function readVarint(bytes: Uint8Array, p: number, end: number): number {
  let b = bytes[p]!;
  if (b < 128) {
    cursor = p + 1;
    return b;
  }
  let x = b - 128;
  let scale = 128;
  for (let q = p + 1; ; q++) {
    if (q >= end || scale > 2 ** 28) malformed('a varint runs past the array');
    b = bytes[q]!;
    x += (b & 127) * scale;
    scale *= 128;
    if (b < 128) {
      cursor = q + 1;
      return x;
    }
  }
}

/** The number of values of an encoded array, without decoding it. */
export function encodedLength(bytes: Uint8Array, from: number, to: number, encoding: number): number {
  if (encoding === CurveEncoding.RAW) {
    if ((to - from) % 4 !== 0) malformed(`${to - from} raw bytes are not whole Int32 values`);
    return (to - from) / 4;
  }
  if (encoding === CurveEncoding.DELTA_RUNS) {
    if (from >= to) malformed('no length');
    const n = readVarint(bytes, from, to);
    if (n > 2 ** 31 - 1) malformed(`length ${n}`);
    return n;
  }
  throw new RangeError(`unknown curve encoding ${encoding}`);
}

/**
 * The runs of an encoded array (length n = encodedLength): run r holds `values[r]` at the indices
 * [ends[r-1] .. ends[r]) (from 0 for r = 0); returns the number of runs. `values` and `ends` need
 * room for n runs. DELTA_RUNS gives its maximal runs as written, RAW its runs of equal neighbours.
 * The one parser of the format: decodeInto expands its runs, the longitudinal merge compares them
 * (engine/curves/stored-curves.ts, mergeStoredLevels).
 */
export function decodeRuns(bytes: Uint8Array, from: number, to: number, encoding: number, values: Int32Array, ends: Int32Array): number {
  const n = encodedLength(bytes, from, to, encoding);
  if (values.length < n || ends.length < n)
    throw new RangeError(`decodeRuns: room for ${Math.min(values.length, ends.length)} runs, the array has ${n} values`);
  let runs = 0;
  if (encoding === CurveEncoding.RAW) {
    for (let p = from, i = 0; p < to; p += 4, i++) {
      const v = bytes[p]! | (bytes[p + 1]! << 8) | (bytes[p + 2]! << 16) | (bytes[p + 3]! << 24);
      if (runs > 0 && values[runs - 1] === v) ends[runs - 1] = i + 1;
      else {
        values[runs] = v;
        ends[runs++] = i + 1;
      }
    }
    return runs;
  }
  let p = cursor; // after the length, which encodedLength read
  let i = 0;
  let v = 0;
  while (i < n) {
    if (p >= to) malformed('truncated');
    let t = bytes[p]!;
    // The hot path: one-byte tokens (steps below 32), in Int32 arithmetic.
    if (t < 128) {
      p++;
      v = (v + ((t >>> 2) ^ -((t >>> 1) & 1))) | 0;
    } else {
      t = readVarint(bytes, p, to);
      p = cursor;
      if (t >= 2 ** 33) malformed('a token past 33 bits');
      const zigzag = Math.floor(t / 2); // < 2^32: the Uint32 operators below read it whole
      v = (v + ((zigzag >>> 1) ^ -(zigzag & 1))) | 0;
    }
    if (t % 2 === 0) i++;
    else {
      if (p >= to) malformed('truncated run');
      let count = bytes[p]!;
      if (count < 128) p++;
      else {
        count = readVarint(bytes, p, to);
        p = cursor;
      }
      if (count + 2 > n - i) malformed('a run past the length');
      i += count + 2;
    }
    values[runs] = v;
    ends[runs++] = i;
  }
  if (p !== to) malformed('trailing bytes');
  return runs;
}

/** Decode bytes[from .. to) (encoding) into out, whose length is the array's (encodedLength). */
export function decodeInto(bytes: Uint8Array, from: number, to: number, encoding: number, out: Int32Array): void {
  if (encoding === CurveEncoding.RAW) {
    if (to - from !== out.length * 4) malformed('raw length');
    new Uint8Array(out.buffer, out.byteOffset, out.byteLength).set(bytes.subarray(from, to));
    return;
  }
  if (encodedLength(bytes, from, to, encoding) !== out.length) malformed('length');
  const scratch = runScratch(out.length);
  const runs = decodeRuns(bytes, from, to, encoding, scratch.values, scratch.ends);
  for (let r = 0, i = 0; r < runs; r++) {
    const v = scratch.values[r]!;
    const end = scratch.ends[r]!;
    if (end - i < 16) for (; i < end; i++) out[i] = v;
    else {
      out.fill(v, i, end);
      i = end;
    }
  }
}

let scratchValues = new Int32Array(1024);
let scratchEnds = new Int32Array(1024);
/** Reused room for the runs of an array of n values (grown, never shrunk: a thread decodes one array at a time). */
export function runScratch(n: number): { values: Int32Array; ends: Int32Array } {
  if (scratchValues.length < n) {
    scratchValues = new Int32Array(Math.max(n, scratchValues.length * 2));
    scratchEnds = new Int32Array(scratchValues.length);
  }
  return { values: scratchValues, ends: scratchEnds };
}

/** One encoded array → its values. */
export function decodeInt32s(bytes: Uint8Array, encoding: number): Int32Array {
  const out = new Int32Array(encodedLength(bytes, 0, bytes.length, encoding));
  decodeInto(bytes, 0, bytes.length, encoding, out);
  return out;
}

/** Every array of a packing, decoded into one buffer: array a is the a-th view. */
export function decodeArrays(p: EncodedArrays): Int32Array[] {
  const count = p.encoding.length;
  const offsets = new Int32Array(count + 1);
  for (let a = 0; a < count; a++) offsets[a + 1] = offsets[a]! + encodedLength(p.bytes, p.offsets[a]!, p.offsets[a + 1]!, p.encoding[a]!);
  const values = new Int32Array(offsets[count]!);
  const out: Int32Array[] = [];
  for (let a = 0; a < count; a++) {
    const view = values.subarray(offsets[a]!, offsets[a + 1]!);
    decodeInto(p.bytes, p.offsets[a]!, p.offsets[a + 1]!, p.encoding[a]!, view);
    out.push(view);
  }
  return out;
}

/** Encoded arrays (each with its encoding) → one packing, the bytes copied once. */
export function packEncoded(arrays: { bytes: Uint8Array; encoding: number }[]): EncodedArrays {
  const offsets = new Int32Array(arrays.length + 1);
  arrays.forEach((a, i) => (offsets[i + 1] = offsets[i]! + a.bytes.byteLength));
  const bytes = new Uint8Array(offsets[arrays.length]!);
  arrays.forEach((a, i) => bytes.set(a.bytes, offsets[i]!));
  return { bytes, offsets, encoding: Uint8Array.from(arrays, (a) => a.encoding) };
}
