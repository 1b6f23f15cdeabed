import test from 'ava';
import fc from 'fast-check';
import { normaliseSport, rootSport, sportFromFit, sportMatches, SPORT_PATTERN } from '../lib/sports.ts';

test('well-formed sports are kept, modifiers sorted; malformed ones refused', (t) => {
  t.is(normaliseSport('cycling.road'), 'cycling.road');
  t.is(normaliseSport('cycling+virtual+stationary'), 'cycling+stationary+virtual');
  t.is(normaliseSport('xc_skiing.skate+roller'), 'xc_skiing.skate+roller');
  t.is(normaliseSport('Running.Trail'), 'running.trail');
  for (const bad of ['', 'cycling.', '.cycling', 'cycling..road', 'cycling road', 'cycling-road', 'cycling+', 'cycl1ng', '_x', 'a__b']) {
    t.is(normaliseSport(bad), undefined, bad);
  }
});

test('legacy names are normalised', (t) => {
  t.is(normaliseSport('cycling.trainer'), 'cycling+stationary');
  t.is(normaliseSport('cycling.trainer+virtual'), 'cycling+stationary+virtual');
  t.is(normaliseSport('running.treadmill'), 'running+stationary');
  t.is(normaliseSport('rowing.ergometer'), 'rowing+stationary');
  t.is(normaliseSport('cycling.tt'), 'cycling.time_trial');
  t.is(normaliseSport('cycling.mountainbike'), 'cycling.mountain');
  t.is(normaliseSport('cross_country_skiing.skate'), 'xc_skiing.skate');
  t.is(normaliseSport('unknown'), 'generic');
  t.is(normaliseSport('cycling.ttx'), 'cycling.ttx', 'only whole segments are legacy');
});

test('a filter matches its sub-sports and requires its modifiers', (t) => {
  t.true(sportMatches('cycling.road', 'cycling'));
  t.true(sportMatches('cycling.road+virtual', 'cycling'));
  t.true(sportMatches('cycling+stationary+virtual', 'cycling+stationary'));
  t.true(sportMatches('cycling.trainer', 'cycling+stationary'), 'legacy on either side');
  t.false(sportMatches('cycling.road', 'cycling+stationary'));
  t.false(sportMatches('cycling', 'cycling.road'));
  t.false(sportMatches('cyclingx', 'cycling'));
  t.false(sportMatches('running.trail', 'cycling'));
});

test('property: normalising is idempotent and its output matches the pattern and itself', (t) => {
  const word = fc.stringMatching(/^[a-z]{1,6}(_[a-z]{1,4})?$/);
  const sport = fc
    .tuple(fc.array(word, { minLength: 1, maxLength: 3 }), fc.array(word, { maxLength: 3 }))
    .map(([path, mods]) => [path.join('.'), ...mods].join('+'));
  fc.assert(
    fc.property(sport, (s) => {
      const n = normaliseSport(s)!;
      return n !== undefined && SPORT_PATTERN.test(n) && normaliseSport(n) === n && sportMatches(n, n) && sportMatches(n, rootSport(n)!);
    }),
  );
  t.pass();
});

test('FIT sport and sub-sport map onto the taxonomy', (t) => {
  t.is(sportFromFit('cycling', 'road'), 'cycling.road');
  t.is(sportFromFit('cycling', 'indoor_cycling'), 'cycling+stationary');
  t.is(sportFromFit('running', 'treadmill'), 'running+stationary');
  t.is(sportFromFit('swimming', 'lap_swimming'), 'swimming.pool');
  t.is(sportFromFit('cycling', 'generic'), 'cycling');
  t.is(sportFromFit('cross_country_skiing', undefined), 'xc_skiing');
  t.is(sportFromFit('sport_254', 'whatever'), 'generic');
  t.is(sportFromFit(undefined, undefined), 'generic');
  t.is(sportFromFit(17, 3), 'generic');
  for (const s of ['cycling.road', 'cycling+stationary+virtual', 'cycling.mountain+electric']) t.truthy(SPORT_PATTERN.test(s));
});
