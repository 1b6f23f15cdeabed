import { TEST_PASSWORD } from './users.ts';

/** A small cookie-keeping client over fetch, for driving web forms the way a browser posts them. */
export class WebClient {
  readonly cookies = new Map<string, string>();
  constructor(readonly baseUrl: string) {}

  get cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async get(path: string, headers: Record<string, string> = {}): Promise<Response> {
    return this.#send(path, { method: 'GET', headers });
  }

  /** POST a form as a same-origin page would (Origin set), unless `origin` says otherwise. */
  async postForm(
    path: string,
    fields: Record<string, string>,
    opts: { origin?: string | null; headers?: Record<string, string> } = {},
  ): Promise<Response> {
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', ...opts.headers };
    const origin = opts.origin === undefined ? this.baseUrl : opts.origin;
    if (origin !== null) headers.origin = origin;
    return this.#send(path, { method: 'POST', headers, body: new URLSearchParams(fields).toString() });
  }

  async #send(path: string, init: { method: string; headers: Record<string, string>; body?: string }) {
    const res = await fetch(this.baseUrl + path, {
      ...init,
      headers: { ...init.headers, ...(this.cookies.size ? { cookie: this.cookieHeader } : {}) },
      redirect: 'manual',
    });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair!.indexOf('=');
      const name = pair!.slice(0, i);
      const value = pair!.slice(i + 1);
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(c)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return res;
  }
}

export async function signUp(client: WebClient, fields: { email: string; password: string; first_name?: string; last_name?: string }) {
  return client.postForm('/signup', {
    first_name: fields.first_name ?? 'Ada',
    last_name: fields.last_name ?? 'Lovelace',
    email: fields.email,
    password: fields.password,
  });
}

/** A fresh web client signed in through the form as `email` (an account made with TEST_PASSWORD). */
export async function signedInClient(baseUrl: string, email: string): Promise<WebClient> {
  const web = new WebClient(baseUrl);
  const res = await web.postForm('/signin', { email, password: TEST_PASSWORD });
  if (res.status !== 303) throw new Error(`sign-in failed: ${res.status}`);
  return web;
}
