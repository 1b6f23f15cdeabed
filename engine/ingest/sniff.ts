/**
 * Content sniffing for uploads: what a file's bytes say it is, before any parsing. An upload is
 * refused at once (422) only when the content is recognisably something else; a damaged FIT or
 * CSV file is accepted and fails on its own with a precise code when the worker reads it.
 */

export type ActivityFormat = 'fit' | 'csv';
export type Sniffed = { format: ActivityFormat } | { unsupported: string };

const SIGNATURES: [string, number[]][] = [
  ['a zip archive', [0x50, 0x4b, 0x03, 0x04]],
  ['a PNG image', [0x89, 0x50, 0x4e, 0x47]],
  ['a JPEG image', [0xff, 0xd8, 0xff]],
  ['a PDF document', [0x25, 0x50, 0x44, 0x46]],
  ['a gzip stream inside a gzip stream', [0x1f, 0x8b]],
  ['a 7-zip archive', [0x37, 0x7a, 0xbc, 0xaf]],
  ['a bzip2 stream', [0x42, 0x5a, 0x68]],
];

export function isGzip(bytes: Uint8Array): boolean {
  return bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b;
}

/** A FIT file header: size 12 or 14, then ".FIT" at bytes 8–11. */
export function hasFitHeader(bytes: Uint8Array): boolean {
  return (
    bytes.length >= 12 &&
    (bytes[0] === 12 || bytes[0] === 14) &&
    bytes[8] === 0x2e &&
    bytes[9] === 0x46 &&
    bytes[10] === 0x49 &&
    bytes[11] === 0x54
  );
}

/** The name without a `.gz` suffix, lower-cased extension rules: `.fit`, `.csv`. */
export function declaredFormat(filename: string): ActivityFormat | undefined {
  const name = filename.toLowerCase().replace(/\.gz$/, '');
  if (name.endsWith('.fit')) return 'fit';
  if (name.endsWith('.csv')) return 'csv';
  return undefined;
}

/** Sniff decompressed content (`bytes`) uploaded under `filename`. */
export function sniff(filename: string, bytes: Uint8Array): Sniffed {
  if (hasFitHeader(bytes)) return { format: 'fit' };
  const declared = declaredFormat(filename);
  for (const [what, magic] of SIGNATURES) {
    if (bytes.length >= magic.length && magic.every((b, i) => bytes[i] === b)) return { unsupported: `the content is ${what}` };
  }
  if (declared === 'fit') return { format: 'fit' };
  const head = bytes.subarray(0, 64 * 1024);
  if (head.includes(0)) return { unsupported: 'the content is binary but not a FIT file' };
  const text = new TextDecoder('utf-8', { fatal: false })
    .decode(head)
    .replace(/^\uFEFF/, '')
    .trimStart();
  if (text.startsWith('<')) return { unsupported: 'the content is XML or HTML (GPX and TCX are not supported)' };
  if (text.startsWith('{') || text.startsWith('[')) return { unsupported: 'the content is JSON' };
  if (declared === 'csv') return { format: 'csv' };
  return { unsupported: 'expected a FIT file (.fit) or a CSV file (.csv), optionally gzip-compressed (.gz)' };
}
