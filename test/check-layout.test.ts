// scripts/check-layout.ts, run as `npm run depcheck` runs it, on the real docs/architecture.md and on copies made
// wrong both ways: a file the table leaves out, and a name left in the table after its file is gone.
import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

function check(readme?: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import=tsx', 'scripts/check-layout.ts', ...(readme ? [readme] : [])], (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, out: stdout + stderr }),
    );
  });
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'tds-layout-'));
test.after.always(() => rmSync(dir, { recursive: true, force: true }));
const real = readFileSync('docs/architecture.md', 'utf8');

test('docs/architecture.md as it is passes', async (t) => {
  const { code, out } = await check();
  t.is(code, 0, out);
  t.regex(out, /names every file/);
});

test('a file the table does not name fails, naming it', async (t) => {
  const file = path.join(dir, 'missing.md');
  t.true(real.includes('`stop.ts`'));
  writeFileSync(file, real.replace('`stop.ts`', 'stop'));
  const { code, out } = await check(file);
  t.is(code, 1);
  t.regex(out, /does not name[\s\S]*engine\/stop\.ts/);
});

test('a name left in the table after its file is gone fails, naming it', async (t) => {
  const file = path.join(dir, 'stale.md');
  writeFileSync(file, real.replace('`stop.ts` (', '`stop.ts`, `halt.ts` ('));
  const { code, out } = await check(file);
  t.is(code, 1);
  t.regex(out, /no file answers[\s\S]*halt\.ts/);
  t.notRegex(out, /does not name/);
});
