/**
 * The names of a history import's entries (lib/archive.ts): which are unsafe, which are OS litter
 * left out silently, which are directories, and which are activity files (`.fit`, `.csv`, `.gpx`, `.tcx`, any
 * gzipped), with the name reading one returns.
 */
import yauzl from 'yauzl';
import type { EntryFormat, SkipReason } from './archive-model.ts';

type Classified =
  | { kind: 'ignore' }
  | { kind: 'directory' }
  | { kind: 'skip'; reason: SkipReason; detail: string }
  | { kind: 'file'; format: EntryFormat; gzip: boolean; fileName: string };

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;
const EXTENSION = /\.(fit|csv|gpx|tcx)(\.gz)?$/i;
const MAX_NAME_LENGTH = 4096;

/** Why `name` is unsafe, or null. `name` is `/`-separated; a trailing `/` (a directory) is allowed. */
export function unsafeName(name: string): string | null {
  if (name === '') return 'empty name';
  if (name.length > MAX_NAME_LENGTH) return 'name too long';
  if (CONTROL.test(name)) return 'control character (e.g. NUL) in name';
  if (name.includes('\\')) return 'backslash in name';
  if (name.startsWith('/') || /^[a-zA-Z]:/.test(name)) return 'absolute path';
  const segments = (name.endsWith('/') ? name.slice(0, -1) : name).split('/');
  if (segments.includes('..')) return '".." segment';
  if (segments.includes('.')) return '"." segment';
  if (segments.includes('')) return 'empty segment';
  return yauzl.validateFileName(name);
}

export function classify(name: string): Classified {
  const unsafe = unsafeName(name);
  if (unsafe !== null) return { kind: 'skip', reason: 'unsafe_name', detail: unsafe };
  const segments = (name.endsWith('/') ? name.slice(0, -1) : name).split('/');
  if (segments.some((s) => s === '__MACOSX' || s.startsWith('.'))) return { kind: 'ignore' };
  if (name.endsWith('/')) return { kind: 'directory' };
  const base = segments[segments.length - 1]!;
  const m = EXTENSION.exec(base);
  if (!m) return { kind: 'skip', reason: 'unsupported', detail: 'not a .fit, .csv, .gpx or .tcx file (optionally .gz)' };
  const gzip = m[2] !== undefined;
  return { kind: 'file', format: m[1]!.toLowerCase() as EntryFormat, gzip, fileName: gzip ? base.slice(0, -3) : base };
}
