/**
 * Which representation a frame response gets (docs/api-clients.md, "Curves and time series"): Parquet by default, JSON on request.
 * The engine writes both (engine/frames/); only the API reads HTTP headers.
 */

/** The media type of Parquet responses. */
export const PARQUET_MEDIA_TYPE = 'application/vnd.apache.parquet';

// ---------------------------------------------------------------------------------------------
// Content negotiation

const PARQUET_TYPES = [PARQUET_MEDIA_TYPE, 'application/octet-stream'];

/** The quality the Accept header gives `mediaType` (the most specific matching range wins; 0 when none matches). */
function quality(ranges: { type: string; subtype: string; q: number }[], mediaType: string): number {
  const [type, subtype] = mediaType.split('/') as [string, string];
  let best = -1;
  let q = 0;
  for (const range of ranges) {
    let specificity: number;
    if (range.type === type && range.subtype === subtype) specificity = 2;
    else if (range.type === type && range.subtype === '*') specificity = 1;
    else if (range.type === '*' && range.subtype === '*') specificity = 0;
    else continue;
    if (specificity > best) {
      best = specificity;
      q = range.q;
    }
  }
  return q;
}

/**
 * The rule for frame responses (docs/api-clients.md): JSON when `format=json`, or when the Accept header prefers
 * application/json (a higher quality) over Parquet (application/vnd.apache.parquet or
 * application/octet-stream); `format=parquet` forces Parquet; otherwise (no header, ties, `*∕*`) Parquet.
 */
export function wantsJson(accept: string | undefined, format: string | undefined): boolean {
  const asked = format?.trim().toLowerCase();
  if (asked === 'json') return true;
  if (asked === 'parquet') return false;
  if (!accept) return false;
  const ranges: { type: string; subtype: string; q: number }[] = [];
  for (const item of accept.split(',')) {
    const [mediaRange, ...parameters] = item.split(';');
    const [type, subtype] = (mediaRange ?? '').trim().toLowerCase().split('/');
    if (!type || !subtype) continue;
    let q = 1;
    for (const parameter of parameters) {
      const [key, value] = parameter.split('=');
      if (key?.trim().toLowerCase() === 'q') {
        const parsed = Number(value?.trim());
        q = Number.isFinite(parsed) ? Math.min(1, Math.max(0, parsed)) : 1;
      }
    }
    ranges.push({ type, subtype, q });
  }
  const json = quality(ranges, 'application/json');
  const parquet = Math.max(...PARQUET_TYPES.map((mediaType) => quality(ranges, mediaType)));
  return json > 0 && json > parquet;
}

/**
 * `Content-Disposition` of a Parquet answer: saved under a name that says what it is and ends in
 * `.parquet` (a browser would otherwise save it under the path's last segment, with no extension):
 * the path after /api/v1/activities/ joined with `-`, e.g. `longitudinal-mean-max.parquet`,
 * `<activity id>-mean-max.parquet`.
 */
export function parquetDisposition(path: string): string {
  const name =
    path
      .replace(/^\/api\/v1\/activities\/?/, '')
      .split('/')
      .filter(Boolean)
      .join('-')
      .replace(/[^A-Za-z0-9._-]/g, '_') || 'activities';
  return `attachment; filename="${name}.parquet"`;
}
