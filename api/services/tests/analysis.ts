import type { Deps } from '../deps.ts';
import type { TestRow, TraceRow } from '../../../db/database.ts';
import { activitiesForAnalysis, tracesOfTest } from '../../../db/tests.ts';
import { isObjectMissing } from '../../../lib/object-store.ts';
import { readActivitySamples } from '../../../workers/files.ts';
import { formatInstant } from '../../../lib/time.ts';
import { zeroFilled } from '../../../engine/curves/activity-curves.ts';
import type { EffortRecording } from '../../../engine/tests/efforts.ts';
import type { LactateSport, LactateStep } from '../../../engine/tests/lactate.ts';
import type { TestAnalysisOutput } from '../../../engine/tests/analysis.ts';
import type { AnalysisQuery, TestAnalysis } from './analysis-model.ts';

/**
 * A test's analysis (GET /api/v1/tests/{id}/analysis): which of its traces are the steps of a lactate
 * step test, which recordings hold its efforts, and the engine's methods run on them (one task of the
 * pool, engine/tests/analysis.ts). docs/api-clients.md, "Tests", states the rules chosen here.
 */

/** The most lactate steps the lactate methods take: a step test has tens. */
export const MAX_LACTATE_STEPS = 100;
/** The most traces the analysis reads from one test (a test's traces are its samples, not a recording). */
export const MAX_ANALYSED_TRACES = 1000;
/** The most activities whose recordings the analysis reads (a test is a session, not a season). */
export const MAX_ANALYSED_ACTIVITIES = 10;

type Metric = 'power' | 'speed';
type AnalysedActivity = Awaited<ReturnType<typeof activitiesForAnalysis>>[number];

/** Power for cycling; speed for running, walking and swimming; otherwise power where the test has any. */
export function testMetric(sport: string, traces: readonly TraceRow[], activities: readonly { metrics: string[] }[]): Metric {
  const family = sport.split('.')[0]!;
  if (family === 'cycling') return 'power';
  if (['running', 'walking', 'swimming'].includes(family)) return 'speed';
  const hasPower = traces.some((t) => t.lactate !== null && t.power !== null) || activities.some((a) => a.metrics.includes('power'));
  return hasPower ? 'power' : 'speed';
}

function lactateSport(sport: string, metric: Metric): LactateSport {
  const family = sport.split('.')[0]!;
  if (family === 'cycling' || family === 'running' || family === 'swimming') return family;
  return metric === 'power' ? 'cycling' : 'running';
}

interface Step extends LactateStep {
  trace: TraceRow;
}

/**
 * The steps, from the lactate traces in time order: each at a higher intensity than the last; a later
 * sample at the same intensity replaces the earlier (the end-of-step sample); a first sample at
 * intensity 0 is the resting sample; a lower intensity (recovery, cool-down) is not a step.
 */
export function lactateSteps(
  traces: readonly TraceRow[],
  metric: Metric,
): { steps: Step[]; ignored: { trace_id: string; reason: string }[] } {
  const steps: Step[] = [];
  const ignored: { trace_id: string; reason: string }[] = [];
  for (const trace of traces) {
    if (trace.lactate === null) continue;
    const intensity = trace[metric];
    const last = steps[steps.length - 1];
    const step = {
      trace,
      intensity: intensity ?? 0,
      lactate: trace.lactate,
      ...(trace.heart_rate !== null ? { heartRate: trace.heart_rate } : {}),
    };
    if (intensity === null) ignored.push({ trace_id: trace.id, reason: `no ${metric}` });
    else if (!last) steps.push(step);
    else if (intensity === last.intensity) {
      ignored.push({ trace_id: last.trace.id, reason: 'a later sample at the same intensity replaces it' });
      steps[steps.length - 1] = step;
    } else if (intensity < last.intensity)
      ignored.push({ trace_id: trace.id, reason: `${metric} below the step before it (a recovery or cool-down sample)` });
    else steps.push(step);
  }
  return { steps, ignored };
}

/** Each activity's recording of the metric and heart rate cut to the test's window, and its laps inside the window. */
async function recordings(deps: Deps, test: TestRow, activities: readonly AnalysedActivity[], metric: Metric) {
  const out: { activity: AnalysedActivity; from: number; recording: EffortRecording; heartRate?: Float64Array }[] = [];
  for (const activity of activities) {
    const channels = [metric, 'heart_rate'].filter((c) => activity.metrics.includes(c));
    if (!channels.length) continue;
    const file = await readActivitySamples(deps.engine, activity, channels).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT' || isObjectMissing(error)) return undefined; // its samples are gone (the activity being deleted): not one of the test's recordings
      throw error;
    });
    if (!file) continue;
    const t0 = activity.start_time.getTime();
    const from = Math.max(0, Math.ceil((test.start_time.getTime() - t0) / 1000));
    const to = Math.min(file.length, Math.floor((test.end_time.getTime() - t0) / 1000) + 1);
    if (to <= from) continue;
    const cut = (values: Float64Array | undefined) => (values ? zeroFilled(values.subarray(from, to)) : undefined);
    const laps = (activity.laps ?? [])
      .map((lap) => ({ from: Math.round((lap.start - t0) / 1000) - from, to: Math.round((lap.end - t0) / 1000) - from }))
      .filter((lap) => lap.from >= 0 && lap.to <= to - from && lap.to > lap.from);
    const heartRate = cut(file.channels.heart_rate);
    out.push({
      activity,
      from,
      recording: { values: cut(file.channels[metric]) ?? new Float64Array(to - from), laps },
      ...(heartRate ? { heartRate } : {}),
    });
  }
  return out;
}

export async function analyseTest(
  deps: Deps,
  userId: string,
  test: TestRow,
  query: AnalysisQuery,
  signal?: AbortSignal,
): Promise<TestAnalysis> {
  const [traces, activities] = await Promise.all([
    tracesOfTest(deps.db, userId, test, 'auto', MAX_ANALYSED_TRACES + 1),
    activitiesForAnalysis(deps.db, userId, test, MAX_ANALYSED_ACTIVITIES + 1),
  ]);
  const metric = testMetric(test.sport, traces, activities);
  const tooManyTraces = traces.length > MAX_ANALYSED_TRACES;
  const tooManyActivities = activities.length > MAX_ANALYSED_ACTIVITIES;
  const chosen = tooManyTraces ? { steps: [], ignored: [] } : lactateSteps(traces, metric);
  const tooManySteps = chosen.steps.length > MAX_LACTATE_STEPS;
  const read = tooManyActivities ? [] : await recordings(deps, test, activities, metric);
  const result = await deps.engine.pool.testAnalysis(
    {
      steps: tooManySteps ? [] : chosen.steps.map(({ trace: _, ...step }) => step),
      lactateOptions: {
        fit: query.fit,
        includeBaseline: query.include_baseline,
        loglogRestrainer: query.loglog_restrainer,
        heartRate: query.heart_rate,
        sport: lactateSport(test.sport, metric),
      },
      recordings: read.map((r) => r.recording),
      heartRates: read.flatMap((r) => (r.heartRate ? [r.heartRate] : [])),
      durations: query.durations ?? null,
    },
    signal,
  );
  const stepsReason = tooManyTraces
    ? `the test holds more than ${MAX_ANALYSED_TRACES} traces; a step test has one per step`
    : tooManySteps
      ? `more than ${MAX_LACTATE_STEPS} steps (${chosen.steps.length}); a step test has tens`
      : null;
  const effortsReason = tooManyActivities ? `the test's window overlaps more than ${MAX_ANALYSED_ACTIVITIES} activities` : null;
  return {
    test_id: test.id,
    metric,
    options: {
      fit: query.fit,
      include_baseline: query.include_baseline,
      loglog_restrainer: query.loglog_restrainer,
      heart_rate: query.heart_rate,
    },
    steps: stepsReason
      ? []
      : chosen.steps.map((s, i) => ({
          trace_id: s.trace.id,
          timestamp: formatInstant(s.trace.time),
          intensity: s.intensity,
          lactate: s.lactate,
          heart_rate: s.heartRate ?? null,
          resting: i === 0 && s.intensity === 0,
        })),
    ignored: chosen.ignored,
    lactate: lactateOut(result, metric, stepsReason),
    efforts: result.efforts.map((e) => {
      const r = read[e.recording]!;
      return {
        activity_id: r.activity.id,
        start: formatInstant(new Date(r.activity.start_time.getTime() + (r.from + e.start) * 1000)),
        duration: e.duration,
        value: e.value,
      };
    }),
    critical: criticalOut(result, effortsReason),
    maxima: {
      heart_rate_max: heartRateMaxOut(result, traces, effortsReason),
      vo2max: highestOf(traces, 'vo2'),
    },
  };
}

function lactateOut(result: TestAnalysisOutput, metric: Metric, reason: string | null): TestAnalysis['lactate'] {
  return result.lactate.map((t) => {
    const head = { category: t.category, method: t.method as TestAnalysis['lactate'][number]['method'], fitting: t.fitting };
    if (reason || t.intensity === undefined || t.lactate === undefined)
      return { ...head, marker: null, reason: reason ?? t.reason ?? 'no value' };
    return { ...head, marker: { [metric]: t.intensity, lactate: t.lactate, heart_rate: t.heartRate ?? null }, reason: null };
  });
}

function criticalOut(result: TestAnalysisOutput, reason: string | null): TestAnalysis['critical'] {
  return result.critical.map((c) => {
    const none = {
      critical_intensity: null,
      critical_intensity_se: null,
      work_capacity: null,
      work_capacity_se: null,
      max_intensity: null,
      max_intensity_se: null,
      r2: null,
      see: null,
    };
    if (reason) return { model: c.model, efforts: 0, ...none, reason };
    if (!c.ok) return { model: c.model, efforts: c.efforts, ...none, reason: c.efforts ? c.reason : `${c.reason}; found none` };
    return {
      model: c.model,
      efforts: c.efforts,
      critical_intensity: c.cp,
      critical_intensity_se: c.cpSe,
      work_capacity: c.wPrime,
      work_capacity_se: c.wPrimeSe,
      max_intensity: c.pmax,
      max_intensity_se: c.pmaxSe,
      r2: c.r2,
      see: c.see,
      reason: null,
    };
  });
}

function highestOf(traces: readonly TraceRow[], field: 'vo2' | 'heart_rate'): { value: number | null; reason: string | null } {
  let best: number | null = null;
  for (const t of traces) if (t[field] !== null && (best === null || t[field]! > best)) best = t[field];
  return best === null ? { value: null, reason: `no trace of the test has ${field}` } : { value: best, reason: null };
}

/** The highest 30-s heart rate of the recordings; without any, the highest heart rate of the traces. */
function heartRateMaxOut(result: TestAnalysisOutput, traces: readonly TraceRow[], reason: string | null) {
  if (result.heartRateMax !== null) return { value: result.heartRateMax, reason: null };
  const fromTraces = highestOf(traces, 'heart_rate');
  if (fromTraces.value !== null) return fromTraces;
  return { value: null, reason: reason ?? 'no heart rate in the recordings or the traces of the test' };
}
