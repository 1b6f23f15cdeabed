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
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
