// The newest lab test on the curves page: its critical power and W′ (or critical speed and D′) drawn
// as the hyperbola P(t) = CP + W′/t beside the athlete's curve, from the intensity-duration model's
// `test` (GET /api/v1/profile/intensity-duration-model). The 2-parameter model describes efforts of
// about 2 to 30 minutes, so it is drawn over TEST_DURATIONS only (120 s to 1800 s), whatever the
// chart's range; a test without W′ (D′) is drawn as its flat critical value over the same durations.

import { formatDuration } from './charts.js';
import { formatMetric } from './labels.js';
import { formatSpeed, pageUnits } from './units.js';

/** Apart from the palette's colours (charts.js) and the model's near-black. */
export const TEST_COLOR = '#00796b';
export const TEST_FIRST_SECOND = 120;
export const TEST_LAST_SECOND = 1800;

/** The durations (s) the hyperbola is drawn at: every 10 s to 600 s, then every 30 s to 1800 s. */
export const TEST_DURATIONS = [
  ...Array.from({ length: 49 }, (_, i) => TEST_FIRST_SECOND + 10 * i),
  ...Array.from({ length: 40 }, (_, i) => 630 + 30 * i),
];

/** The test's value at `seconds`: CP + W′/t (CS + D′/t); CP alone without a work capacity. */
export function testIntensity(test, seconds) {
  return test.critical_intensity + (test.work_capacity ?? 0) / seconds;
}

/** Its critical value and work capacity as people read them (a running speed as a pace). */
function values(test, metric, sport) {
  const power = metric === 'power';
  const critical = power ? formatMetric(test.critical_intensity, 'power') : formatSpeed(test.critical_intensity, sport, pageUnits());
  const capacity =
    test.work_capacity === null
      ? `${power ? 'W′' : 'D′'} not given`
      : power
        ? `W′ ${(test.work_capacity / 1000).toFixed(1)} kJ`
        : `D′ ${Math.round(test.work_capacity)} m`;
  return `${power ? 'CP' : 'CS'} ${critical}, ${capacity}`;
}

/** The legend's name of the test: its title (or "Test") and day, and its values. */
export function testLabel(test, metric, sport) {
  const day = test.start.slice(0, 10);
  const name = test.title ? `Test “${test.title}” of ${day}` : `Test of ${day}`;
  return `${name}: ${values(test, metric, sport)}`;
}

/** The chart's curve of the test: durations and values, swapped in the value-indexed view (x the value, ascending). */
export function testCurve(test, metric, view, sport) {
  const x = TEST_DURATIONS;
  const y = x.map((d) => testIntensity(test, d));
  // By value, a test without a work capacity is one value: its longest duration only (a curve needs distinct values).
  const flat = test.work_capacity === null;
  const byValue = flat ? { x: [y[0]], y: [TEST_LAST_SECOND] } : { x: [...y].reverse(), y: [...x].reverse() };
  const points = view === 'value' ? byValue : { x, y };
  return { label: testLabel(test, metric, sport), role: 'test', ...points, color: TEST_COLOR, dash: [8, 3, 2, 3] };
}

/** The words under the chart: which test is drawn and how it stands to the model's window, or that there is none. */
export function testNote(test, { metric, sport, windowStart, windowEnd }) {
  const what = metric === 'power' ? 'critical power' : 'critical speed';
  if (!test) return `No test with a ${what} up to ${windowEnd}${sport ? ' of this sport' : ''}, so none is drawn.`;
  const span = `${formatDuration(TEST_FIRST_SECOND)} to ${formatDuration(TEST_LAST_SECOND)}`;
  const how = test.work_capacity === null ? `its ${what} alone` : `${metric === 'power' ? 'CP + W′/t' : 'CS + D′/t'}`;
  const where = test.newer_than_window
    ? `It is newer than the oldest field data of the 90 days from ${windowStart} to ${windowEnd}: prefer it, or compare it with the curve and the model.`
    : `It is not newer than the 90 days of field data from ${windowStart} to ${windowEnd}: the curve may describe you better now.`;
  return `${testLabel(test, metric, sport)}, drawn as ${how} from ${span}. ${where}`;
}
