import type { StepTraceFields, TestFields } from '../../db/tests.ts';
import { normaliseSport } from '../../lib/sports.ts';
import { textProblem } from '../../lib/text.ts';
import { parseInstant } from '../../lib/time.ts';
import { DEFAULT_TEST_HOURS } from '../services/tests/model.ts';
import type { FieldErrors, FormValues } from './forms.ts';
import { parseStepTable, stepTableMessage, type Step } from './step-table.ts';
import type { Units } from './static/units.js';

/**
 * The test form of the Tests page (/tests): title, sport, start (a local date-time on the browser's
 * clock, whose UTC offset static/tests.js writes into `utc_offset_minutes`; UTC without it), tags
 * (comma-separated) and the pasted step table. Checked here into the test's fields and one trace per
 * step, at start + the steps' durations up to the end of that step.
 */

export const TEST_FORM_FIELDS = ['title', 'sport', 'start', 'utc_offset_minutes', 'tags', 'steps'] as const;

export type TestForm = { fields: TestFields; traces: StepTraceFields[] } | { errors: FieldErrors };

/** `+02:00` for 120 minutes; undefined beyond ±14:00 or when not a whole number. */
function offsetText(minutes: string | undefined): string | undefined {
  if (minutes === undefined || minutes === '') return 'Z';
  if (!/^[+-]?\d{1,3}$/.test(minutes)) return undefined;
  const m = Number(minutes);
  if (Math.abs(m) > 14 * 60) return undefined;
  const abs = Math.abs(m);
  return `${m < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

function parseStart(form: FormValues): { time: Date; offsetSeconds: number } | string {
  const local = (form.start ?? '').trim();
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d)?$/.test(local)) return 'Give the date and time the test started.';
  const offset = offsetText(form.utc_offset_minutes);
  if (!offset) return 'The UTC offset of this time is not one.';
  const parsed = parseInstant(`${local}${offset}`);
  return parsed.ok ? { time: new Date(parsed.t), offsetSeconds: parsed.offsetSeconds } : `This date and time ${parsed.why}.`;
}

function parseTags(text: string): string[] | string {
  const tags = [...new Set(text.split(',').map((t) => t.trim()))].filter(Boolean);
  if (tags.length > 50) return 'At most 50 tags.';
  const long = tags.find((t) => t.length > 64);
  return long ? `“${long.slice(0, 20)}…” is longer than 64 characters.` : tags;
}

/** The traces of the steps: each at start + the durations up to the end of its step. */
export function stepTraces(steps: Step[], sport: string, start: { time: Date; offsetSeconds: number }): StepTraceFields[] {
  let elapsed = 0;
  return steps.map((s) => {
    elapsed += s.durationSeconds;
    return {
      time: new Date(start.time.getTime() + Math.round(elapsed * 1000)),
      utc_offset_seconds: start.offsetSeconds,
      lactate: s.lactate,
      power: s.metric === 'power' ? s.intensity : null,
      speed: s.metric === 'speed' ? s.intensity : null,
      heart_rate: s.heartRate,
      rpe: null,
      vo2: null,
      notes: null,
      tags: [],
      sport,
    };
  });
}

/** The form's test and its traces, or the errors by field (the step table's names its row and column). */
export function readTestForm(form: FormValues, units: Units): TestForm {
  const errors: FieldErrors = {};
  for (const name of TEST_FORM_FIELDS) {
    const problem = textProblem(form[name] ?? '');
    if (problem) errors[name] = `This field ${problem}.`;
  }
  if (Object.keys(errors).length) return { errors };
  const title = (form.title ?? '').trim();
  if (title.length > 200) errors.title = 'At most 200 characters.';
  const sport = normaliseSport((form.sport ?? '').trim());
  if (!sport) errors.sport = 'Choose a sport (an OpenSportTaxonomy code such as cycling or running).';
  const start = parseStart(form);
  if (typeof start === 'string') errors.start = start;
  const tags = parseTags(form.tags ?? '');
  if (typeof tags === 'string') errors.tags = tags;
  const table = sport ? parseStepTable(form.steps ?? '', sport, units) : undefined;
  if (table && 'error' in table) errors.steps = stepTableMessage(table.error);
  if (Object.values(errors).some(Boolean) || !sport || typeof start === 'string' || typeof tags === 'string' || !table || 'error' in table)
    return { errors };
  const traces = stepTraces(table.steps, sport, start);
  const last = traces.at(-1)!.time;
  const end = last > start.time ? last : new Date(start.time.getTime() + DEFAULT_TEST_HOURS * 3_600_000);
  return {
    fields: {
      sport,
      start_time: start.time,
      utc_offset_seconds: start.offsetSeconds,
      end_time: end,
      end_utc_offset_seconds: start.offsetSeconds,
      title: title || null,
      tags,
      results: null,
    },
    traces,
  };
}
