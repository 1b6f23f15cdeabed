import test from 'ava';
import fc from 'fast-check';
import { matchRedirectUri, redirectUriProblem } from '../api/services/oauth/redirect-uris.ts';

test('registration accepts https, loopback http on any port and private-use schemes', (t) => {
  for (const uri of [
    'https://app.example/cb',
    'https://app.example:8443/a/b?x=1',
    'http://localhost',
    'http://localhost:3000/cb',
    'http://127.0.0.1:53682/callback',
    'http://[::1]:8080/cb',
    'com.example.app:/oauth2redirect',
    'myapp://callback',
  ])
    t.is(redirectUriProblem(uri), undefined, uri);
});

test('registration refuses public http, fragments, credentials, dangerous schemes and non-URIs', (t) => {
  const cases: [string, RegExp][] = [
    ['http://app.example/cb', /plain http/],
    ['http://10.0.0.1/cb', /plain http/],
    ['https://app.example/cb#x', /fragment/],
    ['https://app.example/cb#', /fragment/],
    ['https://u:p@app.example/cb', /credentials/],
    ['javascript:alert(1)', /scheme/],
    ['data:text/html,hi', /scheme/],
    ['file:///etc/passwd', /scheme/],
    ['/relative/path', /absolute/],
    ['', /absolute/],
    ['https://app .example/cb', /absolute/],
  ];
  for (const [uri, problem] of cases) t.regex(redirectUriProblem(uri) ?? '', problem, uri);
});

test('matching: https by sub-path on the same port, loopback on any port, private-use exactly', (t) => {
  const registered = ['https://app.example/cb', 'http://localhost/', 'com.example.app:/oauth'];
  const yes = [
    'https://app.example/cb',
    'https://app.example/cb/',
    'https://app.example/cb/x?y=1',
    'https://APP.example/cb',
    'http://localhost:1234/anything',
    'com.example.app:/oauth',
  ];
  const no = [
    'https://app.example/cbx',
    'https://app.example/',
    'https://app.example:444/cb',
    'https://evil.example/cb',
    'http://app.example/cb',
    'https://app.example/cb#f',
    'http://127.0.0.1/cb',
    'com.example.app:/oauth/x',
    'com.example.app:/OAUTH',
    'https://app.example/cb/../x',
    'https://app.example/cb/%2e%2e/x',
  ];
  for (const uri of yes) t.truthy(matchRedirectUri(registered, uri), uri);
  for (const uri of no) t.is(matchRedirectUri(registered, uri), undefined, uri);
});

test('a registered https URI with a query matches only that query', (t) => {
  t.truthy(matchRedirectUri(['https://a.example/cb?tenant=1'], 'https://a.example/cb?tenant=1'));
  t.is(matchRedirectUri(['https://a.example/cb?tenant=1'], 'https://a.example/cb?tenant=2'), undefined);
});

test('property: whatever is matched is on the registered origin and under its path', (t) => {
  const origin = fc.constantFrom(
    'https://app.example',
    'https://app.example:443',
    'https://app.example:8443',
    'https://app.example.evil',
    'http://app.example',
    'https://evil.example',
  );
  const segment = fc.constantFrom('cb', 'cbx', '..', '.', '%2e%2e', '%2E', 'x', '', 'cb%2f..', '@evil.example');
  const tail = fc.constantFrom('', '?a=1', '#frag', '?next=https://evil.example');
  fc.assert(
    fc.property(origin, fc.array(segment, { maxLength: 4 }), tail, (o, segments, end) => {
      const uri = `${o}/${segments.join('/')}${end}`;
      const hit = matchRedirectUri(['https://app.example/cb'], uri);
      if (!hit) return true;
      const u = new URL(uri);
      return u.origin === 'https://app.example' && (u.pathname === '/cb' || u.pathname.startsWith('/cb/')) && !uri.includes('#');
    }),
    { numRuns: 2000 },
  );
  t.pass();
});

const REGISTERED = ['https://app.example/cb'];

test('a sub-path cannot be escaped: dot-segments, ; parameters, encoded slashes, backslashes and user-info are refused', (t) => {
  const refused = [
    'https://app.example/cb/..;/evil',
    'https://app.example/cb/%2e%2e/evil',
    'https://app.example/cb/%2E%2E;/evil',
    'https://app.example/cb/.%2e/evil',
    'https://app.example/cb/..%2fevil',
    'https://app.example/cb%2f..%2fevil',
    'https://app.example/cb/%2E%2E%5Cevil',
    'https://app.example/cb/..\\evil',
    'https://app.example/cb\\..\\evil',
    'https://app.example/cb/%252e%252e/evil',
    'https://app.example/cb/./x',
    'https://app.example/cb/x/../y',
    'https://app.example/cb;jsessionid=1',
    'https://app.example/cb/%3b/x',
    'https://@app.example/cb',
    'https://u@app.example/cb',
    'https://evil.example@app.example/cb',
    'https:app.example/cb',
    'https:/app.example/cb',
    'https:///app.example/cb',
  ];
  for (const uri of refused) {
    t.is(matchRedirectUri(REGISTERED, uri), undefined, uri);
    t.truthy(redirectUriProblem(uri), uri);
  }
  const accepted = [
    'HTTPS://APP.Example/cb/x',
    'https://app.example:443/cb',
    'https://app.example/cb/a.b/c..d/...',
    'https://app.example/cb/x?y=1&next=%2Fhome',
  ];
  for (const uri of accepted) t.is(matchRedirectUri(REGISTERED, uri), REGISTERED[0], uri);
});

test('a redirect URI with its own code, state or iss query parameter is refused, registered or requested', (t) => {
  for (const uri of [
    'https://app.example/cb?code=1',
    'https://app.example/cb?state=x',
    'https://app.example/cb?a=1&iss=x',
    'https://app.example/cb?c%6Fde=1',
    'http://localhost/cb?state=',
    'com.example.app:/cb?code=1',
  ]) {
    t.regex(redirectUriProblem(uri) ?? '', /must not carry its own (code|state|iss) query parameter/, uri);
    t.is(matchRedirectUri(['https://app.example/cb', 'http://localhost/cb', uri], uri), undefined, uri);
  }
  t.is(redirectUriProblem('https://app.example/cb?codes=1&xstate=2'), undefined);
});

/**
 * What a lenient server behind the redirect URI makes of it: the authority after its last `@`, the
 * path with `\` as `/`, percent-decoded twice (so `%2f` is `/`, `%252e` is `.`), `;` parameters
 * stripped from each segment, then RFC 3986 §5.2.4 remove_dot_segments.
 */
function serverView(uri: string): { scheme: string; host: string; path: string } | undefined {
  const m = /^([^:/?#]+):\/*([^/\\?#]*)([^?#]*)/.exec(uri);
  if (!m) return undefined;
  const authority = m[2]!
    .slice(m[2]!.lastIndexOf('@') + 1)
    .toLowerCase()
    .replace(/:443$/, '');
  let path = m[3]!;
  for (let i = 0; i < 2; i++) path = path.replace(/%([0-9a-f]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
  path = path
    .replace(/\\/g, '/')
    .split('/')
    .map((s) => s.replace(/;.*$/, ''))
    .join('/');
  return { scheme: m[1]!.toLowerCase(), host: authority, path: removeDotSegments(path) };
}

function removeDotSegments(input: string): string {
  const out: string[] = [];
  const segments = input.split('/');
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i]!;
    const last = i === segments.length - 1;
    if (s === '.' || s === '..') {
      if (s === '..' && out.length > 1) out.pop();
      if (last) out.push('');
    } else out.push(s);
  }
  return out.join('/');
}

test('property: every accepted tricky URI still lies under the registered path once a lenient server resolves it', (t) => {
  t.is(removeDotSegments('/cb/../evil'), '/evil');
  t.is(serverView('https://app.example/cb/..;/evil')!.path, '/evil');
  // Mostly plain parts, so that many URIs are accepted, with tricks mixed in.
  const mix = <T>(plain: T[], tricks: T[]) =>
    fc.oneof({ arbitrary: fc.constantFrom(...plain), weight: 3 }, { arbitrary: fc.constantFrom(...tricks), weight: 1 });
  const scheme = mix(['https'], ['HTTPS', 'Https', 'http']);
  const authority = mix(
    ['app.example', 'APP.Example', 'app.example:443'],
    [
      'app.example:8443',
      '@app.example',
      'user@app.example',
      'app.example@evil.example',
      'evil.example\\@app.example',
      'app.example%2f@evil.example',
      'app.example.',
      'evil.example',
    ],
  );
  const piece = mix(
    ['/', 'x', 'a.b', '...', 'evil', '-'],
    ['\\', '//', '.', '..', '%2e', '%2E', '%2e%2e', ';', ';a=1', '%3b', '%2f', '%2F', '%5c', '%5C', '%25', '%252e', '%252f', '@'],
  );
  const start = mix(['/cb', '/cb/'], ['/', '', '/CB', '/cbx']);
  const query = mix(['', '?a=1', '?a=/../..'], ['?code=x', '?state=1', '?iss=x', '?x=1&code=2', '?c%6fde=1', '#f', '?a=1#f']);
  let accepted = 0;
  fc.assert(
    fc.property(scheme, authority, start, fc.array(piece, { maxLength: 8 }), query, (s, a, p, pieces, q) => {
      const uri = `${s}://${a}${p}${pieces.join('')}${q}`;
      if (!matchRedirectUri(REGISTERED, uri)) return true;
      accepted++;
      const view = serverView(uri);
      const params = new URL(uri).searchParams;
      return (
        view !== undefined &&
        view.scheme === 'https' &&
        view.host === 'app.example' &&
        (view.path === '/cb' || view.path.startsWith('/cb/')) &&
        !uri.includes('#') &&
        !['code', 'state', 'iss'].some((k) => params.has(k))
      );
    }),
    { numRuns: 5000, seed: 16 },
  );
  t.true(accepted > 100, `only ${accepted} generated URIs were accepted`);
});
