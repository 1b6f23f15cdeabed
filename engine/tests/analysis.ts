/**
 * A test's analysis as one engine task: the lactate thresholds of its steps (./lactate.ts), its maximal efforts
 * and the critical-power models fitted to them (./efforts.ts, ./critical-power.ts), and its highest 30-second
 * heart rate. The caller (api/services/tests/analysis.ts) chooses the steps and cuts the recordings to the
 * test's window; this runs the methods on them.
 */
import { fitCriticalPowerModels, type CriticalPowerResult } from './critical-power.ts';
import { type Effort, type EffortRecording, effortsAtDurations, heartRateMax, lapEfforts } from './efforts.ts';
import { lactateThresholds, type LactateOptions, type LactateStep, type LactateThreshold } from './lactate.ts';

export interface TestAnalysisInput {
  /** Strictly increasing intensity; a first step at intensity 0 is the resting sample. */
  steps: LactateStep[];
  lactateOptions: LactateOptions;
  /** The metric of the test's recordings, cut to its window. */
  recordings: EffortRecording[];
  heartRates: Float64Array[];
  /** Effort durations (s) the client named; null for the laps. */
  durations: number[] | null;
}

export interface TestAnalysisOutput {
  lactate: LactateThreshold[];
  efforts: Effort[];
  critical: CriticalPowerResult[];
  heartRateMax: number | null;
}

export function analyseTest(input: TestAnalysisInput): TestAnalysisOutput {
  const efforts = input.durations ? effortsAtDurations(input.recordings, input.durations) : lapEfforts(input.recordings);
  return {
    lactate: lactateThresholds(input.steps, input.lactateOptions),
    efforts,
    critical: fitCriticalPowerModels(
      efforts.map((e) => e.duration),
      efforts.map((e) => e.value),
    ),
    heartRateMax: heartRateMax(input.heartRates),
  };
}
