/**
 * A user with a known training history for the web app's chart tests: synthetic FIT rides whose
 * power profile is one block of efforts scaled per ride (so each date range has a different, known
 * peak), a run with speed only, daily measures with gaps (for interpolation) and traces. Dates are
 * relative to today (UTC), as the pages' presets are.
 */
import type { User } from '../../db/database.ts';
import { buildActivityFit, type RecordFields } from './fit-builder.ts';
import { api, uploadAndWait } from './activities.ts';
import { createTestUser, tokenFor } from './users.ts';
import type { TestService } from './service.ts';

const DAY_MS = 86_400_000;

/** `YYYY-MM-DD` of `days` days before today (UTC). */
export function daysAgo(days: number, now = Date.now()): string {
  return new Date(now - days * DAY_MS).toISOString().slice(0, 10);
}

/** Efforts then recovery (s, W at scale 1): the best efforts of a ride fall on a plausible power-duration curve. */
const EFFORTS: [seconds: number, watts: number][] = [
  [120, 150],
  [5, 800],
  [60, 150],
  [30, 550],
  [120, 150],
  [60, 450],
  [120, 150],
  [180, 380],
  [120, 150],
  [300, 350],
  [120, 150],
  [600, 320],
  [120, 150],
  [1200, 290],
  [60, 150],
];
export const RIDE_SECONDS = EFFORTS.reduce((s, [d]) => s + d, 0);

function rideRecord(scale: number): (i: number) => RecordFields {
  const watts = new Int32Array(RIDE_SECONDS);
  let i = 0;
  for (const [seconds, w] of EFFORTS) for (let k = 0; k < seconds; k++) watts[i++] = Math.round(w * scale);
  return (s) => ({
    power: watts[s]!,
    heartRate: 110 + Math.round(watts[s]! / 10),
    cadence: 90,
    speed: 5 + watts[s]! / 100,
    distance: s * 8,
  });
}

function runRecord(i: number): RecordFields {
  const speed = i >= 300 && i < 360 ? 5 : i >= 600 && i < 900 ? 4.2 : 3;
  return { heartRate: 140 + (i % 20), cadence: 85, speed, distance: i * 3.2 };
}

/** The rides: days before today and the scale of their efforts (the 1 s best is 800 W × scale). */
export const RIDES = [
  { daysAgo: 10, scale: 1 },
  { daysAgo: 20, scale: 0.95 },
  { daysAgo: 60, scale: 1.1 },
  { daysAgo: 200, scale: 1.2 },
  { daysAgo: 400, scale: 1.3 },
] as const;
export const RUN_DAYS_AGO = 5;

/** Daily values written (days before today → value): gaps between them are interpolated. */
export const BODY_MASS: [number, number][] = [
  [40, 72],
  [30, 71],
  [20, 70.5],
  [5, 69.8],
];
export const RESTING_HR: [number, number][] = [
  [12, 52],
  [8, 50],
];
export const TRACES = [
  { daysAgo: 10, lactate: 2.1, power: 250, heart_rate: 150 },
  { daysAgo: 20, lactate: 4.3, power: 320, heart_rate: 168 },
  { daysAgo: 60, lactate: 1.4, power: 200 },
];

export interface Seeded {
  user: User;
  token: string;
  /** Activity ids, rides in RIDES order. */
  rides: string[];
  run: string;
}

/** Upload the rides and the run (processed by the service's workers) and write the dailies and traces. */
export async function seedTraining(service: TestService): Promise<Seeded> {
  const user = await createTestUser(service);
  const token = await tokenFor(service, user, ['data:read', 'data:write']);
  const at = (days: number) => new Date(Date.parse(`${daysAgo(days)}T08:00:00Z`));
  const files = RIDES.map((r, i) => ({
    name: `ride-${i}.fit`,
    bytes: buildActivityFit({
      sessions: [{ sport: 'cycling', subSport: 'road', start: at(r.daysAgo), seconds: RIDE_SECONDS, record: rideRecord(r.scale) }],
    }),
  }));
  files.push({
    name: 'run.fit',
    bytes: buildActivityFit({ sessions: [{ sport: 'running', start: at(RUN_DAYS_AGO), seconds: 1800, record: runRecord }] }),
  });
  const sources = await uploadAndWait(service, token, files);
  for (const s of sources) if (s.status !== 'processed') throw new Error(`seed upload failed: ${JSON.stringify(s)}`);
  const ids = sources.map((s: { activity_ids: string[] }) => s.activity_ids[0]!);
  for (const [days, value] of BODY_MASS)
    await must(api(service, token, 'POST', '/api/v1/dailies/body_mass', { date: daysAgo(days), value }));
  for (const [days, value] of RESTING_HR)
    await must(api(service, token, 'POST', '/api/v1/dailies/resting_hr', { date: daysAgo(days), value }));
  for (const { daysAgo: days, ...values } of TRACES) {
    await must(
      api(service, token, 'POST', '/api/v1/traces/', { timestamp: `${daysAgo(days)}T08:30:00Z`, sport: 'cycling.road', ...values }),
    );
  }
  return { user, token, rides: ids.slice(0, RIDES.length), run: ids[RIDES.length]! };
}

async function must(res: Promise<{ status: number; body: unknown }>) {
  const r = await res;
  if (r.status >= 300) throw new Error(`seed: ${r.status} ${JSON.stringify(r.body)}`);
}
