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
  [
    'middleware-renders-no-page',
    '^api/middleware/',
    '^api/web/',
    'api/middleware/ is beneath the web pages: the error handler renders pages through the function app.ts gives it (api/web/error-page.ts)',
  ],
  [
    'web-imports-no-route',
    '^api/web/',
    '^api/routes/',
    'web pages call what the routes call (api/activities/, api/auth/, …), never a route module',
  ],
  [
    'guards-beneath-middleware',
    '^api/auth/',
    '^api/(middleware|web)/',
    'api/auth/ (tokens, sessions, guards such as origin-check) imports nothing from api/middleware/ or api/web/',
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
