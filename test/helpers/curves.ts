/**
 * Helpers for the curve and time-series endpoint tests: fetch a frame as a client would (Parquet by
 * default, JSON with `format=json` or `Accept: application/json`), read Parquet back with an
 * independent reader (hyparquet), and plain reference computations written from the API's
 * definitions (not from the product's kernels).
 */
import { parquetMetadataAsync, parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { meanMaxPlain } from '../../engine/curves/mean-max-plain.ts';
import { ingestFile } from '../../engine/ingest/ingest.ts';
import type { IngestedActivity } from '../../engine/ingest/ingested.ts';
import type { TestService } from './service.ts';

export type Kind = 'int32' | 'double' | 'timestamptz' | 'timestamp' | 'string';

export interface RawResponse {
  status: number;
  headers: Headers;
  bytes: ArrayBuffer;
}

export async function get(
  service: TestService,
  token: string | undefined,
  path: string,
  headers: Record<string, string> = {},
): Promise<RawResponse> {
  const res = await fetch(service.url + path, { headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers } });
  return { status: res.status, headers: res.headers, bytes: await res.arrayBuffer() };
}

export function jsonOf(r: RawResponse): any {
  return JSON.parse(Buffer.from(r.bytes).toString('utf8'));
}

/** A Parquet column's kind from its physical and logical/converted types (a description when it is none of ours). */
export function kindOf(el: { type?: string; logical_type?: any; converted_type?: string }): Kind | string {
  const lt = el.logical_type;
  if (
    el.type === 'INT32' &&
    (!lt || (lt.type === 'INTEGER' && lt.bitWidth === 32 && lt.isSigned)) &&
    (!el.converted_type || el.converted_type === 'INT_32')
  )
    return 'int32';
  if (el.type === 'DOUBLE' && !lt) return 'double';
  if (el.type === 'INT64' && lt?.type === 'TIMESTAMP' && lt.unit === 'MICROS') return lt.isAdjustedToUTC ? 'timestamptz' : 'timestamp';
  if (el.type === 'BYTE_ARRAY' && (el.converted_type === 'UTF8' || lt?.type === 'STRING')) return 'string';
  return `${el.type}:${JSON.stringify(lt ?? el.converted_type ?? null)}`;
}

const MS_PER_US = 1000;

/** An instant as the API writes it in JSON: `2024-05-01T07:00:00Z` (milliseconds only when not whole). */
export function isoZ(ms: number): string {
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}
/** A naive local time as the API writes it: `2024-05-01T09:00:00`. */
export function isoLocal(ms: number): string {
  return new Date(ms).toISOString().replace('.000Z', 'Z').slice(0, -1);
}

/** Epoch ms of a value hyparquet gave for a TIMESTAMP column (a Date, or a bigint of µs when not converted). */
function msOf(v: unknown): number {
  if (v instanceof Date) return v.getTime();
  if (typeof v === 'bigint') return Number(v) / MS_PER_US;
  throw new TypeError(`not a timestamp: ${String(v)}`);
}

export interface ParquetFrame {
  /** Columns in file order with their kinds. */
  schema: { name: string; kind: Kind | string }[];
  /** Canonical column values: times as the JSON text the API uses, nulls as null. */
  columns: Record<string, unknown[]>;
  /** Raw numeric timestamps (epoch ms) of the time columns. */
  ms: Record<string, (number | null)[]>;
  kv: Record<string, string>;
  rows: number;
}

export async function readParquet(bytes: ArrayBuffer): Promise<ParquetFrame> {
  const meta = await parquetMetadataAsync(bytes);
  const leaves = meta.schema.slice(1);
  const schema = leaves.map((el) => ({ name: el.name, kind: kindOf(el as never) }));
  const rows = (await parquetReadObjects({ file: bytes, compressors })) as Record<string, unknown>[];
  const columns: Record<string, unknown[]> = {};
  const ms: Record<string, (number | null)[]> = {};
  for (const { name, kind } of schema) {
    const raw = rows.map((r) => r[name]);
    if (kind === 'timestamptz' || kind === 'timestamp') {
      ms[name] = raw.map((v) => (v === null || v === undefined ? null : msOf(v)));
      columns[name] = ms[name].map((v) => (v === null ? null : kind === 'timestamptz' ? isoZ(v) : isoLocal(v)));
    } else {
      columns[name] = raw.map((v) => (v === undefined ? null : typeof v === 'bigint' ? Number(v) : v));
    }
  }
  const kv = Object.fromEntries((meta.key_value_metadata ?? []).map((e) => [e.key, e.value ?? '']));
  return { schema, columns, ms, kv, rows: Number(meta.num_rows) };
}

/** A frame endpoint's answer in all three forms, checked to agree: Parquet, `format=json`, `Accept: application/json`. */
export interface FrameAnswer {
  parquet: ParquetFrame;
  /** The JSON body (column-oriented). */
  json: Record<string, unknown[]>;
  headers: Headers;
  jsonHeaders: Headers;
}

/**
 * GET `path` as Parquet, as `format=json` and with `Accept: application/json`. Throws (with the body)
 * unless all three are 200 with the right media types; the caller asserts the JSON equals the Parquet.
 */
export async function getFrame(service: TestService, token: string, path: string): Promise<FrameAnswer> {
  const sep = path.includes('?') ? '&' : '?';
  const [p, j, a] = await Promise.all([
    get(service, token, path),
    get(service, token, `${path}${sep}format=json`),
    get(service, token, path, { accept: 'application/json' }),
  ]);
  for (const [label, r] of [
    ['parquet', p],
    ['format=json', j],
    ['accept', a],
  ] as const) {
    if (r.status !== 200) throw new Error(`${label} ${path}: ${r.status} ${Buffer.from(r.bytes).toString('utf8').slice(0, 500)}`);
  }
  if (p.headers.get('content-type') !== 'application/vnd.apache.parquet')
    throw new Error(`parquet content-type ${p.headers.get('content-type')}`);
  for (const r of [j, a])
    if (!/^application\/json/.test(r.headers.get('content-type') ?? ''))
      throw new Error(`json content-type ${r.headers.get('content-type')}`);
  const json = jsonOf(j);
  const viaAccept = jsonOf(a);
  if (JSON.stringify(json) !== JSON.stringify(viaAccept)) throw new Error(`${path}: format=json and Accept: application/json differ`);
  return { parquet: await readParquet(p.bytes), json, headers: p.headers, jsonHeaders: j.headers };
}

/** Column values with NaN as null (how both Parquet and JSON carry a missing value). */
export function nullable(values: ArrayLike<number>): (number | null)[] {
  return Array.from(values, (v) => (Number.isNaN(v) ? null : v));
}

export function zeroFilled(values: ArrayLike<number>): Float64Array {
  return Float64Array.from(values, (v) => (Number.isNaN(v) ? 0 : v));
}

/** The plain mean-max (engine/curves/mean-max-plain.ts, the reference) at the given durations. */
export function plainMeanMax(samples: Float64Array, durations: ArrayLike<number>): { best: Float64Array; start: Int32Array } {
  const d = Int32Array.from(durations);
  const best = new Float64Array(d.length);
  const start = new Int32Array(d.length);
  meanMaxPlain(samples, d, best, start);
  return { best, start };
}

/** Every duration 1..n. */
export function plainMeanMaxAll(samples: Float64Array) {
  return plainMeanMax(
    samples,
    Array.from({ length: samples.length }, (_, i) => i + 1),
  );
}

/** The `durations=all` grid, as docs/api-clients.md has it: every second to 180 s, then every 5 s to 600, 10 s to 1800, 30 s to 3600, 60 s beyond; ≤ max. */
export function allGrid(max: number): number[] {
  const out: number[] = [];
  for (let d = 1; d <= max; ) {
    out.push(d);
    d += d < 180 ? 1 : d < 600 ? 5 : d < 1800 ? 10 : d < 3600 ? 30 : 60;
  }
  return out;
}

export const DEFAULT_GRID = [1, 2, 5, 10, 15, 20, 30, 60, 120, 180, 300, 600, 900, 1200, 1800, 2700, 3600, 7200, 21600];

/** Level k of a value: the highest k with k·step ≤ x (a value that is a whole number of steps in decimal is on its level). */
export function levelOf(x: number, step: number): number {
  return Math.floor(x / step + 1e-9);
}
/** The intensity of level k as the API writes it. */
export function levelValue(k: number, step: number): number {
  return step === 1 ? k : k / Math.round(1 / step);
}

/** Value-indexed view of one curve (best/start at durations 1..n): per level k ≥ 1, the longest d reaching it and that d's start. */
export function plainValueIndexed(best: Float64Array, start: Int32Array, step: number): { duration: number[]; start: number[] } {
  const duration: number[] = [];
  const starts: number[] = [];
  for (let d = 1; d <= best.length; d++) {
    const x = best[d - 1]!;
    if (Number.isNaN(x)) continue;
    const k = levelOf(x, step);
    for (let j = 1; j <= k; j++) {
      if (!(duration[j - 1]! >= d)) {
        duration[j - 1] = d;
        starts[j - 1] = start[d - 1]!;
      }
    }
  }
  return { duration, start: starts };
}

/** AWD written from its definition: per level k (descending from the highest reached), the count of samples at level ≥ k. */
export function plainAwd(samples: ArrayLike<number>, step: number): { levels: number[]; durations: number[] } {
  const ks = Array.from(samples, (x) => (Number.isNaN(x) ? 0 : levelOf(x, step)));
  const top = ks.reduce((m, k) => Math.max(m, k), 0);
  const levels: number[] = [];
  const durations: number[] = [];
  for (let k = top; k >= 1; k--) {
    levels.push(levelValue(k, step));
    durations.push(ks.filter((x) => x >= k).length);
  }
  return { levels, durations };
}

/** numpy's default ("linear") quantile of unsorted values. */
export function quantile(values: number[], q: number): number {
  const v = [...values].sort((a, b) => a - b);
  const h = (v.length - 1) * q;
  const lo = Math.floor(h);
  return lo + 1 < v.length ? v[lo]! + (h - lo) * (v[lo + 1]! - v[lo]!) : v[lo]!;
}

/** The activities of a file as the ingest step sees them (1 Hz grid, start, offset): the independent expectation of /data. */
export async function ingested(bytes: Uint8Array, format: 'fit' | 'csv' = 'fit', sport: string | null = null): Promise<IngestedActivity[]> {
  const result = await ingestFile({ format, bytes: Uint8Array.from(bytes), sport } as never);
  if (!result.ok) throw new Error(`ingest: ${result.code} ${result.message}`);
  return result.activities;
}

export async function poll<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
