import test from 'ava';
import { compare } from '../bench/compare/compare.ts';

/**
 * `npm run bench -- compare` end to end on a small row: HEAD checked out in its worktree, the
 * engine family opened on both trees in one sampler process, samples taken in rounds, the report.
 * No timing is asserted: what a client of the report reads.
 */
test('compare HEAD: one row of the engine family, both sides sampled round by round, the report complete', async (t) => {
  const lines: string[] = [];
  const report = await compare({ ref: 'HEAD', names: ['engine/ride-4h-defaults'], rounds: 3, forks: 1, log: (l) => lines.push(l) });
  t.is(report.rows.length, 1);
  const [row] = report.rows;
  t.is(row!.id, 'engine/ride-4h-defaults');
  t.is(row!.family, 'engine');
  t.is(row!.rounds, 3);
  t.is(row!.samplesA.length, 3);
  t.is(row!.samplesB.length, 3);
  t.deepEqual(row!.forkOf, [0, 0, 0]);
  t.true(row!.samplesA.every((ms) => ms > 0) && row!.samplesB.every((ms) => ms > 0));
  t.true(row!.reps >= 1);
  t.true(['faster', 'slower', 'no change'].includes(row!.verdict));
  t.true(row!.low <= row!.ratio && row!.ratio <= row!.high);
  t.is(row!.threshold, 0.03);
  t.regex(report.a.commit, /^[0-9a-f]{40}$/);
  t.deepEqual(report.failed, []);
  t.deepEqual(report.onlyA, []);
  t.deepEqual(report.onlyB, []);
  t.true(lines.some((l) => l.startsWith('A: HEAD')));
});

test('compare HEAD: the web family, a service and headless Chromium per side, page rows sampled as navigations to charts drawn', async (t) => {
  // A small history: what is checked is that both sides open, sign in, draw and are sampled.
  process.env.BENCH_COMPARE_WEB_ACTIVITIES = '5';
  const report = await compare({
    ref: 'HEAD',
    names: ['web/curves-all-time', 'web/activity-api-fetch'],
    rounds: 2,
    forks: 1,
    log: () => {},
  });
  t.deepEqual(report.failed, []);
  t.deepEqual(
    report.rows.map((r) => r.id),
    ['web/curves-all-time', 'web/activity-api-fetch'],
  );
  for (const row of report.rows) {
    t.is(row.family, 'web');
    t.is(row.samplesA.length, 2);
    t.true(row.samplesA.every((ms) => ms > 0) && row.samplesB.every((ms) => ms > 0), row.id);
  }
  t.regex(report.rows[0]!.label, /curves page, all time, 6 rides/);
});

test('compare: a ref that names no commit, and an unknown benchmark, are refused before anything runs', async (t) => {
  await t.throwsAsync(compare({ ref: 'no-such-ref-anywhere', names: ['engine'], rounds: 1, log: () => {} }), {
    message: /names no commit/,
  });
  await t.throwsAsync(compare({ ref: 'HEAD', names: ['nonsense'], rounds: 1, log: () => {} }), { message: /unknown benchmark nonsense/ });
});
