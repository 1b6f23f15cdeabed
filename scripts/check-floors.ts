/**
 * Floors inside `api/`, `engine/`, `api/services/` and `api/rest/`, checked in general rather than case by case: no two sub-folders
 * of one of them may import each other (directly, module to module), so that each folder sits on the
 * ones it uses and none of those leans back on it. dependency-cruiser's own rules (the layers between
 * the top folders, cycles between modules, and the named floors in .dependency-cruiser.cjs) cannot say
 * "A and B import each other" for every pair; this reads its JSON graph from stdin and can:
 *
 *   depcruise --config .dependency-cruiser.cjs lib engine db workers api bin --output-type json | tsx scripts/check-floors.ts
 *
 * Prints each offending pair with the imports that make it, and exits 1; exits 0 when there is none.
 */
import { readFileSync } from 'node:fs';

/** Folders whose sub-folders are floors: `api/services/curves` and `api/services/activities` are checked as a pair, as `api/rest` and `api/web` are. */
const FLOORED = ['api', 'engine', 'api/services', 'api/rest'];

interface Graph {
  modules: { source: string; dependencies: { resolved: string }[] }[];
}

/** `api/rest` for `api/rest/openapi.ts` under `api`; undefined for a file directly under `floor`, or outside it. */
function subFolder(file: string, floor: string): string | undefined {
  if (!file.startsWith(`${floor}/`)) return undefined;
  const rest = file.slice(floor.length + 1).split('/');
  return rest.length > 1 ? `${floor}/${rest[0]}` : undefined;
}

const graph = JSON.parse(readFileSync(0, 'utf8')) as Graph;
const edges = new Map<string, string[]>();
for (const floor of FLOORED) {
  for (const m of graph.modules) {
    const from = subFolder(m.source, floor);
    if (!from) continue;
    for (const d of m.dependencies) {
      const to = subFolder(d.resolved, floor);
      if (!to || to === from) continue;
      const key = `${from} → ${to}`;
      edges.set(key, [...(edges.get(key) ?? []), `${m.source} → ${d.resolved}`]);
    }
  }
}

const problems: string[] = [];
for (const [key, imports] of edges) {
  const [from, to] = key.split(' → ') as [string, string];
  const back = edges.get(`${to} → ${from}`);
  if (!back || from > to) continue;
  problems.push(`${from} and ${to} import each other:\n    ${[...imports, ...back].join('\n    ')}`);
}
if (problems.length) {
  console.error(
    `Sub-folders of ${FLOORED.join('/ and ')}/ that import each other (move what both need into one of them, or below both):\n  ${problems.join('\n  ')}`,
  );
  process.exit(1);
}
console.log(`✔ no two sub-folders of ${FLOORED.join('/ or ')}/ import each other (${edges.size} folder-to-folder imports)`);
