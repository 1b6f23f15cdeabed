import test from 'ava';
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli } from './helpers/cli.ts';
import { fixturesDir } from './helpers/fixtures.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestUser } from './helpers/users.ts';
import { envOf } from './helpers/worker-process.ts';

// `cli backfill --wait` against a service whose workers load what the CLI stored.
let service: TestService;
test.before(async () => {
  service = await startTestService({ workers: true });
});
test.after.always(() => service?.close());

const env = () => envOf(service.config, { LOG_LEVEL: 'silent' });

/** A history: two real rides, a truncated FIT file (invalid_fit) and a note that is no activity (skipped). */
function history(t: { teardown(fn: () => void): void }, opts: { corrupt?: boolean } = {}) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cli-history-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const fit = path.join(fixturesDir(), 'fit');
  copyFileSync(path.join(fit, '2020-06-01-16-52-40.fit'), path.join(dir, 'ride-1.fit'));
  copyFileSync(path.join(fit, '6449921903_ACTIVITY.fit'), path.join(dir, 'ride-2.fit'));
  if (opts.corrupt !== false) writeFileSync(path.join(dir, 'ride-3.fit'), readFileSync(path.join(fit, '4801048867.fit')).subarray(0, 3000));
  writeFileSync(path.join(dir, 'notes.txt'), 'not an activity');
  return dir;
}

/** What is stored for a backfill: its sources by status, and the failed ones' codes by file name. */
async function stored(backfillId: string) {
  const rows = await service.deps.db
    .selectFrom('sources')
    .select(['filename', 'status', 'error_code'])
    .where('backfill_id', '=', backfillId)
    .execute();
  return {
    loaded: rows.filter((r) => r.status === 'processed').length,
    failed: rows.filter((r) => r.status === 'failed').length,
    total: rows.length,
    codes: Object.fromEntries(rows.filter((r) => r.status === 'failed').map((r) => [r.filename, r.error_code])),
  };
}

test.serial('not on a terminal: plain lines with the counts, then a summary and each failed file with its code; exit 3', async (t) => {
  const user = await createTestUser(service);
  const run = await runCli(env(), 'backfill', '--user', user.email, history(t), '--wait');
  t.is(run.code, 3, run.stderr);
  const lines = run.stdout.trimEnd().split('\n');
  t.regex(lines[0]!, /^Backfill (\S+) for .*: 3 files found \(fit 3\), 1 skipped, 3 queued/);
  const progress = lines.filter((l) => l.startsWith('loading: '));
  t.true(progress.length >= 1, run.stdout);
  for (const line of progress) t.regex(line, /^loading: \d\/3 files \(loaded \d, failed \d\), [\d.]+ files\/s, ETA \S+/);
  t.regex(run.stdout, /^completed: 2 of 3 files loaded, 1 failed, 1 skipped in \d+s \([\d.]+ files\/s\); loaded back to \d{4}-\d\d-\d\dT/m);
  t.regex(run.stdout, /^failed: ride-3\.fit {2}invalid_fit {2}The file is not a valid FIT file/m);
  t.is(lines.filter((l) => l.startsWith('failed: ')).length, 1);
  const id = /^Backfill (\S+)/.exec(lines[0]!)![1]!;
  t.like(await stored(id), { loaded: 2, failed: 1, total: 3, codes: { 'ride-3.fit': 'invalid_fit' } });
});

test.serial('--json: one object per line; the summary agrees with what is stored and lists the failed file', async (t) => {
  const user = await createTestUser(service);
  const run = await runCli(env(), 'backfill', '--user', user.email, history(t), '--wait', '--json');
  t.is(run.code, 3, run.stderr);
  const lines = run.stdout
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  t.like(lines[0], { event: 'scanned', user_id: user.id, total: 3, skipped: 1, queued: 3 });
  const summary = lines.at(-1)!;
  for (const p of lines.slice(1, -1)) {
    t.is(p.event, 'progress');
    t.is(p.total, 3);
    t.is(typeof p.rate, 'number');
    t.true(p.eta_seconds === null || typeof p.eta_seconds === 'number');
    t.is((p.loaded as number) + (p.failed as number) + (p.waiting as number), 3);
  }
  const db = await stored(lines[0]!.backfill_id as string);
  t.like(summary, {
    event: 'summary',
    status: 'completed',
    loaded: db.loaded,
    failed: db.failed,
    total: db.total,
    waiting: 0,
    skipped: 1,
    already_stored: 0,
    error: null,
  });
  t.like(summary, { loaded: 2, failed: 1, total: 3 });
  t.is(typeof summary.rate, 'number');
  t.deepEqual(
    (summary.failures as { filename: string; code: string; message: string }[]).map((f) => [f.filename, f.code, typeof f.message]),
    [['ride-3.fit', 'invalid_fit', 'string']],
  );

  // Again: every file is already stored (the failed one too), nothing is loaded twice; exit 0.
  const again = await runCli(env(), 'backfill', '--user', user.email, history(t, { corrupt: false }), '--wait', '--json');
  t.is(again.code, 0, again.stderr);
  t.like(JSON.parse(again.stdout.trimEnd().split('\n').at(-1)!), {
    event: 'summary',
    status: 'completed',
    loaded: 0,
    failed: 0,
    total: 0,
    already_stored: 2,
    failures: [],
  });
});

test.serial('on a terminal: a progress bar with the counts, then the failed file', async (t) => {
  if (!existsSync('/usr/bin/script')) return t.fail('script (util-linux) is needed to run the CLI on a pseudo-terminal');
  const user = await createTestUser(service);
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const command = [process.execPath, '--import=tsx', 'bin/cli.ts', 'backfill', '--user', user.email, history(t), '--wait']
    .map(quote)
    .join(' ');
  // script -e returns the command's exit status; its output is what the terminal showed.
  const run = await new Promise<{ code: number; out: string }>((resolve) =>
    execFile('/usr/bin/script', ['-qefc', command, '/dev/null'], { env: env(), timeout: 60_000 }, (err, stdout) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, out: stdout }),
    ),
  );
  t.is(run.code, 3, run.out);
  // The bar is redrawn in place (escape sequences); its last drawing shows every file done.
  t.regex(run.out, /[=-]{30} 3\/3 files \| loaded 2 \| failed 1 \| [\d.]+ files\/s \| ETA \S+/);
  t.regex(run.out, /\x1b\[1G/, 'drawn with cursor movement, as on a terminal');
  t.notRegex(run.out, /^loading: /m, 'no plain lines on a terminal');
  t.regex(run.out, /completed: 2 of 3 files loaded, 1 failed/);
  t.regex(run.out, /failed: ride-3\.fit {2}invalid_fit {2}/);
});
