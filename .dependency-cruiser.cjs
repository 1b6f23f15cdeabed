// Import rules checked by `npm run depcheck` (and .ci/run): no cycles, and the layers import only downwards:
// lib → engine → db → workers → api → bin (a layer may import those to its left, never those to its right).
const layers = ['lib', 'engine', 'db', 'workers', 'api', 'bin'];

const upward = layers.slice(0, -1).map((layer, i) => ({
  name: `${layer}-imports-higher-layer`,
  comment: `${layer}/ may import only from ${layers.slice(0, i).join(', ') || 'no other layer'} (lib → engine → db → workers → api → bin)`,
  severity: 'error',
  from: { path: `^${layer}/` },
  to: { path: `^(${layers.slice(i + 1).join('|')})/` },
}));

/** [name, from, to, why]: `from` may not import `to`. */
const floors = [
  // api/: the shell (app.ts, server.ts) over two sibling sides, the JSON API (rest/) and the web app
  // (web/), both standing on the HTTP plumbing (http/), all standing on the services (services/).
  [
    'services-import-no-http',
    '^api/services/',
    '^api/(http|rest|web)/|^api/[^/]+[.]ts$',
    'api/services/ is what the JSON API, the web app, the CLI and the workers share: it imports nothing above it in api/',
  ],
  [
    'services-use-no-koa',
    '^api/services/',
    '(^|/)node_modules/(@types/)?(koa|@koa|koa-[^/]+|formidable)/',
    'api/services/ imports no Koa or HTTP-body module, so bin/cli.ts and the workers use it without an HTTP stack',
  ],
  [
    'http-beneath-both-sides',
    '^api/http/',
    '^api/(rest|web)/|^api/[^/]+[.]ts$',
    'api/http/ (context, guards, middleware) is beneath both sides: the error handler renders pages through the function app.ts gives it',
  ],
  ['rest-imports-no-page', '^api/rest/', '^api/web/', 'the JSON API and the web app are siblings: neither imports the other'],
  [
    'web-imports-no-rest',
    '^api/web/',
    '^api/rest/',
    'the JSON API and the web app are siblings: pages call api/services/, never a route module',
  ],
  [
    'curves-beneath-ingest',
    '^engine/curves/',
    '^engine/ingest/',
    'engine/curves/ computes on arrays and knows nothing of parsing; the channel vocabulary is engine/channels.ts',
  ],
  [
    'samples-beneath-ingest',
    '^engine/samples/',
    '^engine/ingest/',
    'engine/samples/ stores and reads channels; it imports nothing from engine/ingest/',
  ],
].map(([name, from, to, comment]) => ({ name, comment, severity: 'error', from: { path: from }, to: { path: to } }));

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'Modules must not import each other in a cycle; move what both need into a lower module.',
      severity: 'error',
      from: { path: `^(${layers.join('|')})/` },
      to: { circular: true },
    },
    ...upward,
    // Floors inside api/ and engine/ (scripts/check-floors.ts checks, in general, that no two of their
    // sub-folders import each other; these name the directions that matter most).
    ...floors,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
