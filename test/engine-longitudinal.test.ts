import test from 'ava';
import fc from 'fast-check';
import { combineLevels, longitudinalAfter, workCuts, type LevelCurve } from '../engine/curves/longitudinal.ts';
import { valueIndexed } from '../engine/curves/value-indexed.ts';

/** The plain definition from a cut: the best window starting at ≥ from (prefix sums over the whole series; strictly greater keeps the earliest). */
function scanFrom(x: Float64Array, d: number, from: number): { best: number; start: number } {
  const prefix = new Float64Array(x.length + 1);
  for (let i = 0; i < x.length; i++) prefix[i + 1] = prefix[i]! + x[i]!;
  let best = -Infinity;
  let start = -1;
  for (let i = from; i + d <= x.length; i++) {
    const s = prefix[i + d]! - prefix[i]!;
    if (s > best) {
      best = s;
      start = i;
    }
  }
  return start < 0 ? { best: Number.NaN, start: -1 } : { best: best / d, start };
}

function ride(n: number, seed: number): Float64Array {
  let s = seed >>> 0 || 1;
  const rand = () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32;
  return Float64Array.from({ length: n }, (_, i) =>
    rand() < 0.05 ? 0 : Math.floor(150 + 80 * Math.sin(i / (40 + (seed & 63))) + rand() * 200 + (rand() < 0.01 ? 800 : 0)),
  );
}

/** longitudinalAfter by duration against the plain definition: per threshold and duration the best window from each cut, the older activity on ties. */
function sameAsPlain(activities: Float64Array[], thresholds: Float64Array, durations: Int32Array): void {
  const from = new Int32Array(activities.length);
  activities.reduce((at, x, a) => ((from[a] = at), at + x.length), 0);
  const values = new Float64Array(activities.reduce((n, x) => n + x.length, 0));
  activities.forEach((x, a) => values.set(x, from[a]!));
  const out = longitudinalAfter({
    samples: { values, from, length: Int32Array.from(activities, (x) => x.length) },
    thresholds,
    durations,
    step: 1,
  });
  if (out.kind !== 'duration') throw new Error('expected duration curves');
  thresholds.forEach((_, j) => {
    durations.forEach((d, k) => {
      let best = Number.NaN;
      let start = -1;
      let owner = -1;
      activities.forEach((x, a) => {
        const got = scanFrom(x, d, workCuts(x, thresholds)[j]!);
        if (got.best === got.best && !(best >= got.best)) [best, start, owner] = [got.best, got.start, a];
      });
      const c = out.curves[j]!;
      if (!Object.is(c.best[k], best) || c.start[k] !== start || c.owner[k] !== owner) {
        throw new Error(
          `threshold ${j}, d=${d}: got ${c.best[k]} @ ${c.start[k]} (activity ${c.owner[k]}), want ${best} @ ${start} (activity ${owner})`,
        );
      }
    });
  });
}

test('longitudinal after-work curves by duration: per threshold the best over activities from their cuts, older activity on ties, durations longer than some activities', (t) => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.integer({ min: 150, max: 900 }), fc.integer()), { minLength: 1, maxLength: 5 }),
      fc.integer({ min: 1, max: 1000 }),
      (specs, step) => {
        const activities = specs.map(([n, seed]) => ride(n, seed));
        const longest = Math.max(...activities.map((x) => x.length));
        sameAsPlain(
          activities,
          Float64Array.of(0, step * 50, step * 120),
          Int32Array.from({ length: Math.ceil(longest / 3) }, (_, k) => 1 + 3 * k),
        );
      },
    ),
    { numRuns: 40 },
  );
  t.pass();
});

test('longitudinal after-work curves by duration: ties across activities (exact copies, an older echo of the strongest ride) go to the older one, value for value with the plain definition', (t) => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.integer({ min: 150, max: 700 }), fc.integer()), { minLength: 1, maxLength: 3 }),
      fc.array(fc.nat(), { minLength: 1, maxLength: 6 }),
      fc.integer({ min: 1, max: 600 }),
      (specs, picks, step) => {
        // Copies of a few rides in any order (ties everywhere), a constant ride, and the strongest ride (newer than its echo).
        const base = specs.map(([n, seed]) => ride(n, seed));
        const strong = Float64Array.from(ride(400, 7), (v, i) => v + 300 + (i === 10 ? 5000 : 0));
        // An older echo of the strongest ride's first minute: weaker where the order is decided, equal at short durations.
        const echo = Float64Array.from(strong, (v, i) => (i < 60 ? v : 0));
        const activities = [
          ...picks.map((p) => base[p % base.length]!.slice()),
          echo,
          new Float64Array(300).fill(250),
          strong,
          strong.slice(),
          base[0]!.slice(),
        ];
        const longest = Math.max(...activities.map((x) => x.length));
        sameAsPlain(
          activities,
          Float64Array.of(0, step * 40, step * 100),
          Int32Array.from({ length: Math.ceil(longest / 5) }, (_, k) => 1 + 5 * k),
        );
      },
    ),
    { numRuns: 40 },
  );
  t.pass();
});

test('longitudinal after-work curves by intensity: per threshold and level the longest duration of any activity from its cut, older activity on ties (many similar activities, so the running best prunes)', (t) => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.integer({ min: 150, max: 700 }), fc.integer({ min: 0, max: 5 })), { minLength: 2, maxLength: 14 }),
      fc.integer({ min: 1, max: 300 }),
      (specs, step) => {
        // Few distinct seeds: equal activities tie at every level (the older must keep them).
        const activities = specs.map(([n, seed]) => ride(n, seed));
        const offsets = Int32Array.from(
          [0, ...activities.map((x) => x.length)].map((_, i, a) => a.slice(0, i + 1).reduce((p, q) => p + q, 0)),
        );
        const values = new Float64Array(offsets[offsets.length - 1]!);
        activities.forEach((x, a) => values.set(x, offsets[a]!));
        const thresholds = Float64Array.of(0, step * 40, step * 100, step * 160);
        const out = longitudinalAfter({
          samples: { values, from: offsets.slice(0, -1), length: Int32Array.from(activities, (x) => x.length) },
          thresholds,
          durations: null,
          step: 1,
        });
        if (out.kind !== 'intensity') throw new Error('expected level curves');
        thresholds.forEach((_, j) => {
          let want: LevelCurve = { duration: new Int32Array(0), start: new Int32Array(0), owner: new Int32Array(0) };
          activities.forEach((x, a) => {
            const cut = workCuts(x, thresholds)[j]!;
            const best = new Float64Array(x.length);
            const start = new Int32Array(x.length);
            for (let d = 1; d <= x.length; d++) ({ best: best[d - 1], start: start[d - 1] } = scanFrom(x, d, cut));
            const own = valueIndexed(best, start, 1);
            want = combineLevels(want, { ...own, owner: new Int32Array(own.duration.length).fill(a) });
          });
          const got = out.curves[j]!;
          const same =
            got.duration.length === want.duration.length &&
            got.duration.every((v, k) => v === want.duration[k] && got.start[k] === want.start[k] && got.owner[k] === want.owner[k]);
          if (!same)
            throw new Error(
              `threshold ${j}: got ${got.duration.length} levels, want ${want.duration.length}; first difference at level ${1 + got.duration.findIndex((v, k) => v !== want.duration[k] || got.start[k] !== want.start[k] || got.owner[k] !== want.owner[k])}`,
            );
        });
      },
    ),
    { numRuns: 40 },
  );
  t.pass();
});
