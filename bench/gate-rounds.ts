import { type Comparison, compareSamples } from './compare/stats.ts';

/**
 * The rounds of the regression gate (bench/gate.ts): several codes timed in turns, and what a check
 * reads from their samples.
 */

/** What one check measured: the three codes' samples reduced to the change and the two speed-ups. */
export interface Measured {
  label: string;
  /** This checkout's time ÷ the reference's (ratio > 1: slower), its interval and rounds. */
  change: Comparison;
  /** The baseline's time ÷ each code's: the speed-ups. */
  speedup: { ours: number; reference: number };
}

/**
 * Samples of each function, interleaved: in each round every function times one run (ms), in an
 * order that goes through every permutation in turn (for two: A B, then B A), so that none always
 * runs first or always after the same other. Warm-up rounds are dropped.
 */
export async function interleaved(rounds: number, warmup: number, fns: readonly (() => Promise<number> | number)[]): Promise<number[][]> {
  const orders = permutations(fns.length);
  const out = fns.map(() => [] as number[]);
  for (let r = 0; r < warmup + rounds; r++) {
    const taken = new Array<number>(fns.length);
    for (const i of orders[r % orders.length]!) taken[i] = await fns[i]!();
    if (r >= warmup) taken.forEach((ms, i) => out[i]!.push(ms));
  }
  return out;
}

/** Every order of 0 … n−1, the identity first and, for two, its reverse second. */
export function permutations(n: number): number[][] {
  if (n <= 1) return [Array.from({ length: n }, (_, i) => i)];
  const out: number[][] = [];
  for (const rest of permutations(n - 1))
    for (let at = rest.length; at >= 0; at--) out.push([...rest.slice(0, at), n - 1, ...rest.slice(at)]);
  return out;
}

/** The change and the speed-ups from samples of ours, the reference's and the baseline, paired by round. */
export function measured(label: string, ours: number[], reference: number[], baseline: number[]): Measured {
  return {
    label,
    change: compareSamples(reference, ours),
    speedup: { ours: compareSamples(ours, baseline).ratio, reference: compareSamples(reference, baseline).ratio },
  };
}
