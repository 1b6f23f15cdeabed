/**
 * The version of the rules that turn a recording into an activity: how its 1 Hz grid is built
 * (engine/ingest/resample.ts), which channels are read (engine/ingest/fit.ts, developer-fields.ts)
 * and how its summary is computed (engine/ingest/summary.ts). Stored with each activity
 * (`activities.ingest_version`, `ingest_version` in ActivityDetails); bump it whenever a change to
 * those rules would change a stored sample file, summary or curve, so `npm run cli -- reprocess`
 * finds the activities made by older rules.
 *
 *   1  until 2026-11: gaps ≤ 5 s held, longer ones empty; means over recorded seconds; 1 m
 *      altitude hysteresis; developer fields by name only
 *   2  pauses from FIT timer events (else gaps > 90 s); gaps ≤ 90 s inside a running timer filled
 *      (linear, held from a standstill); cadence mean over cadence > 0; speed mean = distance /
 *      moving time; ascent from the device's totals (else 3 m hysteresis); normalized power and
 *      work; timer and moving time; developer fields by native field number; a pool swim's speed,
 *      stroke rate and distance from its length messages
 */
export const INGEST_RULES_VERSION = 2;
