/**
 * Reading fit-file-parser's messages (engine/ingest/fit.ts): a field's value when it is a finite
 * number, a valid Date (as epoch ms) or a non-blank string, else undefined.
 */

export type Fields = Record<string, unknown>;

export function num(m: Fields, key: string): number | undefined {
  const v = m[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

export function time(m: Fields, key: string): number | undefined {
  const v = m[key];
  return v instanceof Date && Number.isFinite(v.getTime()) ? v.getTime() : undefined;
}

export function str(m: Fields, key: string): string | undefined {
  const v = m[key];
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
}

export const fields = (m: object) => m as Fields;
