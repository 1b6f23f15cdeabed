/**
 * docs/architecture.md's layout table (`| path | what lives there |`, section Layout) must stay true: every tracked source file
 * under lib/, engine/, db/, workers/, api/, bin/ and scripts/ is named there, in backticks, so that a
 * reader finds any module's folder and what it is for, and a new module gets its line when it is added.
 * Migrations (db/migrations/) are named as a folder. A file counts as named when its base name is the
 * last path segment of some backticked name (`cache-store.ts`, `activities/data.ts`) in the row of its
 * folder: the row whose path (first cell, `api/rest/activities/`) is the longest that the file's path starts
 * with. So a new `model.ts` must be named in its own folder's row, not merely somewhere in the table.
 *
 *   tsx scripts/check-layout.ts [FILE]   (part of `npm run depcheck`; another file to check instead, for a test)
 *
 * The other way round, every backticked name in the table that looks like a file (it ends in a source
 * extension) must still be one: some tracked file's path ends with it. A file removed or renamed
 * without its line fails, as a new file without one does.
 *
 * Prints each file the table does not name, and each name no file answers, and exits 1; prints a
 * one-line summary and exits 0 otherwise.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const FOLDERS = ['lib', 'engine', 'db', 'workers', 'api', 'bin', 'scripts'];
const HEADER = '| path | what lives there |';

/** The table's lines: from its header to the first line after it that does not start with `|`. */
function layoutTable(readme: string): string[] {
  const lines = readme.split('\n');
  const start = lines.findIndex((line) => line.trim() === HEADER);
  if (start < 0) throw new Error(`no layout table (a line "${HEADER}")`);
  const end = lines.findIndex((line, i) => i > start && !line.startsWith('|'));
  return lines.slice(start, end < 0 ? undefined : end);
}

/** The last path segment of every backticked name in `text`: `web/error-page.ts` gives `error-page.ts`. */
function namedFiles(text: string): Set<string> {
  return new Set([...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]!.split('/').pop()!));
}

function trackedFiles(): string[] {
  const out = execFileSync('git', ['ls-files', ...FOLDERS], { encoding: 'utf8' });
  return out.split('\n').filter((file) => file && !file.startsWith('db/migrations/'));
}

/** Each row of the table (after the header and its separator) as its path and the names it gives. */
function rows(table: string[]): { path: string; named: Set<string> }[] {
  return table.slice(2).map((line) => ({ path: /^\|\s*`([^`]+)`/.exec(line)?.[1] ?? '', named: namedFiles(line) }));
}

/** The row of a file's folder: the one with the longest path the file's path starts with. */
function rowOf(file: string, table: { path: string; named: Set<string> }[]) {
  let best: { path: string; named: Set<string> } | undefined;
  for (const row of table) if (row.path && file.startsWith(row.path) && (!best || row.path.length > best.path.length)) best = row;
  return best;
}

/** Backticked names in the table that look like files (a source extension) but no tracked file's path ends with. */
function staleNames(table: string[]): string[] {
  const all = execFileSync('git', ['ls-files'], { encoding: 'utf8' }).split('\n').filter(Boolean);
  const names = new Set([...table.join('\n').matchAll(/`([^`\s]+\.(?:ts|js|mjs|cjs|css|json|sql|sh|py))`/g)].map((m) => m[1]!));
  return [...names].filter((name) => !all.some((file) => file === name || file.endsWith(`/${name}`)));
}

const readmePath = process.argv[2] ?? 'docs/architecture.md';
const lines = layoutTable(readFileSync(readmePath, 'utf8'));
const table = rows(lines);
const files = trackedFiles();
const missing = files.filter((file) => !rowOf(file, table)?.named.has(file.split('/').pop()!));
const stale = staleNames(lines);
if (missing.length) {
  console.error(
    `Files that ${readmePath}'s layout table does not name (add each, with a few words, to its folder's row):\n  ${missing.join('\n  ')}`,
  );
}
if (stale.length) {
  console.error(`Names in ${readmePath}'s layout table that no file answers (removed or renamed? mend the row):\n  ${stale.join('\n  ')}`);
}
if (missing.length || stale.length) process.exit(1);
console.log(`✔ ${readmePath}'s layout table names every file under ${FOLDERS.join('/, ')}/ (${files.length} files)`);
