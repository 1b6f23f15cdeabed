/**
 * The activity page's "Data checks" section (api/web/activities.ts): which ingest rules made the
 * numbers when they are older than the current ones, the device's own session values beside ours
 * where they differ by more than 1 %, and the records and samples left out of the file, each with a
 * one-line reason.
 */
import type { ActivityRow } from '../../db/database.ts';
import { PLAUSIBLE_RANGES } from '../../engine/ingest/plausible.ts';
import { INGEST_RULES_VERSION } from '../../engine/ingest/rules.ts';
import { ruleNamed } from '../../engine/ingest/device-rules.ts';
import { html, type Html } from './html.ts';
import { clockDuration, grouped, metricLabel, num, statsOf } from './activity-format.ts';
import { formatDistance, formatSpeed, type Units } from './static/units.js';

const plural = (n: number, one: string, many: string) => `${grouped(n)} ${n === 1 ? one : many}`;

/** Why records of the file were left out (api/services/resources/activities-traces.ts DroppedRecords), one line per reason. */
const DROPPED_REASONS: Record<string, { one: string; many: string }> = {
  duplicate_timestamp: {
    one: "its timestamp repeats another record's (the last one in the file is kept)",
    many: "their timestamps repeat another record's (the last one in the file is kept)",
  },
  outside_session: {
    one: 'its timestamp lies outside the session (a device clock that jumped, or a record written after the end)',
    many: 'their timestamps lie outside the session (a device clock that jumped, or records written after the end)',
  },
  no_time: {
    one: 'it has no valid time, so it cannot be placed in the activity',
    many: 'they have no valid time, so they cannot be placed in the activity',
  },
};

/** A channel's plausible range (engine/ingest/plausible.ts), as people read it: `0 to 3,000 W`, `0 to 360 km/h`, `at least 0 m`. */
function plausibleRange(channel: string): string | undefined {
  const range = (PLAUSIBLE_RANGES as Record<string, { min: number; max: number; unit: string } | undefined>)[channel];
  if (!range) return undefined;
  const [min, max, unit] = channel === 'speed' ? [range.min * 3.6, range.max * 3.6, 'km/h'] : [range.min, range.max, range.unit];
  const withUnit = (text: string) => (unit === '°' || unit === '%' ? `${text}${unit}` : `${text} ${unit}`);
  const value = (v: number) => `${v < 0 ? '−' : ''}${grouped(Math.abs(v))}`;
  return Number.isFinite(max) ? withUnit(`${value(min)} to ${value(max)}`) : `at least ${withUnit(value(min))}`;
}

/** The file's records left out and the samples stored as missing, each with its reason; a line saying so when there are none. */
function recordChecks(a: ActivityRow): Html {
  const dropped = a.dropped_records;
  const implausible = a.implausible_samples;
  if (!dropped && !implausible) return html``;
  const lines: Html[] = [];
  // In a fixed order (the reasons', the channels'): jsonb keeps its keys in an order of its own.
  const ordered = (counts: Record<string, number>, known: string[]) =>
    [...known.filter((k) => k in counts), ...Object.keys(counts).filter((k) => !known.includes(k))].map((k) => [k, counts[k]] as const);
  for (const [reason, value] of ordered(dropped ?? {}, Object.keys(DROPPED_REASONS))) {
    const count = num(value);
    if (!count) continue;
    const why = DROPPED_REASONS[reason];
    const text = why
      ? `${plural(count, 'record', 'records')} left out: ${count === 1 ? why.one : why.many}`
      : `${plural(count, 'record', 'records')} left out (${reason.replace(/_/g, ' ')})`;
    lines.push(html`<li data-dropped="${reason}">${text}</li>`);
  }
  for (const [channel, value] of ordered(implausible ?? {}, Object.keys(PLAUSIBLE_RANGES))) {
    const count = num(value);
    if (!count) continue;
    const range = plausibleRange(channel);
    const what = `${plural(count, `${metricLabel(channel)} sample`, `${metricLabel(channel)} samples`)} stored as missing`;
    lines.push(
      html`<li data-implausible="${channel}">${range ? `${what}: outside the plausible ${range}, so sensor glitches rather than effort` : `${what}: implausible values`}</li>`,
    );
  }
  if (lines.length)
    return html`<h3 id="record-checks-heading">Left out of the file</h3><ul id="record-checks" class="record-checks" aria-labelledby="record-checks-heading">${lines}</ul>`;
  const clean = [dropped ? 'every record of the file was used' : '', implausible ? 'every sample was within its plausible range' : '']
    .filter(Boolean)
    .join(', and ');
  return html`<p id="record-checks-clean" class="muted">${clean.charAt(0).toUpperCase()}${clean.slice(1)}.</p>`;
}

/** Our value beside the device's (FIT session fields, api/services/resources/activities-traces.ts DeviceSummary): how each is read and shown, and why they may differ. */
const DEVICE_COMPARISONS: {
  key: string;
  label: string;
  device: string;
  ours: (a: ActivityRow) => number | undefined;
  /** The value as the user reads it: the units (and for speed, the sport's pace or speed) of their preference. */
  show: (v: number, shown: { sport: string; units: Units }) => string;
  why: string;
}[] = [
  {
    key: 'timer',
    label: 'Timer time',
    device: 'total_timer_time',
    ours: (a) => num(a.timer_seconds),
    show: (s) => clockDuration(s * 1000),
    why: "We add up the spans between the file's timer start and stop events (or leave out gaps over 90 s; in a TCX file, the gaps its laps' timers say were stopped); the device keeps its own count, which may treat auto-pause or a paused start differently.",
  },
  {
    key: 'elapsed',
    label: 'Elapsed time',
    device: 'total_elapsed_time',
    ours: (a) => (a.end_time.getTime() - a.start_time.getTime()) / 1000,
    show: (s) => clockDuration(s * 1000),
    why: "Ours is the session's start to its end as stored, after records outside the session were left out; the device's own count may start or stop at another instant.",
  },
  {
    key: 'distance',
    label: 'Distance',
    device: 'total_distance',
    ours: (a) => num(a.distance),
    show: (m, { units }) => formatDistance(m, units),
    why: "Ours is the recorded distance channel at the end (or speed × time without one); the device may total another sensor's distance or correct it afterwards.",
  },
  {
    key: 'avg_power',
    label: 'Average power',
    device: 'avg_power',
    ours: (a) => num(statsOf(a.summary, 'power')?.mean),
    show: (w) => `${grouped(w)} W`,
    why: 'Ours averages every second the timer ran, zeros (coasting) included; devices may leave zeros out or average their records instead of seconds.',
  },
  {
    key: 'np',
    label: 'Normalized power',
    device: 'normalized_power',
    ours: (a) => num(statsOf(a.summary, 'power')?.normalized),
    show: (w) => `${grouped(w)} W`,
    why: 'Ours is the 30 s rolling mean over the seconds the timer ran, on a 1 Hz grid with short gaps filled; devices differ in how they treat pauses, gaps and zeros.',
  },
  {
    key: 'avg_hr',
    label: 'Average heart rate',
    device: 'avg_heart_rate',
    ours: (a) => num(statsOf(a.summary, 'heart_rate')?.mean),
    show: (b) => `${grouped(b)} bpm`,
    why: 'Ours averages the recorded seconds on a 1 Hz grid; the device may average its records, or count only while its timer ran.',
  },
  {
    key: 'avg_cadence',
    label: 'Average cadence',
    device: 'avg_cadence',
    ours: (a) => num(statsOf(a.summary, 'cadence')?.mean),
    show: (r) => `${grouped(r)} rpm`,
    why: 'Ours leaves out the seconds with cadence 0 (coasting); some devices count them, or average their records instead of seconds.',
  },
  {
    key: 'avg_speed',
    label: 'Average speed',
    device: 'avg_speed',
    ours: (a) => num(statsOf(a.summary, 'speed')?.mean),
    show: (v, { sport, units }) => formatSpeed(v, sport, units),
    why: "Ours is distance / moving time; the device's is distance / timer time, so stops while the timer ran lower it.",
  },
  {
    key: 'ascent',
    label: 'Ascent',
    device: 'total_ascent',
    ours: (a) => num(statsOf(a.summary, 'altitude')?.gain),
    show: (m) => `${grouped(m)} m`,
    why: "Ours is the device's total when the file has one, else the climbs of more than 3 m in the recorded altitude; the device filters its barometer or GPS altitude its own way.",
  },
];

/** The device's own values checked against their channel's plausible range (engine/ingest/plausible.ts), with their labels. */
const DEVICE_VALUES: [string, string, string][] = [
  ['max_speed', 'maximum speed', 'speed'],
  ['avg_speed', 'average speed', 'speed'],
  ['max_power', 'maximum power', 'power'],
  ['avg_power', 'average power', 'power'],
  ['normalized_power', 'normalized power', 'power'],
  ['max_heart_rate', 'maximum heart rate', 'heart_rate'],
  ['avg_heart_rate', 'average heart rate', 'heart_rate'],
  ['max_cadence', 'maximum cadence', 'cadence'],
  ['avg_cadence', 'average cadence', 'cadence'],
];

/**
 * The device's own values no athlete can produce (beyond the channel's plausible range: a TCX lap
 * MaximumSpeed of 63,720 m/s): the device's error, not a way of counting, so not compared with ours.
 */
function impossibleDeviceValues(
  device: Record<string, unknown>,
  shown: { sport: string; units: Units },
): { keys: Set<string>; lines: Html[] } {
  const keys = new Set<string>();
  const lines: Html[] = [];
  for (const [key, label, channel] of DEVICE_VALUES) {
    const v = num(device[key]);
    const range = PLAUSIBLE_RANGES[channel as keyof typeof PLAUSIBLE_RANGES];
    if (v === undefined || (v >= range.min && v <= range.max)) continue;
    keys.add(key);
    // A speed, not a pace (an impossible speed is a pace of 0:00).
    const value = channel === 'speed' ? formatSpeed(v, 'cycling', shown.units) : `${grouped(v)} ${range.unit}`;
    lines.push(
      html`<li data-device-error="${key}">The device's ${label}, ${value}, is impossible (outside the plausible ${plausibleRange(channel) ?? ''}): the device's error, not a way of counting; it is not compared with ours.</li>`,
    );
  }
  return { keys, lines };
}

/**
 * Whether ours differs from the device's value: as the data checks made at ingest say
 * (engine/ingest/device-checks.ts: 1 %, NP 2 %, or the value's own rounding), or for activities
 * stored before them, by more than 1 % of the device's.
 */
function differs(a: ActivityRow, field: string, device: number, ours: number): boolean {
  const check = a.device_checks?.[field as keyof NonNullable<ActivityRow['device_checks']>];
  return check ? !check.agrees : Math.abs(ours - device) > 0.01 * Math.abs(device);
}

/** The rule the data checks name for a value, when they name one. */
function ruleOf(a: ActivityRow, field: string) {
  const name = a.device_checks?.[field as keyof NonNullable<ActivityRow['device_checks']>]?.rule;
  return ruleNamed(name);
}

/** Why ours and the device's differ: the rule the data checks name, or how each is counted when none does. */
function whyCell(a: ActivityRow, c: (typeof DEVICE_COMPARISONS)[number]): Html {
  const rule = ruleOf(a, c.device);
  if (rule) return html`<span class="rule" data-rule="${rule.name}">${rule.name}</span>: ${rule.explanation}.`;
  if (a.device_checks) return html`<span data-rule="">No rule of the data checks explains this difference.</span> ${c.why}`;
  return html`${c.why}`;
}

/** The device's own session values beside ours where they differ (each with its rule); one line when all agree. */
function deviceComparison(a: ActivityRow, units: Units): Html {
  const shown = { sport: a.sport, units };
  const device = a.device_summary;
  if (!device) return html``;
  const impossible = impossibleDeviceValues(device, shown);
  // Values the data checks found impossible by the device's own data (a device error, not a convention).
  for (const c of DEVICE_COMPARISONS) {
    const rule = ruleOf(a, c.device);
    const v = num(device[c.device]);
    if (rule?.kind !== 'device-error' || v === undefined || impossible.keys.has(c.device)) continue;
    impossible.keys.add(c.device);
    impossible.lines.push(
      html`<li data-device-error="${c.device}" data-rule="${rule.name}">The device's ${c.label.toLowerCase()}, ${c.show(v, shown)}, is impossible: ${rule.explanation} (<span class="rule">${rule.name}</span>). The device's error, not a way of counting; it is not compared with ours.</li>`,
    );
  }
  const errors = impossible.lines.length
    ? html`<ul id="device-errors" class="record-checks" aria-label="The device's own impossible values">${impossible.lines}</ul>`
    : html``;
  const pairs = DEVICE_COMPARISONS.filter((c) => !impossible.keys.has(c.device))
    .map((c) => ({ c, device: num(device[c.device]), ours: c.ours(a) }))
    .filter(
      (p): p is { c: (typeof DEVICE_COMPARISONS)[number]; device: number; ours: number } => p.device !== undefined && p.ours !== undefined,
    );
  if (!pairs.length) return errors;
  const differing = pairs.filter((p) => differs(a, p.c.device, p.device, p.ours));
  if (!differing.length)
    return html`<p id="device-agrees" class="device-agrees">Agrees with the device's own summary (within ${a.device_checks ? "1 % (normalized power 2 %) or the device's rounding" : '1 %'}: ${pairs.map((p) => p.c.label.toLowerCase()).join(', ')}).</p>${errors}`;
  const agreeing = pairs.filter((p) => !differs(a, p.c.device, p.device, p.ours));
  const percent = (p: { device: number; ours: number }) => {
    if (p.device === 0) return '';
    const d = ((p.ours - p.device) / Math.abs(p.device)) * 100;
    return `${d > 0 ? '+' : '−'}${grouped(Math.abs(d), 1)} %`;
  };
  return html`<h3 id="device-heading">Beside the device's own summary</h3>
<div class="table-scroll"><table class="wide device-comparison" id="device-comparison" aria-labelledby="device-heading">
<thead><tr><th></th><th>Device says</th><th>We compute</th><th>${a.device_checks ? 'Why they differ' : 'Why it may differ'}</th></tr></thead>
<tbody>${differing.map(
    (p) =>
      html`<tr data-compare="${p.c.key}"><th scope="row">${p.c.label}</th><td data-device>${p.c.show(p.device, shown)}</td><td data-ours>${p.c.show(p.ours, shown)} <span class="muted">(${percent(p)})</span></td><td class="why">${whyCell(a, p.c)}</td></tr>`,
  )}</tbody>
</table></div>
${agreeing.length ? html`<p class="muted" id="device-agreeing">${a.device_checks ? 'Agreeing with the device' : 'Within 1 % of the device'}: ${agreeing.map((p) => p.c.label.toLowerCase()).join(', ')}.</p>` : ''}${errors}`;
}

/** Which rules made the numbers, when older than the current ones; the device comparison; records and samples left out. */
export function dataChecks(a: ActivityRow, units: Units = 'metric'): Html {
  const version = a.ingest_version;
  const note =
    version < INGEST_RULES_VERSION
      ? html`<p id="ingest-version" class="ingest-note">Made by version ${version} of the ingest rules (current: ${INGEST_RULES_VERSION}): ${
          version === 1
            ? "timer and moving time, normalized power, the device's own summary and the records left out were not kept then. "
            : ''
        }Reprocessing (<code>npm run cli -- reprocess</code>) re-derives the activity from its original file with the current rules.</p>`
      : '';
  const body = [note, deviceComparison(a, units), recordChecks(a)].filter((h) => h && String(h));
  if (!body.length) return html``;
  return html`<section id="data-checks" class="data-checks" aria-labelledby="data-checks-heading"><h2 id="data-checks-heading">Data checks</h2>
${body}
</section>`;
}
