import { mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fixturesDir } from '../../test/helpers/fixtures.ts';
import { formatTable, ROOT } from '../report.ts';
import { FAMILIES } from './families/index.ts';
import { Side } from './side.ts';
import { type Comparison, compareSamples, formatChange, resolution, tableVerdicts } from './stats.ts';
import { type Checkout, checkout, describeTree } from './tree.ts';

/**
 * `npm run bench -- compare <ref> [names] [--rounds N | --seconds S] [--forks F] [--threshold P] [--profile ROW] [--json]`:
 * this checkout (B, with its uncommitted changes) against `<ref>` (A, checked out by bench/compare/tree.ts),
 * row by row, interleaved. `names` are families (engine, …) or row ids or their prefixes
 * ("engine/adversarial"); none: every family.
 *
 * The rounds are split among forks (row.ts, `forks`): in each, fresh sampler processes
 * (bench/compare/side.ts) open the families on both trees (A first in even forks, B first in odd
 * ones), each row is warmed on each side (bench/compare/sampler.ts, `warm`; in the first fork this
 * picks its operations per sample, the same for both: about SAMPLE_MS of work; later forks warm
 * lightly), WARMUP_ROUNDS
 * rounds are thrown away, and the rounds follow: in each, every row is sampled on both sides back
 * to back, A then B in even rounds and B then A in odd ones (A B B A A B …), so that neither side
 * always runs first or always right after the other row. Statistics: bench/compare/stats.ts; the
 * budget: `allot`. bench/README.md, "compare", says why each of these is so.
 */
export const SAMPLE_MS = 20;
export const WARMUP_ROUNDS = 1;
/** Without --rounds or --seconds: a budget of 120 s of rounds, shared out among the rows. */
export const DEFAULT_SECONDS = 120;
/** Fewest and most rounds a --seconds budget gives a row. */
export const MIN_ROUNDS = 6;
export const MAX_ROUNDS = 200;
/** A round of a row costs its warmed time × SLACK (the machine is seldom as fast as at warm-up). */
const SLACK = 1.5;

export interface CompareOptions {
  ref: string;
  names: string[];
  rounds?: number;
  seconds?: number;
  forks?: number;
  threshold?: number;
  profile?: string;
  profileSeconds?: number;
  log?: (line: string) => void;
}

export interface ComparedRow extends Comparison {
  id: string;
  family: string;
  label: string;
  reps: number;
  /** The smallest change this row could tell from noise in this run (stats.ts, `resolution`). */
  resolution: number;
  /** The smallest change its verdict calls one. */
  threshold: number;
  samplesA: number[];
  samplesB: number[];
  /** The fork of each pair of samples. */
  forkOf: number[];
}

export interface CompareReport {
  a: { ref: string; commit: string; root: string; modules: string };
  b: { ref: string; commit: string; dirty: boolean; root: string };
  /** Most rounds of a row (all forks). */
  rounds: number;
  warmupRounds: number;
  /** Forks: fresh sampler processes the rounds were split among (row.ts, `forks`). */
  forks: number;
  seconds: number;
  /** --threshold, when given; otherwise each family's own (row.ts, `threshold`), in each row. */
  threshold: number | null;
  statistic: string;
  rows: ComparedRow[];
  onlyA: string[];
  onlyB: string[];
  failed: { side?: 'A' | 'B'; family?: string; id?: string; message: string }[];
  profiles: { id: string; a: string; b: string }[];
}

export const STATISTIC =
  'ratio B/A = median over rounds of b_i/a_i; 95 % percentile bootstrap (2,000 resamples, seeded) over forks, then rounds within each; verdicts over the whole table by Holm–Bonferroni on the bootstrap p-values (a 5 % chance of any false verdict in the table) and the change at least the threshold';

interface Listed {
  id: string;
  label: string;
  family: string;
  /** Work per sample (row.ts, `sampleMs`; SAMPLE_MS by default). */
  sampleMs?: number;
}

export function familiesOf(names: readonly string[]): { families: string[]; keep: (id: string) => boolean } {
  if (!names.length) return { families: Object.keys(FAMILIES), keep: () => true };
  const families = new Set<string>();
  for (const name of names) {
    const family = name.split('/')[0]!;
    if (!(family in FAMILIES))
      throw new Error(`unknown benchmark ${name}; compare knows ${Object.keys(FAMILIES).join(', ')} (or their rows)`);
    families.add(family);
  }
  return { families: [...families], keep: (id) => names.some((n) => id === n || id.startsWith(n.includes('/') ? n : `${n}/`)) };
}

interface Placed extends Listed {
  /** Where each side of the row is sampled, and under which key. */
  a: { side: Side; key: string };
  b: { side: Side; key: string };
}

export async function compare(options: CompareOptions): Promise<CompareReport> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const { families, keep } = familiesOf(options.names);
  const tree = checkout(ROOT, options.ref, log);
  log(
    `A: ${options.ref} (${tree.commit.slice(0, 12)}) in ${tree.root}${tree.created ? '' : ' (reused)'}, node_modules ${tree.modules}; B: this checkout`,
  );
  const self = describeTree(ROOT);
  const env = { FIXTURES_DIR: fixturesDir() };
  const forksOf = (family: string) => options.forks ?? FAMILIES[family]!.forks ?? 1;
  const forks = Math.max(...families.map(forksOf));
  const report: CompareReport = {
    a: { ref: options.ref, commit: tree.commit, root: tree.root, modules: tree.modules },
    b: { ref: 'this checkout', commit: self.commit, dirty: self.dirty, root: ROOT },
    rounds: 0,
    warmupRounds: WARMUP_ROUNDS,
    forks,
    seconds: 0,
    threshold: options.threshold ?? null,
    statistic: STATISTIC,
    rows: [],
    onlyA: [],
    onlyB: [],
    failed: [],
    profiles: [],
  };
  const state: Plan = { plan: new Map(), samples: new Map(), dropped: new Set(), perRound: new Map() };
  const { plan, samples, dropped } = state;
  const started = performance.now();
  for (let fork = 0; fork < forks; fork++) {
    const inFork = families.filter((f) => fork < forksOf(f));
    if (forks > 1) log(`fork ${fork + 1} of ${forks}: ${inFork.join(', ')}`);
    const samplers = new Map<string, Side>();
    const forkStarted = performance.now();
    try {
      const rows = await openRows(inFork, tree, keep, env, samplers, fork === 0 ? report : undefined, fork);
      const live = rows.filter((r) => !dropped.has(r.id) && (fork === 0 || plan.has(r.id)));
      await warmRows(live, fork, state, report);
      const measured = live.filter((r) => plan.has(r.id));
      if (fork === 0 && !measured.length) throw new Error('no row to compare: both sides have none in common');
      setRounds(measured, { fork, forks, forksOf, forkStarted, started }, options, state);
      await takeRounds(measured, plan, samples, fork, log);
      if (fork === forks - 1 && options.profile) report.profiles.push(await profile(measured, options, tree.commit, log));
    } finally {
      await Promise.all([...samplers.values()].map((s) => s.close()));
    }
  }
  report.seconds = Math.round((performance.now() - started) / 100) / 10;
  judge(report, state, options);
  return report;
}

/** What a comparison learns row by row, over its forks. */
interface Plan {
  /** Per row: operations per sample and rounds (fixed by the first fork). */
  plan: Map<string, { reps: number; rounds: number; row: Listed }>;
  /** Per row: every fork's samples, and the fork of each. */
  samples: Map<string, { a: number[]; b: number[]; fork: number[] }>;
  /** Rows that failed (in report.failed): no longer run. */
  dropped: Set<string>;
  /** Per row: the cost of one round, both sides (ms), from the first fork's warm-up. */
  perRound: Map<string, number>;
}

/** Each row warmed on both sides; in the first fork, its operations per sample from the faster side's fastest run. A row that fails is dropped. */
async function warmRows(live: Placed[], fork: number, state: Plan, report: CompareReport): Promise<void> {
  const { plan, samples, dropped, perRound } = state;
  for (const row of live) {
    try {
      let fastest = Number.POSITIVE_INFINITY;
      for (const { side, key } of [row.a, row.b])
        fastest = Math.min(fastest, (await side.request<{ op: string; ms: number }>({ op: 'warm', key, light: fork > 0 })).ms);
      if (fork === 0) {
        const reps = Math.max(1, Math.min(100_000, Math.ceil((row.sampleMs ?? SAMPLE_MS) / Math.max(fastest, 1e-3))));
        plan.set(row.id, { reps, rounds: 0, row });
        // A round of the row costs its warmed time × SLACK (the machine is seldom as fast as at warm-up).
        perRound.set(row.id, 2 * reps * fastest * SLACK);
        samples.set(row.id, { a: [], b: [], fork: [] });
      }
    } catch (err) {
      dropped.add(row.id);
      plan.delete(row.id);
      report.failed.push({ id: row.id, message: err instanceof Error ? err.message : String(err) });
    }
  }
}

/**
 * Rounds per row in this fork: --rounds split among the row's forks, or what is left of the
 * --seconds budget shared out (allot) and split among the forks left, less what each of them
 * will spend before its rounds (as this one did: opening, warming, the warm-up round). Set at
 * every fork, since later forks warm lightly and cost less than the first.
 */
function setRounds(
  measured: Placed[],
  at: { fork: number; forks: number; forksOf: (family: string) => number; forkStarted: number; started: number },
  options: CompareOptions,
  state: Plan,
): void {
  const { fork, forks, forksOf, forkStarted, started } = at;
  const { plan, samples, perRound } = state;
  const budget = options.seconds ?? (options.rounds === undefined ? DEFAULT_SECONDS : undefined);
  const overhead = performance.now() - forkStarted + WARMUP_ROUNDS * measured.reduce((ms, r) => ms + perRound.get(r.id)!, 0);
  const totals =
    budget === undefined
      ? new Map(measured.map((r) => [r.id, options.rounds!]))
      : allot(
          new Map(measured.map((r) => [r.id, perRound.get(r.id)!])),
          budget * 1000 - (performance.now() - started) - (forks - fork - 1) * overhead,
        );
  for (const row of measured) {
    if (budget === undefined) {
      plan.get(row.id)!.rounds = Math.ceil(totals.get(row.id)! / forksOf(row.family));
      continue;
    }
    // The rounds already taken count towards MIN_ROUNDS and MAX_ROUNDS: the bounds hold for the whole run.
    const forksLeft = Math.max(1, forksOf(row.family) - fork);
    const taken = samples.get(row.id)!.a.length;
    const left = Math.min(Math.max(totals.get(row.id)!, MIN_ROUNDS - taken), MAX_ROUNDS - taken);
    plan.get(row.id)!.rounds = Math.max(0, Math.ceil(left / forksLeft));
  }
}

/** Each row's comparison of its samples into the report; then the verdicts over the whole table. */
function judge(report: CompareReport, state: Plan, options: CompareOptions): void {
  const { plan, samples } = state;
  for (const [id, { reps, row }] of plan) {
    const { a, b, fork } = samples.get(id)!;
    const threshold = options.threshold ?? FAMILIES[row.family]!.threshold;
    const c = compareSamples(a, b, { threshold, groups: fork });
    report.rounds = Math.max(report.rounds, c.rounds);
    report.rows.push({
      id,
      family: row.family,
      label: row.label,
      reps,
      threshold,
      ...c,
      resolution: resolution(c),
      samplesA: a,
      samplesB: b,
      forkOf: fork,
    });
  }
  // The rows judged together: Holm over the table (stats.ts), so that A against itself calls no row a change.
  const verdicts = tableVerdicts(
    report.rows,
    report.rows.map((r) => r.threshold),
  );
  report.rows.forEach((r, i) => (r.verdict = verdicts[i]!));
}

/**
 * Rounds per row from a budget (ms) and each row's cost of a round (ms): the same time for every
 * row, but never fewer than MIN_ROUNDS nor more than MAX_ROUNDS (the time of the rows held at
 * either bound taken out first, the rest shared among the others).
 */
export function allot(perRound: Map<string, number>, budgetMs: number): Map<string, number> {
  const rounds = new Map<string, number>();
  let free = [...perRound.keys()];
  let left = budgetMs;
  for (;;) {
    const share = left / Math.max(1, free.length);
    const fixed = free.filter((id) => share / perRound.get(id)! < MIN_ROUNDS || share / perRound.get(id)! > MAX_ROUNDS);
    if (!fixed.length) break;
    for (const id of fixed) {
      const n = share / perRound.get(id)! < MIN_ROUNDS ? MIN_ROUNDS : MAX_ROUNDS;
      rounds.set(id, n);
      left -= n * perRound.get(id)!;
    }
    free = free.filter((id) => !rounds.has(id));
  }
  const share = left / Math.max(1, free.length);
  for (const id of free) rounds.set(id, Math.min(MAX_ROUNDS, Math.floor(share / perRound.get(id)!)));
  return rounds;
}

/** The families opened on both trees (samplers made as needed into `samplers`); the rows both have, placed. */
async function openRows(
  families: string[],
  tree: Checkout,
  keep: (id: string) => boolean,
  env: Record<string, string>,
  samplers: Map<string, Side>,
  report: CompareReport | undefined,
  fork: number,
): Promise<Placed[]> {
  // One sampler per tree for isolated families, one for shared ones.
  const sampler = (name: 'A' | 'B' | 'shared') => {
    let side = samplers.get(name);
    if (!side) samplers.set(name, (side = new Side(name, name === 'A' ? tree.root : ROOT, env)));
    return side;
  };
  const rows: Placed[] = [];
  // Opened one side after the other: a family's set-up (a service, seeding) is not timed, but two at once would crowd the machine.
  for (const family of families) {
    const { isolation, native } = FAMILIES[family]!;
    const shared = isolation === 'shared' && (!native || tree.modules === 'shared');
    const opened: Map<string, Listed>[] = [];
    // A first in even forks, B first in odd ones: what is set up last (a database's pages, the page
    // cache) is not always the same side's.
    const sides = [
      ['A', tree.root],
      ['B', ROOT],
    ] as const;
    for (const [name, root] of fork % 2 === 0 ? sides : ([sides[1], sides[0]] as const)) {
      const answer = await sampler(shared ? 'shared' : name).request<{
        op: string;
        rows: Listed[];
        failed: { family: string; message: string }[];
      }>({
        op: 'open',
        side: name,
        root,
        families: [family],
      });
      for (const f of answer.failed) report?.failed.push({ side: name, family: f.family, message: f.message });
      opened[name === 'A' ? 0 : 1] = new Map(answer.rows.filter((r) => keep(r.id)).map((r) => [r.id, r]));
    }
    const [inA, inB] = opened as [Map<string, Listed>, Map<string, Listed>];
    report?.onlyA.push(...[...inA.keys()].filter((id) => !inB.has(id)));
    report?.onlyB.push(...[...inB.keys()].filter((id) => !inA.has(id)));
    for (const row of inB.values()) {
      if (!inA.has(row.id)) continue;
      rows.push({
        ...row,
        a: { side: sampler(shared ? 'shared' : 'A'), key: `A:${row.id}` },
        b: { side: sampler(shared ? 'shared' : 'B'), key: `B:${row.id}` },
      });
    }
  }
  return rows;
}

/** One fork's rounds: in each, every row still short of its rounds sampled on both sides, A B in even rounds and B A in odd ones. */
async function takeRounds(
  rows: Placed[],
  plan: Map<string, { reps: number; rounds: number }>,
  samples: Map<string, { a: number[]; b: number[]; fork: number[] }>,
  fork: number,
  log: (line: string) => void,
): Promise<void> {
  const started = performance.now();
  const last = Math.max(...rows.map((r) => plan.get(r.id)!.rounds)) + WARMUP_ROUNDS;
  let reported = started;
  for (let round = 0; round < last; round++) {
    for (const row of rows) {
      const { reps, rounds } = plan.get(row.id)!;
      if (round >= rounds + WARMUP_ROUNDS) continue;
      const order = round % 2 === 0 ? ([row.a, row.b] as const) : ([row.b, row.a] as const);
      const taken = new Map<string, number>();
      for (const { side, key } of order) taken.set(key, (await side.request<{ op: string; ms: number }>({ op: 'sample', key, reps })).ms);
      if (round >= WARMUP_ROUNDS) {
        const s = samples.get(row.id)!;
        s.a.push(taken.get(row.a.key)!);
        s.b.push(taken.get(row.b.key)!);
        s.fork.push(fork);
      }
    }
    if (performance.now() - reported > 10_000 || round === last - 1) {
      reported = performance.now();
      log(
        `round ${round + 1 - WARMUP_ROUNDS} of ${last - WARMUP_ROUNDS} (after ${WARMUP_ROUNDS} of warm-up): ${((reported - started) / 1000).toFixed(0)} s`,
      );
    }
  }
}

/** --profile: the named row run under the CPU profiler on each side (sampler.ts, `profile`). */
async function profile(
  rows: Placed[],
  options: CompareOptions,
  commit: string,
  log: (line: string) => void,
): Promise<{ id: string; a: string; b: string }> {
  const row = rows.find((r) => r.id === options.profile) ?? rows.find((r) => r.id.startsWith(options.profile!));
  if (!row) throw new Error(`--profile ${options.profile}: no such row among those compared`);
  const dir = path.join(ROOT, 'bench', 'results', 'profiles');
  mkdirSync(dir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const files = { a: '', b: '' };
  for (const [name, { side, key }] of [
    ['A', row.a],
    ['B', row.b],
  ] as const) {
    const file = path.join(dir, `${row.id.replace(/\//g, '_')}-${name === 'A' ? `A-${commit.slice(0, 12)}` : 'B'}-${stamp}.cpuprofile`);
    await side.request({ op: 'profile', key, seconds: options.profileSeconds ?? 5, file });
    files[name === 'A' ? 'a' : 'b'] = path.relative(ROOT, file);
    log(`profile of ${row.id} on side ${name}: ${path.relative(ROOT, file)}`);
  }
  return { id: row.id, ...files };
}

const ms = (x: number) => (x >= 100 ? x.toFixed(1) : x >= 1 ? x.toFixed(3) : x.toFixed(4));

/** The comparison as a table, a line per row, and a summary. */
export function formatCompare(report: CompareReport): string {
  const header = ['row', 'A ms', 'B ms', 'B vs A', '95 % interval', 'p', '±', '≥', 'verdict'];
  const table = report.rows.map((r) => [
    r.id,
    ms(r.medianA),
    ms(r.medianB),
    formatChange(r.ratio),
    `${formatChange(r.low)} … ${formatChange(r.high)}`,
    r.p < 0.001 ? '<0.001' : r.p.toFixed(3),
    `${(r.resolution * 100).toFixed(1)} %`,
    `${(r.threshold * 100).toFixed(0)} %`,
    r.verdict,
  ]);
  const count = (v: string) => report.rows.filter((r) => r.verdict === v).length;
  const lines = [
    `A: ${report.a.ref} (${report.a.commit.slice(0, 12)}); B: this checkout (${report.b.commit.slice(0, 12)}${report.b.dirty ? ' with uncommitted changes' : ''})`,
    `${report.rounds} rounds after ${report.warmupRounds} of warm-up, ${report.seconds} s, ${os.cpus().length} cores, Node ${process.version}, load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
    `statistic: ${report.statistic}; threshold ${report.threshold === null ? "each family's (≥ column)" : `${(report.threshold * 100).toFixed(1)} %`}`,
    '',
    formatTable(header, table),
    `${report.rows.length} rows: ${count('faster')} faster, ${count('slower')} slower, ${count('no change')} no change beyond noise (Holm–Bonferroni over the ${report.rows.length} rows: at most a 5 % chance of any false verdict)`,
  ];
  if (report.onlyA.length) lines.push(`only on A (not compared): ${report.onlyA.join(', ')}`);
  if (report.onlyB.length) lines.push(`only on B (not compared): ${report.onlyB.join(', ')}`);
  for (const f of report.failed) lines.push(`failed${f.side ? ` on ${f.side}` : ''}: ${f.family ?? f.id}: ${f.message.split('\n')[0]}`);
  for (const p of report.profiles) lines.push(`profiles of ${p.id}: A ${p.a}, B ${p.b}`);
  return `${lines.join('\n')}\n`;
}
