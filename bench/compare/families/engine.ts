import { adversarial, allDurations, DEFAULT_DURATIONS, fixturePower, floatSine, syntheticRidePower } from '../../engine-mean-max.ts';
import { workCuts } from '../../../engine/curves/longitudinal.ts';
import type { Family, Row, Tree } from '../row.ts';

/** "ride with four 21,733 W glitches" → "ride-with-four-21-733-w-glitches". */
export function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

interface Kernel {
  meanMax(x: Float64Array, durations: Int32Array, best: Float64Array, start: Int32Array, options?: { from?: number }): void;
  meanMaxAll(x: Float64Array): unknown;
  meanMaxAfter(x: Float64Array, durations: Int32Array, cuts: Int32Array, options?: { floor?: Float64Array }): unknown;
}

/**
 * The engine benchmark's workloads (bench/engine-mean-max.ts), one row each: the exact mean-max
 * kernel on the synthetic 4 h ride (every duration and the 19 defaults), every real fixture with
 * power, the adversarial series, five after-cuts in one pass, the 24 h ride, the float sine of the
 * growth rows at 1 h and 4 h (12 h and 24 h take 0.7 s and 3 s a run, more than a comparison's
 * budget can repeat: `npm run bench -- engine` times them), the longitudinal floor; and the plain prefix-sum scan of the 4 h ride, a
 * control: code that seldom changes, whose verdict shows what noise alone does to a slow row.
 * Inputs are made here, by this tree's generators and FIT decoder, the same for both sides.
 */
export const engineFamily: Family = {
  name: 'engine',
  isolation: 'shared',
  threshold: 0.03,
  forks: 5,
  about: 'the exact mean-max kernel (engine/curves/mean-max.ts) on the engine benchmark\u2019s series; the plain scan as a control',
  async open(tree: Tree) {
    const kernel = (await tree.load('engine/curves/mean-max.ts')) as Kernel;
    const { meanMaxPlain } = (await tree.load('engine/curves/mean-max-plain.ts')) as {
      meanMaxPlain(x: Float64Array, durations: Int32Array, best: Float64Array, start: Int32Array): void;
    };
    const n = 4 * 3600;
    const ride = syntheticRidePower(n, 2024);
    const every = allDurations(n);
    const rows: Row[] = [];
    const all = (id: string, label: string, x: Float64Array) => rows.push({ id, label, run: () => kernel.meanMaxAll(x) });

    all('engine/ride-4h-all', 'all durations, synthetic 4 h ride', ride);
    rows.push({
      id: 'engine/ride-4h-defaults',
      label: '19 default durations, synthetic 4 h ride',
      run: () => kernel.meanMax(ride, DEFAULT_DURATIONS, new Float64Array(19), new Int32Array(19)),
    });
    rows.push({
      id: 'engine/ride-4h-plain',
      label: 'control: plain prefix-sum scan, all durations, synthetic 4 h ride',
      run: () => meanMaxPlain(ride, every, new Float64Array(n), new Int32Array(n)),
    });
    const seen = new Map<string, number>();
    for (const [file, power] of await fixturePower()) {
      const k = seen.get(file) ?? 0;
      seen.set(file, k + 1);
      all(`engine/fixture-${slug(file)}${k ? `-${k}` : ''}`, `all durations, fixture ${file} (${power.length} s)`, power);
    }
    for (const [name, x] of adversarial(n)) all(`engine/adversarial-${slug(name)}`, `all durations, ${name}, 4 h`, x);

    const cuts = Int32Array.of(0, 1800, 3600, 7200, 10800);
    rows.push({
      id: 'engine/after-5-cuts',
      label: '5 after-cuts × all durations, synthetic 4 h ride, one pass',
      run: () => kernel.meanMaxAfter(ride, every, cuts),
    });
    all('engine/ride-24h-all', 'all durations, synthetic 24 h ride', syntheticRidePower(24 * 3600, 2025));
    for (const hours of [1, 4])
      all(`engine/growth-sine-${hours}h`, `growth: float sine (period 100 s), ${hours} h`, floatSine(hours * 3600, 100));

    // The longitudinal floor as bench/engine-mean-max.ts's floorRows builds it.
    const earlier = [syntheticRidePower(2 * 3600, 31), syntheticRidePower(3 * 3600, 32), syntheticRidePower(3 * 3600, 33)];
    const floor = new Float64Array(5 * 3600).fill(Number.NaN);
    for (const x of earlier) {
      const best = new Float64Array(x.length);
      meanMaxPlain(x, allDurations(x.length), best, new Int32Array(x.length));
      for (let k = 0; k < x.length; k++) if (!(floor[k]! >= best[k]!)) floor[k] = best[k]!;
    }
    const workCutsOf = workCuts(ride, Float64Array.of(0, 500_000, 1_000_000, 1_500_000));
    const query = allDurations(5 * 3600);
    rows.push({
      id: 'engine/floor-passed',
      label: 'floor as longitudinal passes it: 4 h ride, 4 work cuts, durations to 5 h',
      run: () => kernel.meanMaxAfter(ride, query, workCutsOf, { floor }),
    });
    rows.push({
      id: 'engine/floor-none',
      label: 'the same ride and cuts, no floor',
      run: () => kernel.meanMaxAfter(ride, every, workCutsOf),
    });
    return { rows, close: async () => {} };
  },
};
