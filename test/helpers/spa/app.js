// A single-page app on its own origin, as a client-side application would be written: a public
// OAuth client (no secret) with PKCE S256, which talks to the service with fetch only. It writes
// what each step saw into window.spa and #state, for the test to read.
const SERVICE = document.querySelector('meta[name=service]').content;
const CLIENT_ID = document.querySelector('meta[name=client-id]').content;
const REDIRECT_URI = `${location.origin}/callback`;
const SCOPES = 'data:read profile offline_access';

const spa = (window.spa = { done: false, error: null });
const show = () => (document.getElementById('state').textContent = JSON.stringify(spa, null, 1));

const base64url = (bytes) =>
  btoa(String.fromCharCode(...new Uint8Array(bytes)))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');

async function discover() {
  const res = await fetch(`${SERVICE}/.well-known/openid-configuration`);
  if (!res.ok) throw new Error(`discovery: ${res.status}`);
  return res.json();
}

/** POST a form (a CORS simple request: no preflight) and read the JSON answer. */
async function postForm(url, fields) {
  const res = await fetch(url, { method: 'POST', body: new URLSearchParams(fields) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, cacheControl: res.headers.get('cache-control') };
}

/** A bearer request (preflighted: Authorization is not a safelisted header). */
function api(path, token, headers = {}) {
  return fetch(SERVICE + path, { headers: { Authorization: `Bearer ${token}`, ...headers } });
}

async function connect() {
  const meta = await discover();
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const challenge = base64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
  const state = base64url(crypto.getRandomValues(new Uint8Array(16)));
  sessionStorage.setItem('oauth', JSON.stringify({ verifier, state }));
  const url = new URL(meta.authorization_endpoint);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: CLIENT_ID,
    redirect_uri: REDIRECT_URI,
    scope: SCOPES,
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  }).toString();
  location.assign(url);
}

/** Does the service answer a fetch that carries the session cookie? (It must not be readable.) */
async function withCookie(init) {
  try {
    const res = await fetch(`${SERVICE}/api/v1/oauth/userinfo`, { credentials: 'include', ...init });
    return `readable ${res.status}`;
  } catch (err) {
    return `blocked (${err.name})`;
  }
}

async function callback() {
  const params = new URLSearchParams(location.search);
  const saved = JSON.parse(sessionStorage.getItem('oauth'));
  spa.callback = {
    stateMatches: params.get('state') === saved.state,
    iss: params.get('iss'),
    hasCode: params.has('code'),
    error: params.get('error'),
  };
  const meta = await discover();
  spa.discovery = {
    token_endpoint: meta.token_endpoint,
    revocation_endpoint: meta.revocation_endpoint,
    userinfo_endpoint: meta.userinfo_endpoint,
  };

  const exchanged = await postForm(meta.token_endpoint, {
    grant_type: 'authorization_code',
    code: params.get('code'),
    client_id: CLIENT_ID,
    code_verifier: saved.verifier,
    redirect_uri: REDIRECT_URI,
  });
  const tokens = exchanged.body;
  spa.token = {
    status: exchanged.status,
    token_type: tokens.token_type,
    scope: tokens.scope,
    expires_in: tokens.expires_in,
    hasRefresh: !!tokens.refresh_token,
    cacheControl: exchanged.cacheControl,
  };

  const list = await api('/api/v1/activities/', tokens.access_token);
  const activities = await list.json();
  spa.list = {
    status: list.status,
    ids: activities.map((a) => a.id),
    sports: activities.map((a) => a.sport),
    rateLimitRemaining: list.headers.get('RateLimit-Remaining'),
    requestId: list.headers.get('x-request-id'),
  };

  const curve = await api('/api/v1/activities/longitudinal-mean-max?metric=power', tokens.access_token, {
    Accept: 'application/vnd.apache.parquet',
  });
  const bytes = new Uint8Array(await curve.arrayBuffer());
  const ascii = (b) => String.fromCharCode(...b);
  spa.curve = {
    status: curve.status,
    contentType: curve.headers.get('content-type'),
    contentDisposition: curve.headers.get('content-disposition'),
    length: bytes.length,
    head: ascii(bytes.slice(0, 4)),
    tail: ascii(bytes.slice(-4)),
  };

  const refreshed = await postForm(meta.token_endpoint, {
    grant_type: 'refresh_token',
    refresh_token: tokens.refresh_token,
    client_id: CLIENT_ID,
  });
  spa.refresh = {
    status: refreshed.status,
    newAccessToken: refreshed.body.access_token !== tokens.access_token,
    sameRefreshToken: refreshed.body.refresh_token === tokens.refresh_token,
  };
  const access = refreshed.body.access_token;

  const me = await fetch(meta.userinfo_endpoint, { headers: { Authorization: `Bearer ${access}` } });
  spa.userinfo = { status: me.status, ...(await me.json()) };

  // The user is signed in to the service in this browser: its cookie goes along with
  // credentials: 'include', but the answer must stay unreadable (no Allow-Credentials).
  spa.cookie = { simple: await withCookie({}), preflighted: await withCookie({ headers: { 'X-Request-Id': 'spa-cookie' } }) };

  const revoked = await postForm(meta.revocation_endpoint, { token: tokens.refresh_token, client_id: CLIENT_ID });
  spa.revoke = { status: revoked.status };

  const after = await api('/api/v1/activities/', access);
  spa.afterRevoke = { status: after.status, wwwAuthenticate: after.headers.get('WWW-Authenticate'), body: await after.json() };
  const again = await postForm(meta.token_endpoint, {
    grant_type: 'refresh_token',
    refresh_token: tokens.refresh_token,
    client_id: CLIENT_ID,
  });
  spa.refreshAfterRevoke = { status: again.status, error: again.body.error };
}

async function main() {
  try {
    if (location.pathname === '/callback') await callback();
    else document.getElementById('connect').addEventListener('click', () => connect().catch(fail));
  } catch (err) {
    fail(err);
  }
  if (location.pathname === '/callback') spa.done = true;
  show();
}

function fail(err) {
  spa.error = String(err?.stack ? err.stack : err);
  show();
}

main();
