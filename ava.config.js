/**
 * ava's settings (`npm test`). Each test file runs in a process of its own (workerThreads false),
 * `concurrency` files at a time.
 *
 * Most files spend more time waiting than computing (timers, outage windows, child processes,
 * Chromium, PostgreSQL): each alone used about half a core on average (docs/architecture.md, "Where the test time goes").
 * So on a 2-core machine 4 files run at once, not ava's default of 2 in CI, and the files that wait
 * longest start first, so that none of them is left running alone at the end of the run.
 */
const STARTED_FIRST = [
  'faults-catchup', // outages of 10 s and 90 s, each then caught up: 220 s alone
  'faults-worker-process',
  'ingest-restart',
  'storage-faults', // a gateway stopped for 30 s
  'two-hosts', // 1,000 rides loaded through two hosts
  'browser-narrow',
  'work-that-stops',
  'browser-first-hour',
  'browser-activity-page',
  'ingest-limits',
  'curves-storage',
  'bench-compare',
  'reprocess-kill',
  'cli',
  'browser-home',
  'fuzz',
  'cli-backfill',
];

/** A file's place in STARTED_FIRST (the rest after them, in name order). */
const rank = (file) => {
  const i = STARTED_FIRST.indexOf(file.replace(/^.*\//, '').replace(/\.test\.ts$/, ''));
  return i < 0 ? STARTED_FIRST.length : i;
};

export default {
  files: ['test/**/*.test.ts'],
  extensions: { ts: 'module' },
  nodeArguments: ['--import=tsx'],
  workerThreads: false,
  concurrency: 4,
  timeout: '120s',
  sortTestFiles: (a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0),
};
