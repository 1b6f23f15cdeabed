import { z } from 'zod';
import type { TestRow } from '../../../db/database.ts';
import { formatInstant, formatLocal } from '../../../lib/time.ts';
import { MEASUREMENT_RANGES } from '../measurements.ts';

/**
 * A test as clients see it (TestSummary), and what its results hold: each member of TestResults a
 * Marker (the intensity and physiology at a threshold: lt1, lt2, vt1, vt2, mlss, fatmax,
 * first_threshold, second_threshold) or a number (a capacity: vo2max and vo2peak in mL/min/kg,
 * vlamax in mmol/L/s, heart_rate_max in bpm, critical_power in W, critical_speed in m/s, w_prime in
 * J, d_prime in m, economy and efficiency in the unit the client keeps). Every value is bounded, so a
 * 1e308 is a 422 naming its field.
 */

const bounded = (max: number, unit: string) => z.number().min(0).max(max).describe(`${unit}, 0–${max}`);
/** A Marker's member, bounded as the same measurement of a trace (../measurements.ts). */
const measured = (name: keyof typeof MEASUREMENT_RANGES) => {
  const { min, max, unit } = MEASUREMENT_RANGES[name];
  return z.number().min(min).max(max).describe(`${unit}, ${min}–${max}`).nullish();
};

export const Marker = z
  .object({
    power: measured('power'),
    speed: measured('speed'),
    heart_rate: measured('heart_rate'),
    lactate: measured('lactate'),
    vo2: measured('vo2'),
  })
  .strict()
  .meta({ id: 'Marker', description: 'The intensity and physiology at a threshold: any of power, speed, heart_rate, lactate, vo2' });

const MARKERS = ['lt1', 'lt2', 'vt1', 'vt2', 'mlss', 'fatmax', 'first_threshold', 'second_threshold'] as const;
const NUMBERS = {
  vo2max: bounded(150, 'mL/min/kg'),
  vo2peak: bounded(150, 'mL/min/kg'),
  vlamax: bounded(10, 'mmol/L/s'),
  heart_rate_max: bounded(250, 'bpm'),
  critical_power: bounded(3000, 'W'),
  critical_speed: bounded(100, 'm/s'),
  w_prime: bounded(1_000_000, 'J'),
  d_prime: bounded(100_000, 'm'),
  economy: bounded(1_000_000, 'in the unit the client keeps'),
  efficiency: bounded(1_000_000, 'in the unit the client keeps'),
} as const;

export const TestResults = z
  .object({
    ...Object.fromEntries(MARKERS.map((name) => [name, Marker.nullish()])),
    ...Object.fromEntries(Object.entries(NUMBERS).map(([name, schema]) => [name, schema.nullish()])),
  } as Record<(typeof MARKERS)[number], z.ZodOptional<z.ZodNullable<typeof Marker>>> &
    Record<keyof typeof NUMBERS, z.ZodOptional<z.ZodNullable<z.ZodNumber>>>)
  .strict()
  .meta({ id: 'TestResults', description: 'Thresholds as Markers, capacities as numbers; a member left out or null is not known' });
export type TestResults = z.output<typeof TestResults>;

export const TestSummary = z
  .object({
    id: z.string(),
    sport: z.string(),
    start: z.string().describe('UTC instant, `Z`'),
    start_local: z.string().describe('Naive local time on the clock of the offset `start` was written with'),
    end: z.string().nullable().describe('UTC instant, `Z` (start + 3 h when the client gave none)'),
    end_local: z.string().nullable(),
    tags: z.array(z.string()),
    title: z.string().nullable(),
    created_by: z.string().nullable().describe('The client id of the application that created the test; null for first-party credentials'),
    app_metadata: z
      .record(z.string(), z.unknown())
      .nullable()
      .describe("The calling application's own metadata (null for first-party credentials)"),
    results: TestResults.nullable(),
  })
  .meta({ id: 'TestSummary', description: 'A test session (a lactate step test, a ramp, critical-power efforts) and its results' });
export type TestSummaryOut = z.output<typeof TestSummary>;

/** Only the members that are set: a stored `null` and an absent member read the same. */
function resultsOut(results: Record<string, unknown> | null): TestResults | null {
  if (results === null) return null;
  return Object.fromEntries(Object.entries(results).filter(([, v]) => v !== null && v !== undefined)) as TestResults;
}

export function testSummaryOut(row: TestRow, appMetadata: Record<string, unknown> | null): TestSummaryOut {
  return {
    id: row.id,
    sport: row.sport,
    start: formatInstant(row.start_time),
    start_local: formatLocal(row.start_time, row.utc_offset_seconds),
    end: formatInstant(row.end_time),
    end_local: formatLocal(row.end_time, row.end_utc_offset_seconds),
    tags: row.tags,
    title: row.title,
    created_by: row.created_by,
    app_metadata: appMetadata,
    results: resultsOut(row.results),
  };
}
