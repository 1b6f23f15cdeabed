import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * The shared real-device fixtures: `FIXTURES_DIR` when set, else `../shared/fixtures` beside the
 * checkout (the project's layout), else `/work/shared/fixtures` (a clone made elsewhere on a
 * development machine).
 */
export function fixturesDir(): string {
  const candidates = [
    process.env.FIXTURES_DIR,
    path.join(import.meta.dirname, '..', '..', '..', 'shared', 'fixtures'),
    '/work/shared/fixtures',
  ].filter((c): c is string => Boolean(c));
  const found = candidates.find((c) => existsSync(path.join(c, 'fit')));
  if (!found) throw new Error(`FIT fixtures not found; looked in ${candidates.join(', ')} (set FIXTURES_DIR)`);
  return found;
}
