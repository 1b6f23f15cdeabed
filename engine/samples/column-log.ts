/**
 * The record format of a channel column's log (./channel-columns.ts): fixed 48-byte records, each
 * saying where one activity's samples lie in the column's values file, or that they are gone.
 *
 *   0   u32  magic 'TDC1'
 *   4   u8   width: 4 (float32 values), 8 (float64 values), 0 (a tombstone: the activity is gone)
 *   5   3 bytes zero
 *   8   16 bytes  the activity's id (a UUID's bytes)
 *   24  f64  stamp: the activity row's updated_at (epoch ms); a re-derived activity has a new one
 *   32  f64  byte offset of its first sample in the values file (a multiple of 8)
 *   40  u32  samples
 *   44  u32  FNV-1a of bytes 0..44
 *
 * Little-endian. A reader replays the records in order, the last one of an id winning; a torn last
 * record (a writer killed mid-write) or one whose checksum fails is not taken.
 */
export const RECORD_BYTES = 48;
const MAGIC = 0x31434454; // 'TDC1' read as a little-endian u32

export interface ColumnRecord {
  /** 32 lowercase hex digits (the UUID without dashes). */
  key: string;
  /** 4 or 8 (bytes per sample), 0 for a tombstone. */
  width: number;
  stamp: number;
  offset: number;
  samples: number;
}

/** An activity id as the log keys it: its UUID's 32 hex digits. */
export function recordKey(id: string): string {
  // The usual case, a lowercase UUID as PostgreSQL writes it: its hex digits, checked one by one.
  if (id.length === 36 && id[8] === '-' && id[13] === '-' && id[18] === '-' && id[23] === '-') {
    const key = id.slice(0, 8) + id.slice(9, 13) + id.slice(14, 18) + id.slice(19, 23) + id.slice(24);
    let hex = true;
    for (let i = 0; i < 32 && hex; i++) {
      const c = key.charCodeAt(i);
      hex = (c >= 48 && c <= 57) || (c >= 97 && c <= 102);
    }
    if (hex) return key;
  }
  const key = id.replaceAll('-', '').toLowerCase();
  if (!/^[0-9a-f]{32}$/.test(key)) throw new RangeError(`A channel column keys activities by UUID: ${JSON.stringify(id)}`);
  return key;
}

function fnv1a(bytes: Uint8Array, from: number, to: number): number {
  let h = 0x811c9dc5;
  for (let i = from; i < to; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  return h >>> 0;
}

export function encodeRecords(records: readonly ColumnRecord[]): Buffer {
  const out = Buffer.alloc(records.length * RECORD_BYTES);
  records.forEach((r, i) => {
    const at = i * RECORD_BYTES;
    out.writeUInt32LE(MAGIC, at);
    out.writeUInt8(r.width, at + 4);
    out.write(r.key, at + 8, 16, 'hex');
    out.writeDoubleLE(r.stamp, at + 24);
    out.writeDoubleLE(r.offset, at + 32);
    out.writeUInt32LE(r.samples, at + 40);
    out.writeUInt32LE(fnv1a(out, at, at + 44), at + 44);
  });
  return out;
}

/** The live records of a log (tombstoned ids left out), by key; whole, valid records only. */
export function replayLog(bytes: Buffer): Map<string, ColumnRecord> {
  const live = new Map<string, ColumnRecord>();
  replayInto(bytes, live);
  return live;
}

/**
 * Replay records onto `live` (later records win, tombstones delete). A record that does not check
 * (magic, checksum, width, or `accept`) is not taken; the offset of the first such (or the end) is
 * returned: what follows it was replayed, and replaying it again from there gives the same map.
 */
export function replayInto(bytes: Buffer, live: Map<string, ColumnRecord>, accept: (r: ColumnRecord) => boolean = () => true): number {
  const whole = bytes.length - (bytes.length % RECORD_BYTES);
  let firstBad = whole;
  for (let at = 0; at < whole; at += RECORD_BYTES) {
    const width = bytes.readUInt8(at + 4);
    if (
      bytes.readUInt32LE(at) !== MAGIC ||
      bytes.readUInt32LE(at + 44) !== fnv1a(bytes, at, at + 44) ||
      (width !== 0 && width !== 4 && width !== 8)
    ) {
      firstBad = Math.min(firstBad, at);
      continue;
    }
    const key = bytes.toString('hex', at + 8, at + 24);
    if (width === 0) {
      live.delete(key);
      continue;
    }
    const record = {
      key,
      width,
      stamp: bytes.readDoubleLE(at + 24),
      offset: bytes.readDoubleLE(at + 32),
      samples: bytes.readUInt32LE(at + 40),
    };
    if (!accept(record)) {
      firstBad = Math.min(firstBad, at);
      continue;
    }
    live.set(key, record);
  }
  return firstBad;
}

/** The bytes an entry of `samples` values of `width` bytes occupies, padded to 8 (the next entry's alignment). */
export function entryBytes(samples: number, width: number): number {
  return Math.ceil((samples * width) / 8) * 8;
}
