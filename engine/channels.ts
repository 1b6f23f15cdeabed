/**
 * The sample channels an activity can carry (docs/api-clients.md, "Conventions": Channels), in the
 * order every sample file and frame writes them. Units: W, bpm, m/s, rpm, m, degrees, °C, %,
 * breaths/min. The vocabulary every part of the engine shares: ingestion produces these channels,
 * the sample files store them, the curves read them.
 */
export const CHANNELS = [
  'power',
  'heart_rate',
  'speed',
  'cadence',
  'altitude',
  'distance',
  'latitude',
  'longitude',
  'temperature',
  'core_temperature',
  'smo2',
  'respiration_rate',
] as const;
export type Channel = (typeof CHANNELS)[number];
