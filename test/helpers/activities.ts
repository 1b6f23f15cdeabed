import type { TestService } from './service.ts';

export interface UploadFile {
  name: string;
  bytes: Uint8Array;
  type?: string;
}

/** POST /api/v1/activities/upload as a browser or a client library would (multipart/form-data). */
export async function upload(service: TestService, token: string, files: UploadFile[], fields: Record<string, string | string[]> = {}) {
  const form = new FormData();
  for (const f of files)
    form.append('files', new Blob([f.bytes as Uint8Array<ArrayBuffer>], { type: f.type ?? 'application/octet-stream' }), f.name);
  for (const [name, value] of Object.entries(fields)) for (const v of [value].flat()) form.append(name, v);
  const res = await fetch(`${service.url}/api/v1/activities/upload`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

export async function api(service: TestService, token: string | undefined, method: string, path: string, body?: unknown) {
  const res = await fetch(service.url + path, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  let parsed: any;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = text;
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

/**
 * Poll a source until it is no longer `processing`. A 503 with Retry-After (the database or queue
 * briefly out of reach: a connection that took over 5 s on a machine loaded by CI) is retried, as the
 * API documents and a client does, until the deadline.
 */
export async function waitForSource(service: TestService, token: string, id: string, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await api(service, token, 'GET', `/api/v1/sources/${id}`);
    if (res.status === 503 && res.headers.get('retry-after') && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 500));
      continue;
    }
    if (res.status !== 200) throw new Error(`GET source ${id}: ${res.status} ${JSON.stringify(res.body)}`);
    if (res.body.status !== 'processing') return res.body;
    if (Date.now() > deadline) throw new Error(`source ${id} still processing after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Upload files and wait for every source to finish. */
export async function uploadAndWait(
  service: TestService,
  token: string,
  files: UploadFile[],
  fields: Record<string, string | string[]> = {},
) {
  const res = await upload(service, token, files, fields);
  if (res.status !== 202) throw new Error(`upload: ${res.status} ${JSON.stringify(res.body)}`);
  return Promise.all(res.body.sources.map((s: { id: string }) => waitForSource(service, token, s.id)));
}

/**
 * Until the ingest queue has no job waiting or running: a source is `processed` at its commit, and
 * its job then still appends to the channel columns; a test that removes a host's files waits for it,
 * as a host that loses its disk also loses the process writing to it.
 */
export async function ingestIdle(service: TestService, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  const queue = service.deps.queues.ingest;
  while ((await queue.getActiveCount()) + (await queue.getWaitingCount()) > 0) {
    if (Date.now() > deadline) throw new Error('ingest jobs still running');
    await new Promise((r) => setTimeout(r, 50));
  }
}
