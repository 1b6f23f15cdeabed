import test from 'ava';
import fc from 'fast-check';
import { meanMaxPlain } from '../engine/curves/mean-max-plain.ts';
import { createEnginePool } from '../engine/pool.ts';

/** The definition, written as plainly as possible: every window summed from scratch. */
function bruteForce(x: number[], d: number): { best: number; start: number } {
  let best = -Infinity;
  let start = -1;
  for (let i = 0; i + d <= x.length; i++) {
    let s = 0;
    for (let j = i; j < i + d; j++) s += x[j]!;
    if (start === -1 || s > best + 1e-9 * Math.max(1, Math.abs(best))) {
      best = s;
      start = i;
    }
  }
  return { best: best / d, start };
}

function plain(x: number[], durations: number[]) {
  const best = new Float64Array(durations.length);
  const start = new Int32Array(durations.length);
  meanMaxPlain(Float64Array.from(x), Int32Array.from(durations), best, start);
  return { best, start };
}

test('mean-max matches the definition on random and adversarial series (values and starts)', (t) => {
  const series = fc.oneof(
    fc.array(fc.integer({ min: -50, max: 1500 }), { minLength: 1, maxLength: 120 }),
    fc.array(fc.constantFrom(0, 250), { minLength: 1, maxLength: 120 }), // pauses and long ties
    fc.integer({ min: 1, max: 120 }).map((n) => new Array<number>(n).fill(200)), // constant power
  );
  fc.assert(
    fc.property(series, (x) => {
      const durations = Array.from({ length: x.length }, (_, i) => i + 1);
      const got = plain(x, durations);
      for (const d of durations) {
        const want = bruteForce(x, d);
        if (Math.abs(got.best[d - 1]! - want.best) > 1e-9 * Math.max(1, Math.abs(want.best))) return false;
        if (got.start[d - 1] !== want.start) return false;
      }
      return true;
    }),
    { numRuns: 300 },
  );
  t.pass();
});

test('a single sample, ties and durations longer than the data', (t) => {
  const one = plain([300], [1, 2]);
  t.deepEqual([...one.best], [300, Number.NaN]);
  t.deepEqual([...one.start], [0, -1]);
  const ties = plain([100, 100, 100, 100], [2]);
  t.is(ties.start[0], 0, 'the earliest of equal windows');
});

test('the piscina pool runs the kernel off the event loop and returns the same answer', async (t) => {
  const pool = createEnginePool({ threads: 2 });
  try {
    const x = Array.from({ length: 3600 }, (_, i) => 200 + 100 * Math.sin(i / 37) + (i % 600 < 30 ? 400 : 0));
    const durations = [1, 5, 30, 60, 300, 1200, 3600, 4000];
    const expected = plain(x, durations);
    const got = await pool.meanMaxPlain({ samples: Float64Array.from(x), durations: Int32Array.from(durations) });
    t.deepEqual([...got.best], [...expected.best]);
    t.deepEqual([...got.start], [...expected.start]);
  } finally {
    await pool.close();
  }
});
