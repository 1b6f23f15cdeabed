/** RFC 9745 `Deprecation` (the date the parameters were deprecated) and a `Link` to their replacement's documentation. */
export const DEPRECATED_SINCE = '@1767225600'; // 2026-01-01T00:00:00Z

export const DEPRECATION_HEADERS = {
  Deprecation: 'Present when a deprecated parameter (date, window_days, by=intensity for power) was used: RFC 9745 date of the deprecation',
  Link: 'With Deprecation: the documentation of the replacement (rel="deprecation")',
};

export function deprecationHeaders(deprecated: boolean): Record<string, string> | undefined {
  return deprecated ? { Deprecation: DEPRECATED_SINCE, Link: '</docs>; rel="deprecation"; type="text/html"' } : undefined;
}
