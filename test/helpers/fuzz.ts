// Hostile inputs for the fuzz test (test/fuzz.test.ts): values, a seeded generator, and a runner
// that sends requests a few at a time and records the ones whose answers break the rules.

import { prng } from './prng.ts';

/** Seeded values, so every run sends the same requests. */
export const seeded = prng;

/** `count` items of `items` chosen by `random`, in their original order. */
export function sample<T>(items: readonly T[], count: number, random: () => number): T[] {
  if (items.length <= count) return [...items];
  const picked = new Set<number>();
  while (picked.size < count) picked.add(Math.floor(random() * items.length));
  return [...picked].sort((a, b) => a - b).map((i) => items[i]!);
}

/**
 * A string percent-encoded for a URL or a form, keeping what encodeURIComponent cannot: a lone
 * surrogate is sent as its (ill-formed) three UTF-8-style bytes, e.g. U+D800 as `%ED%A0%80`.
 */
export function encodeLoose(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const high = c >= 0xd800 && c <= 0xdbff;
    const low = c >= 0xdc00 && c <= 0xdfff;
    if (high && i + 1 < s.length && s.charCodeAt(i + 1) >= 0xdc00 && s.charCodeAt(i + 1) <= 0xdfff) {
      out += encodeURIComponent(s.slice(i, i + 2));
      i++;
    } else if (high || low) {
      out += [0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    } else {
      out += encodeURIComponent(s[i]!);
    }
  }
  return out;
}

/** `key=value&…` with every value encoded loosely (see encodeLoose). */
export function looseForm(fields: Record<string, string | string[]>): string {
  return Object.entries(fields)
    .flatMap(([k, v]) => [v].flat().map((x) => `${encodeLoose(k)}=${encodeLoose(x)}`))
    .join('&');
}

/** JSON nested `depth` levels deep: `[[[…]]]` (built as text: no recursion anywhere). */
export function deepJsonText(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth);
}

/** Text values for query, path and form fields (decoded: the runner encodes them). */
export const HOSTILE_TEXT: { name: string; value: string; refused?: boolean; always?: boolean; beyondAnyBound?: boolean }[] = [
  // Text PostgreSQL cannot store: every one of these must be refused with a 4xx.
  { name: 'NUL', value: '\u0000', refused: true },
  { name: 'NUL inside', value: 'a\u0000b', refused: true },
  // Percent-encoded, a lone surrogate's bytes are invalid UTF-8: the server decodes them as U+FFFD.
  { name: 'lone high surrogate', value: '\ud800', always: true },
  { name: 'lone low surrogate', value: 'x\udfff', always: true },
  { name: 'long', always: true, value: 'x'.repeat(5000) },
  { name: 'empty', value: '' },
  { name: 'blank', value: '   ' },
  { name: 'negative', value: '-1' },
  { name: 'zero', value: '0' },
  { name: 'fraction', value: '1.5' },
  // Numbers beyond any bound a numeric field has (`beyondAnyBound`): every one goes to every numeric
  // parameter, every run, and must be refused with a 422 naming it; other fields get a sample.
  { name: 'huge number', value: '1e308', beyondAnyBound: true },
  { name: 'huge integer', value: '99999999999999999999', beyondAnyBound: true },
  { name: '24-digit integer', value: '999999999999999999999999', beyondAnyBound: true },
  { name: '300-digit integer', value: '7'.repeat(300), beyondAnyBound: true },
  { name: '300-digit decimal', value: `1${'0'.repeat(299)}.25`, beyondAnyBound: true },
  { name: 'int32 overflow', value: '2147483648' },
  { name: 'tiny number', value: '1e-300' },
  { name: 'tiny decimal', value: `0.${'0'.repeat(320)}1` },
  { name: 'negative zero', value: '-0' },
  { name: 'NaN', value: 'NaN' },
  { name: 'nan, lower case', value: 'nan' },
  { name: 'Infinity', value: '-Infinity' },
  { name: '+Infinity', value: '+Infinity' },
  { name: 'inf', value: 'inf' },
  { name: 'hexadecimal', value: '0x7fffffff' },
  // (600 items: 2.6 kB, 3.6 kB encoded; a page given three of them stays under Node's 16 kB of headers)
  { name: 'long list', value: Array.from({ length: 600 }, (_, i) => String(i + 1)).join(',') },
  { name: 'first date', always: true, value: '0001-01-01' },
  { name: 'last date', always: true, value: '9999-12-31' },
  { name: 'year zero', value: '0000-01-01' },
  { name: 'first instant', always: true, value: '0001-01-01T00:00:00Z' },
  { name: 'last instant', always: true, value: '9999-12-31T23:59:59Z' },
  { name: 'first instant, east', always: true, value: '0001-01-01T00:00:00+14:00' },
  { name: 'last instant, west', always: true, value: '9999-12-31T23:59:59-12:00' },
  { name: 'extended year', value: '+275760-09-13T00:00:00Z' },
  { name: 'impossible date', value: '2024-02-30' },
  { name: 'comma list', value: 'a,,b,' },
  { name: 'all', value: 'all' },
  { name: 'boolean', value: 'true' },
  { name: 'json', value: '{"a":[1]}' },
  { name: 'html', value: '<script>alert(1)</script>' },
  { name: 'emoji', value: '🚴‍♀️' },
  { name: 'control chars', value: '\u0001\u001f\u007f' },
  { name: 'path tricks', value: '../../etc/passwd' },
];

/** JSON values for body fields (the whole body too). */
export const HOSTILE_JSON: {
  name: string;
  value: unknown;
  text?: string;
  refused?: boolean;
  always?: boolean;
  beyondAnyBound?: boolean;
}[] = [
  { name: 'NUL', value: '\u0000', refused: true },
  { name: 'NUL inside', value: 'a\u0000b', refused: true },
  { name: 'lone high surrogate', value: '\ud800', refused: true },
  { name: 'lone low surrogate', value: 'x\udfff', refused: true },
  { name: 'NUL in an array', value: ['a', '\u0000'], refused: true },
  { name: 'NUL in a key', value: { 'a\u0000': 1 }, refused: true },
  { name: 'surrogate in a nested value', value: { a: { b: ['\udc00'] } }, refused: true },
  { name: 'deep nesting (50,000)', always: true, value: undefined, text: deepJsonText(50_000), refused: true },
  { name: 'long string', always: true, value: 'x'.repeat(20_000) },
  { name: 'empty string', value: '' },
  { name: 'negative', value: -1 },
  { name: 'zero', value: 0 },
  { name: 'fraction', value: 1.5 },
  { name: 'huge', value: 1e308, beyondAnyBound: true },
  { name: 'huge negative', value: -1e308, beyondAnyBound: true },
  { name: 'beyond 2^53', value: 2 ** 53 + 2 },
  { name: '300-digit number', value: undefined, text: '7'.repeat(300), beyondAnyBound: true },
  { name: 'beyond a double (1e400)', value: undefined, text: '1e400', beyondAnyBound: true },
  { name: 'tiny', value: 1e-300 },
  { name: 'negative zero', value: undefined, text: '-0' },
  { name: 'many numbers', value: Array.from({ length: 5000 }, (_, i) => i) },
  { name: 'int32 overflow', value: 2 ** 31 },
  { name: 'first instant', always: true, value: '0001-01-01T00:00:00Z' },
  { name: 'last instant', always: true, value: '9999-12-31T23:59:59Z' },
  { name: 'first instant, east', always: true, value: '0001-01-01T00:00:00+14:00' },
  { name: 'last instant, west', always: true, value: '9999-12-31T23:59:59-12:00' },
  { name: 'first date', always: true, value: '0001-01-01' },
  { name: 'last date', always: true, value: '9999-12-31' },
  { name: 'extended year', value: '+275760-09-13T00:00:00Z' },
  { name: 'true', value: true },
  { name: 'null', value: null },
  { name: 'object', value: {} },
  { name: 'array', value: [] },
  { name: 'array of numbers', value: [1, 2] },
  { name: 'many items', value: Array.from({ length: 2000 }, (_, i) => `t${i}`) },
];

/** Whole bodies (as sent). */
export const HOSTILE_BODIES: { name: string; text: string; contentType?: string; refused?: boolean }[] = [
  { name: 'deep nesting (50,000)', text: deepJsonText(50_000), refused: true },
  { name: 'deep object nesting (50,000)', text: '{"a":'.repeat(50_000) + '1' + '}'.repeat(50_000), refused: true },
  { name: 'NUL member', text: '{"a":"\\u0000"}', refused: true },
  { name: 'lone surrogate member', text: '{"a":"\\ud800"}', refused: true },
  { name: 'array', text: '[]' },
  { name: 'string', text: '"x"' },
  { name: 'number', text: '1' },
  { name: 'null', text: 'null' },
  { name: 'broken JSON', text: '{"a":' },
  { name: 'empty', text: '' },
  { name: 'too large (2 MB)', text: JSON.stringify({ a: 'x'.repeat(2_000_000) }) },
  { name: 'form instead of JSON', text: 'a=%00', contentType: 'application/x-www-form-urlencoded' },
  { name: 'text instead of JSON', text: 'hello', contentType: 'text/plain' },
];

export interface FuzzRequest {
  /** What was varied, for the report. */
  label: string;
  method: string;
  /** Path and query, already encoded. */
  url: string;
  headers: Record<string, string>;
  body?: string;
  /** The value must be refused (4xx), not merely survive. */
  refused?: boolean;
  /** How a 4xx answer must carry its reason: `detail` (API JSON), `error` (OAuth JSON) or a page (HTML). */
  expect: 'detail' | 'oauth' | 'html' | 'any';
}

export interface FuzzFailure {
  request: FuzzRequest;
  status: number;
  why: string;
  answer: string;
}

function shortBody(s: string | undefined): string {
  if (s === undefined) return '';
  return s.length > 200 ? `${s.slice(0, 200)}… (${s.length} chars)` : s;
}

export function describeFailure(f: FuzzFailure): string {
  const r = f.request;
  const url = r.url.length > 300 ? `${r.url.slice(0, 300)}… (${r.url.length} chars)` : r.url;
  return `${r.label}\n  ${r.method} ${url}\n  ${r.body !== undefined ? `body: ${shortBody(r.body)}\n  ` : ''}→ ${f.status}: ${f.why}\n  answer: ${shortBody(f.answer)}`;
}

/** Check one answer against the rules: never 5xx; a refused value gets a 4xx; a 4xx carries its reason. */
export function judge(request: FuzzRequest, status: number, contentType: string, text: string, location = ''): string | undefined {
  if (status >= 500) return 'a 5xx';
  // An OAuth error sent back to the client's redirect URI is a refusal too.
  const redirectedError = status >= 300 && status < 400 && /[?&]error=/.test(location);
  if (request.refused && (status < 400 || status >= 500) && !redirectedError)
    return 'a value that must be refused (text PostgreSQL cannot store, a number beyond its bound) was not';
  if (status < 400 || request.expect === 'any') return undefined;
  if (request.expect === 'html') return /text\/html/.test(contentType) && text.length > 0 ? undefined : 'a 4xx without a page';
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return 'a 4xx without a JSON body';
  }
  const b = body as { detail?: unknown; error?: unknown };
  if (request.expect === 'oauth') return typeof b.error === 'string' ? undefined : 'an OAuth 4xx without `error`';
  if (typeof b.detail === 'string' && b.detail) return undefined;
  if (Array.isArray(b.detail) && b.detail.length && b.detail.every((d) => Array.isArray(d?.loc) && typeof d?.msg === 'string'))
    return undefined;
  return 'a 4xx without a `detail`';
}

/**
 * Send every request, `concurrency` at a time; the answers that break the rules. With `limitMs`, an
 * answer that takes longer (headers and body) breaks them too.
 */
export async function runAll(
  baseUrl: string,
  requests: FuzzRequest[],
  concurrency = 4,
  limitMs = 20_000,
  options: { inFlight?: Set<FuzzRequest>; stop?: AbortSignal } = {},
): Promise<FuzzFailure[]> {
  const failures: FuzzFailure[] = [];
  let next = 0;
  async function lane() {
    while (next < requests.length && !options.stop?.aborted) {
      const request = requests[next++]!;
      options.inFlight?.add(request);
      let status = 0;
      let contentType = '';
      let text = '';
      let location = '';
      const sent = performance.now();
      try {
        const res = await fetch(baseUrl + request.url, {
          method: request.method,
          headers: request.headers,
          ...(request.body !== undefined ? { body: request.body } : {}),
          redirect: 'manual',
          signal: AbortSignal.any([AbortSignal.timeout(Math.max(20_000, limitMs + 5_000)), ...(options.stop ? [options.stop] : [])]),
        });
        status = res.status;
        contentType = res.headers.get('content-type') ?? '';
        location = res.headers.get('location') ?? '';
        // A stream (NDJSON) would run for a minute: its status and headers are the answer.
        text = /ndjson/.test(contentType) ? (await res.body?.cancel(), '') : await res.text();
      } catch (err) {
        options.inFlight?.delete(request);
        failures.push({ request, status: 0, why: `no answer (${(err as Error).message})`, answer: '' });
        continue;
      }
      options.inFlight?.delete(request);
      const took = performance.now() - sent;
      const why =
        took > limitMs
          ? `answered after ${Math.round(took)} ms (limit ${limitMs} ms)`
          : judge(request, status, contentType, text, location);
      if (why) failures.push({ request, status, why, answer: text });
    }
  }
  await Promise.all(Array.from({ length: concurrency }, lane));
  return failures;
}
