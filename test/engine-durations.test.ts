import test from 'ava';
import fc from 'fast-check';
import { DEFAULT_DURATIONS, allDurations, parseDurations } from '../engine/curves/durations.ts';

/** The `all` grid, as docs/api-clients.md words it, tested point by point. */
function onAllGrid(d: number): boolean {
  if (d <= 180) return true;
  if (d <= 600) return d % 5 === 0;
  if (d <= 1800) return d % 10 === 0;
  if (d <= 3600) return d % 30 === 0;
  return d % 60 === 0;
}

test('the default grid of docs/api-clients.md', (t) => {
  t.deepEqual([...DEFAULT_DURATIONS], [1, 2, 5, 10, 15, 20, 30, 60, 120, 180, 300, 600, 900, 1200, 1800, 2700, 3600, 7200, 21600]);
  t.true(Object.isFrozen(DEFAULT_DURATIONS));
});

test('allDurations is every grid point ≤ max, ascending', (t) => {
  const check = (max: number) => {
    const want: number[] = [];
    for (let d = 1; d <= max; d++) if (onAllGrid(d)) want.push(d);
    return [...allDurations(max)].join() === want.join();
  };
  for (const max of [0, 1, 179, 180, 181, 184, 185, 599, 600, 601, 605, 610, 1800, 1829, 1830, 3600, 3659, 3660, 3661, 14_400, 21_600]) {
    t.true(check(max), `max ${max}`);
  }
  fc.assert(fc.property(fc.integer({ min: -5, max: 30_000 }), check), { numRuns: 200 });
  t.is(allDurations(3600).length, 180 + 84 + 120 + 60);
  t.deepEqual([...allDurations(200.7)].slice(-3), [190, 195, 200]);
  t.is(allDurations(Number.NaN).length, 0);
  t.throws(() => allDurations(Infinity), { instanceOf: RangeError });
});

test('parseDurations: absent, all, lists, repeated values, whitespace; sorted and de-duplicated', (t) => {
  const ok = (input: string | string[] | undefined) => {
    const r = parseDurations(input);
    if (!r.ok) throw new Error(r.message);
    return r.durations instanceof Int32Array ? [...r.durations] : r.durations;
  };
  t.is(ok(undefined), undefined);
  t.is(ok([]), undefined);
  t.is(ok('all'), 'all');
  t.is(ok(' ALL '), 'all');
  t.is(ok(['all']), 'all');
  t.deepEqual(ok('60'), [60]);
  t.deepEqual(ok('300, 5 ,60,5'), [5, 60, 300]);
  t.deepEqual(ok(['300', '5,60', ' 1 ']), [1, 5, 60, 300]);
  t.deepEqual(ok('0060'), [60]);
  t.deepEqual(ok('604800'), [604_800]);
  const many = Array.from({ length: 2000 }, (_, i) => String(2000 - i)).join(',');
  t.deepEqual(
    ok(many),
    Array.from({ length: 2000 }, (_, i) => i + 1),
  );
});

test('parseDurations rejects bad items with a message naming them', (t) => {
  const bad = (input: string | string[], mention: string) => {
    const r = parseDurations(input);
    t.false(r.ok, JSON.stringify(input));
    if (!r.ok) t.true(r.message.includes(mention), `${JSON.stringify(input)} → ${r.message}`);
  };
  bad('', 'empty');
  bad('5,,60', 'empty');
  bad('5,60,', 'empty');
  bad(['5', ''], 'empty');
  bad('5,abc', '"abc"');
  bad('1.5', '"1.5"');
  bad('1e3', '"1e3"');
  bad('+5', '"+5"');
  bad('0', '"0"');
  bad('60,-5', '"-5"');
  bad('604801', '"604801"');
  bad('99999999999999999999999', '"99999999999999999999999"');
  bad('all,60', 'all');
  bad(['60', 'all'], 'all');
  bad(Array.from({ length: 2001 }, (_, i) => String(i + 1)).join(','), '2000');
});

test('parseDurations agrees with a plain reading of random lists', (t) => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 1, max: 604_800 }), { minLength: 1, maxLength: 50 }), (xs) => {
      const r = parseDurations(xs.map((x) => ` ${x} `).join(','));
      const want = [...new Set(xs)].sort((a, b) => a - b);
      return r.ok && r.durations instanceof Int32Array && [...r.durations].join() === want.join();
    }),
  );
  t.pass();
});
