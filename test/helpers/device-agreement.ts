/**
 * Agreement with the device (issue 24, item 5): each FIT session's own totals and averages, as
 * Garmin's FIT SDK (@garmin/fitsdk) decodes them, beside what the service's ingest
 * (engine/ingest/ingest.ts) computes from the same bytes. Used by `npm run bench -- device`
 * (bench/device.ts) and test/device-agreement.test.ts.
 *
 * A value agrees when it is within TOLERANCE of the device's (1 %, NP 2 %) or within half the
 * resolution the FIT profile stores the device's value in (its own rounding: an average heart rate
 * is a whole bpm, so 107.4 against 107 agrees). A value that does not agree is explained only by a
 * REASON rule: a named, one-line condition decided from the file's own data (the session's other
 * values, its timer events, its records) and ours, never from the file's name. A disagreement no
 * rule explains is MISSED.
 *
 * The two sides (the FIT SDK's sessions, our activities, the quantities and their tolerances) are in
 * device-session.ts, the reason rules in device-reasons.ts; this module compares them, session by
 * session and over every fixture (deviceRows), makes the table's cells, and exports all three.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ingestFile } from '../../engine/ingest/ingest.ts';
import type { IngestedActivity } from '../../engine/ingest/ingested.ts';
import { fixturesDir } from './fixtures.ts';
import { REASONS, type ReasonRule, reasonFor } from './device-reasons.ts';
import {
  agrees,
  type Cell,
  DECIMALS,
  type DeviceSession,
  deviceSessions,
  LABELS,
  matchActivities,
  type Ours,
  oursOf,
  type Quantity,
  QUANTITIES,
  type Row,
} from './device-session.ts';

export * from './device-reasons.ts';
export * from './device-session.ts';

/** One session's row: each quantity the device has, compared; the row's status. */
export function compareSession(file: string, session: DeviceSession, ours: Ours | undefined, rules: readonly ReasonRule[] = REASONS): Row {
  const cells = QUANTITIES.map((quantity): Cell => {
    const device = session.values[quantity];
    const mine = ours?.values[quantity];
    const cell: Cell = {
      quantity,
      ...(device === undefined ? {} : { device }),
      ...(mine === undefined ? {} : { ours: mine }),
      agrees: false,
    };
    if (device === undefined) return cell;
    if (mine !== undefined && device !== 0) cell.diffPct = ((mine - device) / device) * 100;
    cell.agrees = agrees(quantity, device, mine, session.resolution[quantity]);
    if (!cell.agrees) {
      const reason = reasonFor(session, ours, quantity, rules);
      if (reason) cell.reason = reason.name;
    }
    return cell;
  });
  const compared = cells.filter((c) => c.device !== undefined);
  const status = compared.some((c) => !c.agrees && !c.reason) ? 'MISSED' : compared.some((c) => !c.agrees) ? 'reason' : 'ok';
  return { file, session, ours, cells, status };
}

/** Every session of a file, compared: the FIT SDK's decode and the service's ingest of the same bytes. */
export async function compareFile(
  file: string,
  bytes: Uint8Array,
  ingest: (bytes: Uint8Array) => Promise<{ ok: true; activities: IngestedActivity[] } | { ok: false; code: string; message: string }>,
): Promise<Row[]> {
  const sessions = deviceSessions(bytes);
  const result = await ingest(bytes);
  const activities = result.ok ? result.activities : [];
  const matched = matchActivities(sessions, activities);
  return sessions.map((s, i) => compareSession(file, s, matched[i] && oursOf(matched[i]!)));
}

// ─── The table ────────────────────────────────────────────────────────────────────────────────────

const CHANNEL_CODES: Record<string, string> = {
  power: 'P',
  heart_rate: 'HR',
  cadence: 'C',
  speed: 'S',
  distance: 'D',
  altitude: 'A',
  latitude: 'GPS',
  longitude: '',
  temperature: 'T',
  core_temperature: 'CT',
  smo2: 'O2',
  respiration_rate: 'RR',
};
export const CHANNEL_LEGEND =
  'channels: P power, HR heart rate, C cadence, S speed, D distance, A altitude, GPS position, T temperature, CT core temperature, O2 SmO2, RR respiration rate';

const fmt = (q: Quantity, v: number | undefined) => (v === undefined ? '–' : v.toFixed(DECIMALS[q]));
const pct = (p: number | undefined) =>
  p === undefined ? '' : ` ${p >= 0 ? '+' : '−'}${Math.abs(p) < 10 ? Math.abs(p).toFixed(2) : Math.abs(p).toFixed(1)}%`;

/** A quantity's cell: `device / ours ±diff%`, `*` when a reason explains a disagreement, `!` when nothing does; `·` when the device has no value. */
export function formatCell(c: Cell): string {
  if (c.device === undefined) return '·';
  const mark = c.agrees ? '' : c.reason ? ' *' : ' !';
  return `${fmt(c.quantity, c.device)} / ${fmt(c.quantity, c.ours)}${pct(c.diffPct)}${mark}`;
}

export function formatStatus(row: Row): string {
  const missed = row.cells.filter((c) => c.device !== undefined && !c.agrees && !c.reason).map((c) => c.quantity);
  const reasons = new Map<string, Quantity[]>();
  for (const c of row.cells) if (c.reason) reasons.set(c.reason, [...(reasons.get(c.reason) ?? []), c.quantity]);
  const explained = [...reasons].map(([r, qs]) => `${r} (${qs.join(', ')})`).join('; ');
  if (row.status === 'ok') return 'ok';
  if (row.status === 'reason') return `reason: ${explained}`;
  return `MISSED: ${missed.join(', ')}${explained ? `; reason: ${explained}` : ''}`;
}

export const TABLE_HEADER = ['file', '#', 'sport', 'channels', ...QUANTITIES.map((q) => `${LABELS[q]}: device / ours Δ`), 'status'];

export function tableRows(rows: readonly Row[]): string[][] {
  return rows.map((r) => [
    r.file,
    String(r.session.index),
    r.session.sport,
    r.ours
      ? r.ours.channels
          .map((c) => CHANNEL_CODES[c] ?? c)
          .filter(Boolean)
          .join(' ')
      : 'no activity',
    ...r.cells.map(formatCell),
    formatStatus(r),
  ]);
}

export function counts(rows: readonly Row[]): { ok: number; reason: number; missed: number } {
  return {
    ok: rows.filter((r) => r.status === 'ok').length,
    reason: rows.filter((r) => r.status === 'reason').length,
    missed: rows.filter((r) => r.status === 'MISSED').length,
  };
}

/** Every session of every real FIT fixture (`../shared/fixtures/fit/`), compared, file by file in name order. */
export async function deviceRows(): Promise<Row[]> {
  const dir = path.join(fixturesDir(), 'fit');
  const rows: Row[] = [];
  for (const file of readdirSync(dir)
    .filter((f) => f.toLowerCase().endsWith('.fit'))
    .sort()) {
    const bytes = new Uint8Array(readFileSync(path.join(dir, file)));
    rows.push(...(await compareFile(file, bytes, (b) => ingestFile({ format: 'fit', bytes: b, sport: null }))));
  }
  return rows;
}
