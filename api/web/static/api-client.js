// The web app's calls to the public API: the same endpoints third-party clients use, authenticated
// by the session cookie (same origin). Errors carry the API's status and `detail`.

export class ApiError extends Error {
  constructor(status, detail) {
    super(typeof detail === 'string' ? detail : JSON.stringify(detail));
    this.status = status;
    this.detail = detail;
  }
}

/** GET (or another method) a JSON answer from the API; throws ApiError on a non-2xx answer. */
export async function apiJson(path, init = {}) {
  const res = await fetch(path, { credentials: 'same-origin', ...init, headers: { accept: 'application/json', ...(init.headers ?? {}) } });
  const text = await res.text();
  let body;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = text;
  }
  if (!res.ok) throw new ApiError(res.status, body?.detail ?? body ?? res.statusText);
  return body;
}

/** A frame as column-oriented JSON (`format=json`): `{column: [values…]}`. */
export function apiFrame(path) {
  return apiJson(path + (path.includes('?') ? '&' : '?') + 'format=json');
}

/** Instants in frames are ISO strings; uPlot wants seconds since the epoch. */
export function epochSeconds(isoValues) {
  const out = new Float64Array(isoValues.length);
  for (let i = 0; i < isoValues.length; i++) out[i] = isoValues[i] === null ? NaN : Date.parse(isoValues[i]) / 1000;
  return out;
}

/** The local date (`YYYY-MM-DD`) of the newest activity of a sport (null: all sports), or null when there is none; asked once per sport and page. */
const latestDays = new Map();
export function latestDay(sport) {
  const key = sport ?? '';
  if (!latestDays.has(key)) {
    const q = new URLSearchParams({ limit: '1' });
    if (sport) q.set('sport', sport);
    latestDays.set(
      key,
      apiJson(`/api/v1/activities/?${q}`).then((list) => list[0]?.start_local.slice(0, 10) ?? null),
    );
  }
  return latestDays.get(key);
}
