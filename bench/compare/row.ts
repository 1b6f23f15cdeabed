import path from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * The rows `npm run bench -- compare` times on two trees, and what a family of rows is given.
 *
 * The harness (bench/compare/, this tree's) defines every row and makes every input; a row loads
 * the product code it times from the tree it is opened on (`tree.load('engine/curves/mean-max.ts')`),
 * so both sides run the same row on the same inputs and only the product code differs. A family is
 * opened once per side (bench/compare/sampler.ts): in that side's own process, whose working
 * directory is the tree (each tree keeps its own node_modules, native addons and settings), or
 * both in one process (`isolation: 'shared'`).
 */
export interface Tree {
  /** The tree's root directory (a git worktree of the reference, or this checkout). */
  root: string;
  /** Import a module of the tree by its path from the root ("engine/curves/mean-max.ts"). */
  // biome-ignore lint/suspicious/noExplicitAny: the module's type is the tree's own, chosen at run time
  load<T = any>(relative: string): Promise<T>;
}

export function treeAt(root: string): Tree {
  return { root, load: (relative) => import(pathToFileURL(path.join(root, relative)).href) };
}

export interface Row {
  /** Stable key across trees and runs ("engine/ride-4h-all"): rows of both sides are matched by it. */
  id: string;
  /** What the row does, for the table. */
  label: string;
  /** One run of the row (one operation, or `operations` of them). */
  run(): unknown;
  /**
   * Operations one run makes (a burst of 400 requests: 400); samples are ms per operation. The
   * sampler picks how many runs make a sample (about 20 ms), the same for both sides.
   */
  operations?: number;
  /**
   * Least warm-up before its first sample, ms (the sampler's default: 10 runs and 100 ms, at most
   * 1 s). A request to a service warms its engine threads and connections too, which ten runs do not.
   */
  warmMs?: number;
  /** Work per sample, ms (compare's SAMPLE_MS by default): a request's samples average several requests. */
  sampleMs?: number;
}

export interface OpenFamily {
  rows: Row[];
  close(): Promise<void>;
}

/** A family of rows: `open` prepares its inputs (and any service) on one tree. */
export interface Family {
  name: string;
  /**
   * `process` (the default): each side's rows run in a process of their own, in their own tree (a
   * service, native addons, a tree's own packages). `shared`: both sides' rows run in one process,
   * so that nothing but the code differs (CPU kernels: bench/README.md, "compare", says why).
   */
  isolation?: 'process' | 'shared';
  /**
   * It loads native addons (DuckDB): shared only when both trees use the same node_modules (the
   * same lockfile), never two copies of an addon in one process; otherwise isolated.
   */
  native?: boolean;
  /**
   * The smallest change its rows' verdicts call one (0.02: 2 %; bench/compare/stats.ts), set above
   * the bias `compare HEAD` measured between two copies of the same code (bench/README.md, "compare").
   */
  threshold: number;
  /**
   * Forks: the rounds are split among this many fresh sets of sampler processes, one after the
   * other (1 by default). Each process's JIT makes choices of its own, a bias of a few per cent on
   * some rows that its rounds cannot show; the interval of several forks holds it (stats.ts).
   */
  forks?: number;
  /** What the family measures and against what, one line. */
  about: string;
  /** `options.activities`: the history's size, for the families that seed one (each has its default). */
  open(tree: Tree, options?: { activities?: number }): Promise<OpenFamily>;
}
