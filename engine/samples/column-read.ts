/**
 * Reading activities' samples out of a channel column's values file (./channel-columns.ts), inside
 * an engine thread: one positioned read per activity straight into the thread's scratch array (float64
 * entries) or through a float32 buffer widened in place (float32 entries), so a request copies only
 * the bytes of the activities it asked for, from the OS page cache that every process on the host
 * shares. Nothing of a column stays in any process's heap beyond the scratch, which is kept between
 * tasks up to SCRATCH_KEEP_BYTES per thread and released above it.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import type { Slices } from '../curves/longitudinal.ts';

/** Where some activities' samples lie in a values file, in the order the task wants them. */
export interface ColumnPlace {
  /** The values file (absolute path). */
  file: string;
  /** Per activity: byte offset of its first sample, its sample count, and 4 or 8 bytes per sample. */
  offset: Float64Array;
  length: Int32Array;
  width: Uint8Array;
}

/** Scratch kept by a thread between tasks (more is allocated for one task and then let go). */
export const SCRATCH_KEEP_BYTES = 64 * 1024 * 1024;

let scratch = new Float64Array(0);
let narrow = new Float32Array(0);

/**
 * Thrown when the values file is gone (a compaction replaced it meanwhile): the caller places the
 * activities again. A plain Error recognised by its message: that is what survives the way back from
 * a thread (an Error subclass does not deserialise there).
 */
function columnMoved(file: string): Error {
  return new Error(`COLUMN_MOVED: ${file} was replaced`);
}

function readFully(fd: number, into: Uint8Array, position: number, file: string): void {
  for (let at = 0; at < into.length; ) {
    const n = readSync(fd, into, at, into.length - at, position + at);
    if (n === 0) throw new Error(`The channel column ${file} ends before byte ${position + into.length}`);
    at += n;
  }
}

/**
 * The activities of `place` back to back (their Slices), read from its file. The values array is
 * this thread's scratch: valid until the thread's next read.
 */
export function readColumnSlices(place: ColumnPlace): Slices {
  const n = place.length.length;
  const from = new Int32Array(n);
  let total = 0;
  for (let a = 0; a < n; a++) {
    from[a] = total;
    total += place.length[a]!;
  }
  const values = total <= scratch.length ? scratch.subarray(0, total) : new Float64Array(total);
  if (values.byteLength <= SCRATCH_KEEP_BYTES && values.buffer !== scratch.buffer) scratch = values;
  let fd: number;
  try {
    fd = openSync(place.file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw columnMoved(place.file);
    throw err;
  }
  try {
    for (let a = 0; a < n; a++) {
      const length = place.length[a]!;
      const at = from[a]!;
      if (place.width[a] === 8) {
        readFully(fd, new Uint8Array(values.buffer, values.byteOffset + at * 8, length * 8), place.offset[a]!, place.file);
      } else {
        if (narrow.length < length) narrow = new Float32Array(Math.max(length, 4096));
        readFully(fd, new Uint8Array(narrow.buffer, 0, length * 4), place.offset[a]!, place.file);
        values.set(narrow.subarray(0, length), at); // (widened natively)
      }
    }
  } finally {
    closeSync(fd);
  }
  if (narrow.byteLength > SCRATCH_KEEP_BYTES) narrow = new Float32Array(0);
  return { values, from, length: place.length };
}

/** Whether an error (as it arrives from an engine thread) says the column file was replaced. */
export function isColumnMoved(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith('COLUMN_MOVED: ');
}

/** Once more when a compaction replaced the column file between placing and reading (`fn` places, then reads). */
export async function retryIfMoved<T>(fn: () => Promise<T>): Promise<T> {
  return fn().catch((err: unknown) => {
    if (!isColumnMoved(err)) throw err;
    return fn();
  });
}

/** Activities [from, to) of a place. */
export function slicePlace(place: ColumnPlace, from: number, to: number): ColumnPlace {
  return {
    file: place.file,
    offset: place.offset.slice(from, to),
    length: place.length.slice(from, to),
    width: place.width.slice(from, to),
  };
}
