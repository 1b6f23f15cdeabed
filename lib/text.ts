/**
 * Text the service refuses at its edge: PostgreSQL stores neither a NUL character (U+0000) in text
 * or jsonb, nor — in jsonb — a lone UTF-16 surrogate (elsewhere the driver would silently turn one
 * into U+FFFD). And JSON deeper than a bound, which recursive code (zod, JSON.stringify, the
 * driver) would overflow the stack on.
 */

/** The most levels of nesting any JSON input may have (app metadata has its own, lower bound). */
export const MAX_JSON_DEPTH = 64;

/** A high surrogate not followed by a low one, or a low one not preceded by a high one (String#isWellFormed, before ES2024). */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why `s` cannot be stored as text, or undefined when it can. */
export function textProblem(s: string): string | undefined {
  if (s.includes('\u0000')) return 'must not contain a NUL character (U+0000)';
  if (LONE_SURROGATE.test(s)) return 'must not contain an unpaired UTF-16 surrogate (invalid Unicode)';
  return undefined;
}

export interface TextIssue {
  /** Where, from the root of the value: object keys and array indexes. */
  path: (string | number)[];
  msg: string;
  type: 'string_nul' | 'string_unicode' | 'value_error.depth';
}

/**
 * Walk any parsed input (a query object, path parameters, a JSON body) without recursion and list
 * its strings — values and keys — that cannot be stored, and nesting beyond `maxDepth` (each object
 * or array is one level). Stops at `limit` issues.
 */
export function textIssues(value: unknown, maxDepth = MAX_JSON_DEPTH, limit = 10): TextIssue[] {
  const issues: TextIssue[] = [];
  const stack: { value: unknown; path: (string | number)[] }[] = [{ value, path: [] }];
  while (stack.length && issues.length < limit) {
    const { value: v, path } = stack.pop()!;
    if (typeof v === 'string') {
      const problem = textProblem(v);
      if (problem) issues.push({ path, msg: `The value ${problem}`, type: problem.includes('NUL') ? 'string_nul' : 'string_unicode' });
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (path.length >= maxDepth) {
      issues.push({ path, msg: `The value is nested more than ${maxDepth} levels deep`, type: 'value_error.depth' });
      continue;
    }
    const entries: [string | number, unknown][] = Array.isArray(v) ? v.map((x, i) => [i, x]) : Object.entries(v);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i]!;
      const keyProblem = typeof key === 'string' ? textProblem(key) : undefined;
      if (keyProblem)
        issues.push({
          path: [...path, key],
          msg: `The key ${keyProblem}`,
          type: keyProblem.includes('NUL') ? 'string_nul' : 'string_unicode',
        });
      else stack.push({ value: child, path: [...path, key] });
    }
  }
  return issues;
}
