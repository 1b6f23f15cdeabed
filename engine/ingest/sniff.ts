/**
 * Content sniffing for uploads: what a file's bytes say it is, before any parsing. An upload is
 * refused at once (422) only when the content is recognisably something else; a damaged FIT, CSV,
 * GPX or TCX file is accepted and fails on its own with a precise code when the worker reads it.
 *
 * XML is told apart by its root element, after any BOM, XML declaration, comments and processing
 * instructions: `<gpx>` is GPX, `<TrainingCenterDatabase>` is TCX (with any namespace prefix),
 * whatever the file's name; other XML (or HTML) is refused. XML whose root is not within the first
 * 64 KiB (a file of comments) is taken for what its name says (`.gpx`, `.tcx`), else refused.
 */
import { rootElement } from './xml.ts';

export type ActivityFormat = 'fit' | 'csv' | 'gpx' | 'tcx';
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

/** The name without a `.gz` suffix, lower-cased extension rules: `.fit`, `.csv`, `.gpx`, `.tcx`. */
export function declaredFormat(filename: string): ActivityFormat | undefined {
  const m = /\.(fit|csv|gpx|tcx)$/.exec(filename.toLowerCase().replace(/\.gz$/, ''));
  return m ? (m[1] as ActivityFormat) : undefined;
}

const XML_ROOTS: Record<string, ActivityFormat> = { gpx: 'gpx', TrainingCenterDatabase: 'tcx' };

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
  if (text.startsWith('<')) {
    const root = rootElement(text);
    const format = root === undefined ? undefined : XML_ROOTS[root];
    if (format) return { format };
    if (root === undefined && (declared === 'gpx' || declared === 'tcx') && !/<html/i.test(text)) return { format: declared };
    return {
      unsupported: `the content is XML or HTML${root ? ` with root element <${root}>` : ''}, neither GPX (<gpx>) nor TCX (<TrainingCenterDatabase>)`,
    };
  }
  if (text.startsWith('{') || text.startsWith('[')) return { unsupported: 'the content is JSON' };
  if (declared === 'csv') return { format: 'csv' };
  return { unsupported: 'expected a FIT (.fit), CSV (.csv), GPX (.gpx) or TCX (.tcx) file, optionally gzip-compressed (.gz)' };
}
