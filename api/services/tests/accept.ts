import { UnprocessableEntity } from '../errors.ts';
import { Marker, TestResults } from '../resources/tests.ts';
import { type AnalysisAccept, CRITICAL_MEMBERS, MARKER_MEMBERS, MAXIMA_MEMBERS, type TestAnalysis } from './analysis-model.ts';

/**
 * The results a client keeps from an analysis (POST /api/v1/tests/{id}/analysis/accept): for each
 * member chosen, the value of the method named, or a 422 naming the member when that method gave
 * none (it did not apply) or does not fit the member (a speed model for `critical_power`).
 */
export function acceptedResults(analysis: TestAnalysis, choice: AnalysisAccept): Record<string, unknown> {
  const patch: Record<string, unknown> = {};
  const problems: { loc: string[]; msg: string; type: string }[] = [];
  const refuse = (member: string, msg: string) => problems.push({ loc: ['body', member], msg, type: 'value_error.not_applicable' });
  for (const member of MARKER_MEMBERS) {
    const method = choice[member];
    if (!method) continue;
    const found = analysis.lactate.find((t) => t.method === method);
    const marker = found?.marker ? Marker.safeParse(found.marker) : undefined;
    if (!found?.marker) refuse(member, `${method} does not apply: ${found?.reason ?? 'no value'}`);
    else if (!marker?.success) refuse(member, `${method} gives a value outside a Marker's bounds`);
    else patch[member] = marker.data;
  }
  for (const metric of ['power', 'speed'] as const) {
    const [critical, capacity] = CRITICAL_MEMBERS[metric];
    for (const member of [critical, capacity]) {
      const model = choice[member];
      if (!model) continue;
      const fit = analysis.critical.find((c) => c.model === model)!;
      const value = member === critical ? fit.critical_intensity : fit.work_capacity;
      if (metric !== analysis.metric) refuse(member, `the test's efforts are of ${analysis.metric}, not ${metric}`);
      else if (value === null) refuse(member, `the ${model} model does not apply: ${fit.reason ?? 'no value'}`);
      else patch[member] = value;
    }
  }
  for (const member of MAXIMA_MEMBERS) {
    if (!choice[member]) continue;
    const found = member === 'heart_rate_max' ? analysis.maxima.heart_rate_max : analysis.maxima.vo2max;
    if (found.value === null) refuse(member, found.reason ?? 'no value');
    else patch[member] = found.value;
  }
  const bounded = TestResults.safeParse(patch);
  if (!bounded.success)
    for (const issue of bounded.error.issues) refuse(String(issue.path[0]), `the value is outside the result's bounds: ${issue.message}`);
  if (problems.length) throw new UnprocessableEntity(problems);
  return patch;
}
