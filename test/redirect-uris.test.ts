import test from 'ava';
import fc from 'fast-check';
import { matchRedirectUri, redirectUriProblem } from '../api/oauth/redirect-uris.ts';

test('registration accepts https, loopback http on any port and private-use schemes', (t) => {
  for (const uri of [
    'https://app.example/cb', 'https://app.example:8443/a/b?x=1', 'http://localhost', 'http://localhost:3000/cb',
    'http://127.0.0.1:53682/callback', 'http://[::1]:8080/cb', 'com.example.app:/oauth2redirect', 'myapp://callback',
  ]) t.is(redirectUriProblem(uri), undefined, uri);
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
  const yes = ['https://app.example/cb', 'https://app.example/cb/', 'https://app.example/cb/x?y=1', 'https://APP.example/cb', 'http://localhost:1234/anything', 'com.example.app:/oauth'];
  const no = ['https://app.example/cbx', 'https://app.example/', 'https://app.example:444/cb', 'https://evil.example/cb', 'http://app.example/cb',
    'https://app.example/cb#f', 'http://127.0.0.1/cb', 'com.example.app:/oauth/x', 'com.example.app:/OAUTH', 'https://app.example/cb/../x', 'https://app.example/cb/%2e%2e/x'];
  for (const uri of yes) t.truthy(matchRedirectUri(registered, uri), uri);
  for (const uri of no) t.is(matchRedirectUri(registered, uri), undefined, uri);
});

test('a registered https URI with a query matches only that query', (t) => {
  t.truthy(matchRedirectUri(['https://a.example/cb?tenant=1'], 'https://a.example/cb?tenant=1'));
  t.is(matchRedirectUri(['https://a.example/cb?tenant=1'], 'https://a.example/cb?tenant=2'), undefined);
});

test('property: whatever is matched is on the registered origin and under its path', (t) => {
  const origin = fc.constantFrom('https://app.example', 'https://app.example:443', 'https://app.example:8443', 'https://app.example.evil', 'http://app.example', 'https://evil.example');
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
