import { createHash, randomBytes } from 'node:crypto';
import type { User } from '../../db/database.ts';
import { WebClient } from './http.ts';
import { TEST_PASSWORD } from './users.ts';
import type { TestService } from './service.ts';

/** A browser-like client signed in as `user` through the sign-in form. */
export async function signedIn(service: TestService, user: User): Promise<WebClient> {
  const web = new WebClient(service.url);
  const res = await web.postForm('/signin', { email: user.email, password: TEST_PASSWORD });
  if (res.status !== 303) throw new Error(`sign-in failed: ${res.status}`);
  return web;
}

export function pkcePair() {
  const verifier = randomBytes(48).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export function authorizePath(params: Record<string, string | undefined>): string {
  const q = new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined));
  return `/oauth/authorize?${q}`;
}

/** The consent form's single-use ticket, read from the consent page. */
export function ticketOf(html: string): string {
  const m = /name="ticket" value="([^"]+)"/.exec(html);
  if (!m) throw new Error(`no consent form in: ${html.slice(0, 500)}`);
  return m[1]!;
}

/** GET the authorization request, then answer the consent screen; returns where the browser is sent. */
export async function authorizeAndDecide(
  web: WebClient,
  params: Record<string, string | undefined>,
  decision: 'allow' | 'deny' = 'allow',
): Promise<URL> {
  const page = await web.get(authorizePath(params));
  if (page.status !== 200) throw new Error(`authorize answered ${page.status} ${page.headers.get('location') ?? ''}`);
  const res = await web.postForm('/oauth/authorize/decision', { ticket: ticketOf(await page.text()), decision });
  if (res.status !== 303) throw new Error(`decision answered ${res.status}`);
  return new URL(res.headers.get('location')!);
}

export interface TokenResult {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

/** POST a form to the token (or revocation) endpoint, with optional HTTP Basic client credentials. */
export async function postToken(
  baseUrl: string,
  form: Record<string, string | undefined>,
  opts: { basic?: [string, string]; path?: string } = {},
): Promise<TokenResult> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (opts.basic) {
    const [id, secret] = opts.basic.map((s) => encodeURIComponent(s));
    headers.authorization = `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
  }
  const body = new URLSearchParams(Object.entries(form).filter((e): e is [string, string] => e[1] !== undefined));
  const res = await fetch(`${baseUrl}${opts.path ?? '/api/v1/oauth/token'}`, { method: 'POST', headers, body });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

export async function getJson(baseUrl: string, path: string, token?: string): Promise<{ status: number; headers: Headers; body: any }> {
  const res = await fetch(baseUrl + path, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}
