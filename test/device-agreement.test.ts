import test from 'ava';
import {
  agrees,
  compareSession,
  deviceRows,
  QUANTITIES,
  REASONS,
  RESOLUTION,
  runningSpans,
  TABLE_HEADER,
  tableRows,
  type DeviceSession,
  type Ours,
  type Quantity,
  type ReasonRule,
  oursOf,
} from './helpers/device-agreement.ts';
import { formatTable } from '../bench/report.ts';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fixturesDir } from './helpers/fixtures.ts';
import { ingestFile } from '../engine/ingest/ingest.ts';
import { DEVICE_FIELD } from '../engine/ingest/device-facts.ts';
import { deviceSessions, matchActivities } from './helpers/device-session.ts';

/**
 * Agreement with the device (issue 24 item 5; `npm run bench -- device`): every session of every
 * real FIT fixture agrees with the device's own values within 1 % (NP 2 %) or carries a reason
 * rule; each rule fires on the data it names and not on a near miss.
 */

test('every fixture session: each value within tolerance of the device or a named reason', async (t) => {
  const rows = await deviceRows();
  t.true(rows.length >= 13, `${rows.length} sessions`);
  const missed = rows.filter((r) => r.status === 'MISSED');
  t.deepEqual(
    missed.map((r) => `${r.file} #${r.session.index}`),
    [],
    `rows no reason explains:\n${formatTable(TABLE_HEADER, tableRows(missed))}`,
  );
  // Every reason given is a rule of REASONS (no free text), and every out-of-tolerance cell has one.
  const names = new Set(REASONS.map((r) => r.name));
  for (const r of rows)
    for (const c of r.cells)
      if (c.device !== undefined && !c.agrees)
        t.true(c.reason !== undefined && names.has(c.reason), `${r.file} #${r.session.index} ${c.quantity}`);
});

test("ingest's own data checks give every fixture session the verdict and rule the FIT SDK's decode gives", async (t) => {
  // The product decides from its own parse of the file (engine/ingest/device-facts.ts sessionFacts);
  // this side from Garmin's FIT SDK: the same rules must reach the same verdicts.
  const dir = path.join(fixturesDir(), 'fit');
  let compared = 0;
  for (const file of readdirSync(dir).filter((f) => f.toLowerCase().endsWith('.fit'))) {
    const bytes = new Uint8Array(readFileSync(path.join(dir, file)));
    const sessions = deviceSessions(bytes);
    const result = await ingestFile({ format: 'fit', bytes: bytes.slice(), sport: null });
    if (!result.ok) continue;
    const matched = matchActivities(sessions, result.activities);
    for (const [i, session] of sessions.entries()) {
      const activity = matched[i];
      if (!activity) continue;
      const row = compareSession(file, session, oursOf(activity));
      for (const cell of row.cells) {
        if (cell.device === undefined) continue;
        const stored = activity.deviceChecks?.[DEVICE_FIELD[cell.quantity]];
        t.deepEqual(
          stored,
          { agrees: cell.agrees, ...(cell.reason ? { rule: cell.reason } : {}) },
          `${file} #${session.index} ${cell.quantity}`,
        );
        compared++;
      }
    }
  }
  t.true(compared >= 80, `${compared} values compared`);
});

test('at least half of each quantity’s fixture values agree outright, and distance, heart rate and ascent all do', async (t) => {
  // A guard beside the reasons: a rule that fired too readily would let the test above pass.
  const rows = await deviceRows();
  const cells = rows.flatMap((r) => r.cells.filter((c) => c.device !== undefined && c.ours !== undefined));
  for (const q of QUANTITIES) {
    const of = cells.filter((c) => c.quantity === q);
    const agreeing = of.filter((c) => c.agrees).length;
    t.true(agreeing * 2 >= of.length, `${q}: ${agreeing} of ${of.length} agree outright`);
  }
  for (const q of ['distance', 'hr', 'ascent'] as const) {
    const off = cells.filter((c) => c.quantity === q && !c.agrees);
    t.deepEqual(off, [], `${q}: every value within tolerance`);
  }
});

// ─── Synthetic sessions ────────────────────────────────────────────────────────────────────────────

const T0 = Date.parse('2024-05-01T10:00:00Z');
const HOUR = 3600_000;

/** A one-hour ride whose every value ours matches exactly. */
function device(over: Partial<DeviceSession> = {}): DeviceSession {
  return {
    index: 0,
    sport: 'cycling',
    poolSwim: false,
    start: T0,
    timestamp: T0 + HOUR,
    values: { timer: 3600, elapsed: 3600, distance: 30000, power: 200, np: 220, hr: 140, cadence: 90, speed: 30000 / 3600, ascent: 300 },
    resolution: { ...RESOLUTION },
    maxPower: 800,
    timerEvents: [
      { t: T0, running: true },
      { t: T0 + HOUR, running: false },
    ],
    records: { count: 3601, first: T0, last: T0 + HOUR },
    recordMeans: { power: { withZeros: 200, withoutZeros: 220 }, cadence: { withZeros: 80, withoutZeros: 90 } },
    recorded: [...QUANTITIES],
    ...over,
  };
}

function ours(over: Partial<Ours> = {}, values: Ours['values'] = {}): Ours {
  return {
    values: {
      timer: 3600,
      elapsed: 3600,
      distance: 30000,
      power: 200,
      np: 220,
      hr: 140,
      cadence: 90,
      speed: 30000 / 3600,
      ascent: 300,
      ...values,
    },
    movingSeconds: 3600,
    channels: ['power', 'heart_rate', 'speed', 'cadence', 'altitude', 'distance', 'latitude', 'longitude'],
    ...over,
  };
}

const withValues = (values: DeviceSession['values'], over: Partial<DeviceSession> = {}) =>
  device({ ...over, values: { ...device().values, ...values } });
const rule = (name: string): ReasonRule => REASONS.find((r) => r.name === name)!;
const cell = (s: DeviceSession, o: Ours | undefined, q: Quantity) =>
  compareSession('synthetic.fit', s, o).cells.find((c) => c.quantity === q)!;

test('the synthetic ride agrees on every value with no reason', (t) => {
  const row = compareSession('synthetic.fit', device(), ours());
  t.is(row.status, 'ok');
  t.true(row.cells.every((c) => c.agrees && c.reason === undefined));
  for (const r of REASONS)
    for (const q of r.quantities) t.false(r.fires(device(), ours(), q), `${r.name} fires on ${q} of an agreeing ride`);
});

test('tolerance: 1 % (NP 2 %), or half the resolution of the stored value', (t) => {
  t.true(agrees('power', 200, 201.9));
  t.false(agrees('power', 200, 202.1));
  t.true(agrees('np', 200, 203.9));
  t.false(agrees('np', 200, 204.1));
  t.true(agrees('hr', 48, 48.45), 'a whole bpm: 0.45 is its rounding (0.9 %)');
  t.true(agrees('cadence', 11, 11.5), 'a whole rpm: 0.5 rpm is its rounding (4.5 %)');
  t.false(agrees('cadence', 11, 11.6));
  t.false(agrees('cadence', 11, 11.5, 1 / 128), 'a fractional cadence is stored to 1/128 rpm');
  t.false(agrees('distance', 100, undefined), 'no value of ours is a disagreement');
  t.true(agrees('distance', 0, 0));
});

test('a disagreement no rule explains is MISSED; the row lists its quantities', (t) => {
  const row = compareSession('synthetic.fit', device(), ours({}, { cadence: 80 }));
  t.is(row.status, 'MISSED');
  const c = row.cells.find((x) => x.quantity === 'cadence')!;
  t.false(c.agrees);
  t.is(c.reason, undefined);
  t.regex(tableRows([row])[0]!.at(-1)!, /^MISSED: cadence/);
  t.is(compareSession('synthetic.fit', device(), ours({}, { np: undefined })).status, 'MISSED', 'an NP of ours missing');
});

test('average cadence including zero readings is MISSED (the records mean with zeros)', (t) => {
  // What the rules before v2 gave: the mean over every cadence reading, zeros included.
  const s = device();
  t.is(compareSession('synthetic.fit', s, ours({}, { cadence: s.recordMeans.cadence!.withZeros })).status, 'MISSED');
});

test('runningSpans: the timer state from the events, clipped to the span', (t) => {
  const ev = (pairs: [number, boolean][]) => pairs.map(([s, running]) => ({ t: T0 + s * 1000, running }));
  t.is(runningSpans([], T0, T0 + 1000), undefined);
  t.deepEqual(
    runningSpans(
      ev([
        [0, true],
        [10, false],
        [20, true],
        [30, false],
      ]),
      T0,
      T0 + 40_000,
    ),
    [
      { start: T0, end: T0 + 10_000 },
      { start: T0 + 20_000, end: T0 + 30_000 },
    ],
  );
  t.deepEqual(
    runningSpans(
      ev([
        [-5, true],
        [10, false],
        [20, true],
      ]),
      T0,
      T0 + 25_000,
    ),
    [
      { start: T0, end: T0 + 10_000 },
      { start: T0 + 20_000, end: T0 + 25_000 },
    ],
    'running before the span and to its end',
  );
  t.deepEqual(
    runningSpans(
      ev([
        [0, true],
        [10, false],
        [11, false],
      ]),
      T0,
      T0 + 20_000,
    ),
    [{ start: T0, end: T0 + 10_000 }],
    'a second stop changes nothing',
  );
});

// ─── Each rule, firing and not ──────────────────────────────────────────────────────────────────────

test('no-records: a session without records and without an activity of ours', (t) => {
  const empty = device({ records: { count: 0 }, recorded: [] });
  t.is(cell(empty, undefined, 'hr').reason, 'no-records');
  t.is(compareSession('synthetic.fit', empty, undefined).status, 'reason');
  t.false(rule('no-records').fires(device(), undefined, 'hr'), 'records, but no activity of ours: MISSED');
  t.is(compareSession('synthetic.fit', device(), undefined).status, 'MISSED');
  t.false(rule('no-records').fires(empty, ours(), 'hr'), 'an activity of ours');
});

test('pool-swim-rests: the device timer spans first start → last stop, ours the running time', (t) => {
  // 3 × 10 min swimming with 2 × 5 min rests: device timer 40 min, running 30 min.
  const events = [0, 600, 900, 1500, 1800, 2400].map((s, i) => ({ t: T0 + s * 1000, running: i % 2 === 0 }));
  const swim = (over: Partial<DeviceSession> = {}) =>
    withValues(
      { timer: 2400, elapsed: 2400 },
      { sport: 'swimming/lap_swimming', poolSwim: true, timestamp: T0 + 2400_000, timerEvents: events, ...over },
    );
  t.is(cell(swim(), ours({}, { timer: 1800, elapsed: 2400 }), 'timer').reason, 'pool-swim-rests');
  t.false(
    rule('pool-swim-rests').fires(swim({ sport: 'swimming/open_water', poolSwim: false }), ours({}, { timer: 1800 }), 'timer'),
    'not a pool swim',
  );
  t.false(rule('pool-swim-rests').fires(swim(), ours({}, { timer: 1700 }), 'timer'), 'ours is not the running time');
  t.false(
    rule('pool-swim-rests').fires(
      withValues({ timer: 2000 }, { sport: 'swimming/lap_swimming', poolSwim: true, timestamp: T0 + 2400_000, timerEvents: events }),
      ours({}, { timer: 1800 }),
      'timer',
    ),
    "the device's timer is not first start → last stop",
  );
  t.false(
    rule('pool-swim-rests').fires(swim({ timerEvents: events.slice(0, 2) }), ours({}, { timer: 600 }), 'timer'),
    'no rest: a single running span',
  );
});

test("pool-swim-speed-underivable: a pool swim's device speed that no distance / time of the file gives", (t) => {
  // 1,000 m; timer 2400 s with rests (running 1800 s): 0.417, 0.556 m/s; the device says 0.65 (per-length speeds).
  const events = [0, 600, 900, 1500, 1800, 2400].map((s, i) => ({ t: T0 + s * 1000, running: i % 2 === 0 }));
  const swim = (values: Partial<Record<Quantity, number>>, over: Partial<DeviceSession> = {}) =>
    withValues(
      { timer: 2400, elapsed: 2400, distance: 1000, ...values },
      { sport: 'swimming/lap_swimming', poolSwim: true, timestamp: T0 + 2400_000, timerEvents: events, ...over },
    );
  const mine = ours({}, { distance: 1000, speed: 0.8, timer: 1800 });
  t.is(cell(swim({ speed: 0.65 }), mine, 'speed').reason, 'pool-swim-speed-underivable');
  t.false(
    rule('pool-swim-speed-underivable').fires(swim({ speed: 1000 / 1800 }), mine, 'speed'),
    'the device speed is distance / running time: ours should agree',
  );
  t.false(rule('pool-swim-speed-underivable').fires(swim({ speed: 1000 / 2400 }), mine, 'speed'), 'distance / timer');
  t.false(
    rule('pool-swim-speed-underivable').fires(swim({ speed: 0.65 }), ours({}, { distance: 900, speed: 0.8 }), 'speed'),
    'our distance disagrees',
  );
  t.false(
    rule('pool-swim-speed-underivable').fires(swim({ speed: 0.65 }, { sport: 'cycling', poolSwim: false }), mine, 'speed'),
    'not a pool swim',
  );
});

test('timer-exceeds-elapsed: the device timer longer than its elapsed time', (t) => {
  t.is(cell(withValues({ timer: 3700 }), ours(), 'timer').reason, 'timer-exceeds-elapsed');
  t.is(cell(withValues({ timer: 3700 }), ours(), 'timer').agrees, false);
  t.false(rule('timer-exceeds-elapsed').fires(withValues({ timer: 3600.4 }), ours(), 'timer'), 'within its rounding');
  t.false(rule('timer-exceeds-elapsed').fires(withValues({ timer: 3500 }), ours(), 'timer'));
  t.is(
    cell(withValues({ timer: 3500, elapsed: 3600 }), ours({}, { timer: 3400 }), 'timer').reason,
    undefined,
    'a timer of ours off with a consistent device: MISSED',
  );
});

test("elapsed-short-of-records: the device's elapsed ends before its own last record", (t) => {
  const short = withValues({ elapsed: 3000, timer: 3000 });
  t.is(cell(short, ours({}, { elapsed: 3600, timer: 3000 }), 'elapsed').reason, 'elapsed-short-of-records');
  t.false(rule('elapsed-short-of-records').fires(short, ours({}, { elapsed: 3300 }), 'elapsed'), 'ours does not end at the last record');
  const records = { count: 3001, first: T0, last: T0 + 3000_000 };
  t.false(
    rule('elapsed-short-of-records').fires(
      withValues({ elapsed: 3000 }, { records, timerEvents: [{ t: T0, running: true }] }),
      ours({}, { elapsed: 3600 }),
      'elapsed',
    ),
    'records and timer end with the elapsed time',
  );
  // A timer event after the session's timestamp is not the session's.
  t.false(
    rule('elapsed-short-of-records').fires(
      withValues({ elapsed: 3000 }, { records, timestamp: T0 + 3000_000 }),
      ours({}, { elapsed: 3600 }),
      'elapsed',
    ),
  );
  t.true(
    rule('elapsed-short-of-records').fires(
      withValues({ elapsed: 3000 }, { records, timestamp: T0 + 3600_000 }),
      ours({}, { elapsed: 3600 }),
      'elapsed',
    ),
    'the stop event at 3600 s, within the session',
  );
});

test('np-inconsistent: device NP above its max power or below its average power', (t) => {
  t.is(cell(withValues({ np: 900 }), ours(), 'np').reason, 'np-inconsistent');
  t.is(cell(withValues({ np: 190 }), ours(), 'np').reason, 'np-inconsistent', 'below the average power 200');
  t.false(rule('np-inconsistent').fires(withValues({ np: 250 }), ours(), 'np'), 'plausible, so a disagreement is MISSED');
  t.is(cell(withValues({ np: 250 }), ours(), 'np').reason, undefined);
  t.false(rule('np-inconsistent').fires(withValues({ np: 199 }), ours(), 'np'), 'within 1 % of the average');
  t.false(
    rule('np-inconsistent').fires(withValues({ np: 900 }, { maxPower: undefined } as Partial<DeviceSession>), ours(), 'np'),
    'no max power to contradict',
  );
});

test('power-zeros-left-out: device average between the records means with and without zeros', (t) => {
  // Records: 200 W with zeros, 220 W without; ours 200 W.
  t.is(cell(withValues({ power: 220 }), ours(), 'power').reason, 'power-zeros-left-out');
  t.is(cell(withValues({ power: 210 }), ours(), 'power').reason, 'power-zeros-left-out', 'some zeros left out');
  t.false(rule('power-zeros-left-out').fires(withValues({ power: 240 }), ours(), 'power'), 'above the mean without zeros');
  t.false(rule('power-zeros-left-out').fires(withValues({ power: 180 }), ours({}, { power: 200 }), 'power'), 'below the mean with zeros');
  t.false(
    rule('power-zeros-left-out').fires(withValues({ power: 220 }), ours({}, { power: 190 }), 'power'),
    'ours is not the mean with zeros',
  );
  t.false(
    rule('power-zeros-left-out').fires(withValues({ power: 220 }, { recordMeans: { power: { withZeros: 200 } } }), ours(), 'power'),
    'no non-zero reading',
  );
});

test('cadence-above-records: the device above every non-zero cadence mean of its records, ours that mean', (t) => {
  // Records: 80 rpm with zeros, 90 rpm without; ours 90.
  t.is(cell(withValues({ cadence: 92 }), ours(), 'cadence').reason, 'cadence-above-records');
  t.false(
    rule('cadence-above-records').fires(withValues({ cadence: 92 }), ours({}, { cadence: 80 }), 'cadence'),
    'ours includes the zeros: MISSED',
  );
  t.is(cell(withValues({ cadence: 92 }), ours({}, { cadence: 80 }), 'cadence').reason, undefined);
  t.false(
    rule('cadence-above-records').fires(withValues({ cadence: 85 }), ours(), 'cadence'),
    'below the non-zero mean: reproducible from the records, so a disagreement is ours',
  );
  t.false(
    rule('cadence-above-records').fires(withValues({ cadence: 90.8 }), ours({}, { cadence: 89 }), 'cadence'),
    'within 1 % of the non-zero mean',
  );
  t.false(rule('cadence-above-records').fires(withValues({ cadence: 92 }, { recordMeans: {} }), ours(), 'cadence'), 'no cadence records');
});

test('speed-over-timer: the device divides by timer time, ours by moving time, the timer ran while stopped', (t) => {
  // 30 km, timer 3600 s, moving 3000 s: device 8.333 m/s, ours 10 m/s.
  const moving = ours({ movingSeconds: 3000 }, { speed: 10 });
  t.is(cell(device(), moving, 'speed').reason, 'speed-over-timer');
  t.false(
    rule('speed-over-timer').fires(device(), ours({ movingSeconds: 3600 }, { speed: 10 }), 'speed'),
    'never stationary: the speeds should agree',
  );
  t.false(rule('speed-over-timer').fires(withValues({ speed: 9 }), moving, 'speed'), "the device's speed is not distance / timer");
  t.false(
    rule('speed-over-timer').fires(device(), ours({ movingSeconds: 3000 }, { speed: 10, timer: 3300 }), 'speed'),
    'our timer differs',
  );
  t.false(rule('speed-over-timer').fires(device(), ours({ movingSeconds: undefined }, { speed: 10 }), 'speed'), 'no moving time of ours');
});

test('not-in-records: the device has a value of a channel no record carries', (t) => {
  const noCadence = device({ recorded: QUANTITIES.filter((q) => q !== 'cadence') });
  t.is(cell(noCadence, ours({}, { cadence: undefined }), 'cadence').reason, 'not-in-records');
  t.false(
    rule('not-in-records').fires(device(), ours({}, { cadence: undefined }), 'cadence'),
    'the records have cadence: ours missing is MISSED',
  );
  t.false(rule('not-in-records').fires(noCadence, ours({}, { cadence: 80 }), 'cadence'), 'ours has a value: it is compared');
  t.false(rule('not-in-records').quantities.includes('timer'));
});

test('tiny-session: under 60 s', (t) => {
  const tiny = withValues({ timer: 24.593, elapsed: 24.593 }, { timestamp: T0 + 25_000 });
  t.is(cell(tiny, ours({}, { timer: 24, elapsed: 24.593 }), 'timer').reason, 'tiny-session');
  t.false(rule('tiny-session').fires(withValues({ timer: 59, elapsed: 61 }), ours(), 'timer'), 'elapsed 61 s');
  t.false(rule('tiny-session').fires(withValues({ timer: 3600, elapsed: 3600 }), ours(), 'hr'));
  t.false(rule('tiny-session').fires(device({ values: {} }), ours(), 'hr'), 'no duration');
});

test('the first rule that fires is the reason', (t) => {
  // A tiny pool swim: pool-swim-rests comes before tiny-session.
  const events = [0, 20, 30, 50].map((s, i) => ({ t: T0 + s * 1000, running: i % 2 === 0 }));
  const s = withValues(
    { timer: 50, elapsed: 50 },
    { sport: 'swimming/lap_swimming', poolSwim: true, timestamp: T0 + 50_000, timerEvents: events },
  );
  t.is(cell(s, ours({}, { timer: 40, elapsed: 50 }), 'timer').reason, 'pool-swim-rests');
  t.deepEqual(
    REASONS.map((r) => r.name),
    [...new Set(REASONS.map((r) => r.name))],
    'names are unique',
  );
});

test('np-above-best-30s: a device NP above the highest 30-s mean power of the records is the device’s error', (t) => {
  // A session NP of 773 W on a ride averaging 186 W whose records give 215 W (best 30 s: 420 W).
  const s = withValues({ power: 186, np: 773 }, { maxPower: 900 });
  const mine = ours({ best30sPower: 420 }, { power: 215, np: 240 });
  t.is(cell(s, mine, 'np').reason, 'np-above-best-30s');
  t.is(rule('np-above-best-30s').kind, 'device-error');
  t.false(rule('np-above-best-30s').fires(withValues({ np: 430 }), ours({ best30sPower: 420 }), 'np'), 'within 5 % of the best 30 s');
  t.false(rule('np-above-best-30s').fires(s, ours({}, { np: 240 }), 'np'), 'ours has no power: nothing to bound it by');
});

test('cadence-zeros-counted: the device averages its cadence records with zeros, ours without', (t) => {
  // The FR945's treadmill run: laps 82 rpm, records 82.8 with zeros and 86.8 without; ours 86.8.
  const s = withValues({ cadence: 82 }, { recordMeans: { cadence: { withZeros: 82.77, withoutZeros: 86.8 } } });
  t.is(cell(s, ours({}, { cadence: 86.8 }), 'cadence').reason, 'cadence-zeros-counted');
  t.false(rule('cadence-zeros-counted').fires(s, ours({}, { cadence: 84 }), 'cadence'), 'ours is not the mean without zeros');
  t.false(
    rule('cadence-zeros-counted').fires(
      withValues({ cadence: 80 }, { recordMeans: s.recordMeans }),
      ours({}, { cadence: 86.8 }),
      'cadence',
    ),
    'the device is not the mean with zeros either',
  );
});

test('hr-not-from-records: the device heart rate is no mean of its records, ours is', (t) => {
  // Runtastic's 61 s run: the lap says 140 bpm, its 15 heart-rate points 146.8; ours 147.8 (the seconds).
  const s = withValues({ hr: 140 }, { recordMeans: { heart_rate: { withZeros: 146.8 } } });
  t.is(cell(s, ours({}, { hr: 147.8 }), 'hr').reason, 'hr-not-from-records');
  t.false(rule('hr-not-from-records').fires(s, ours({}, { hr: 152 }), 'hr'), 'ours is not the records mean');
  t.false(rule('hr-not-from-records').fires(withValues({ hr: 146 }, { recordMeans: s.recordMeans }), ours({}, { hr: 152 }), 'hr'));
  t.false(rule('hr-not-from-records').fires(withValues({ hr: 140 }, { recordMeans: {} }), ours({}, { hr: 147.8 }), 'hr'), 'no records');
});

test('speed-over-shorter-moving-time: the device divides by a moving time of its own, under 10 % shorter than ours', (t) => {
  // The Edge 1000's laps: 17,054 m at 8.950 m/s (1,905 s moving), ours over 1,934 s.
  const s = withValues({ distance: 17054, speed: 8.95 });
  const mine = ours({ movingSeconds: 1934 }, { distance: 17054, speed: 17054 / 1934 });
  t.is(cell(s, mine, 'speed').reason, 'speed-over-shorter-moving-time');
  t.false(
    rule('speed-over-shorter-moving-time').fires(withValues({ distance: 17054, speed: 10.5 }), mine, 'speed'),
    '1,624 s: 16 % shorter',
  );
  t.false(rule('speed-over-shorter-moving-time').fires(withValues({ distance: 17054, speed: 8.7 }), mine, 'speed'), 'longer than ours');
  t.false(
    rule('speed-over-shorter-moving-time').fires(withValues({ distance: 16000, speed: 8.95 }), mine, 'speed'),
    'the distances differ',
  );
});
