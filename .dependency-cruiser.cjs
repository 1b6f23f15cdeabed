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
    {
      name: 'middleware-renders-no-page',
      comment: 'api/middleware/ is beneath the web pages: the error handler renders pages through the function app.ts gives it (api/web/error-page.ts)',
      severity: 'error',
      from: { path: '^api/middleware/' },
      to: { path: '^api/web/' },
    },
    {
      name: 'web-imports-no-route',
      comment: 'web pages call what the routes call (api/activities/, api/auth/, …), never a route module',
      severity: 'error',
      from: { path: '^api/web/' },
      to: { path: '^api/routes/' },
    },
    {
      name: 'guards-beneath-middleware',
      comment: 'api/auth/ (tokens, sessions, guards such as origin-check) imports nothing from api/middleware/ or api/web/',
      severity: 'error',
      from: { path: '^api/auth/' },
      to: { path: '^api/(middleware|web)/' },
    },
    {
      name: 'curves-beneath-ingest',
      comment: 'engine/curves/ computes on arrays and knows nothing of parsing; the channel vocabulary is engine/channels.ts',
      severity: 'error',
      from: { path: '^engine/curves/' },
      to: { path: '^engine/ingest/' },
    },
    {
      name: 'samples-beneath-ingest',
      comment: 'engine/samples/ stores and reads channels; it imports nothing from engine/ingest/',
      severity: 'error',
      from: { path: '^engine/samples/' },
      to: { path: '^engine/ingest/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
