import os from 'node:os';
import { CHANNEL_LEGEND, counts, deviceRows, REASONS, TABLE_HEADER, TOLERANCE, tableRows } from '../test/helpers/device-agreement.ts';
import { formatTable, recordTarget, round2, writeReport } from './report.ts';

/**
 * Agreement with the device (issue 24, item 5): every session of every real FIT fixture
 * (`../shared/fixtures/fit/`), its own values as Garmin's FIT SDK decodes them beside the service's
 * ingest of the same bytes (test/helpers/device-agreement.ts has the comparison, the reason rules and deviceRows).
 * One row per session; the target is met when every value is within 1 % of the device's (NP 2 %)
 * or carries a reason decided from the file's own data, i.e. when no row is MISSED.
 */
export async function benchDevice() {
  const rows = await deviceRows();
  const { ok, reason, missed } = counts(rows);
  process.stdout.write(`\n== device: each FIT session's own values (FIT SDK) beside the service's ingest of the same file\n\n`);
  process.stdout.write(
    `cells: device / ours Δ% (ours − device, of the device's); * a disagreement a reason explains, ! one nothing explains; · the device has no value; – we have none\n`,
  );
  process.stdout.write(
    `tolerance: ${Math.round(TOLERANCE.timer * 100)} % (NP ${Math.round(TOLERANCE.np * 100)} %), or half the resolution the device stores the value in\n${CHANNEL_LEGEND}\n\n`,
  );
  process.stdout.write(formatTable(TABLE_HEADER, tableRows(rows)));
  const used = new Set(rows.flatMap((r) => r.cells.map((c) => c.reason).filter(Boolean)));
  if (used.size) {
    process.stdout.write(`\nreasons:\n`);
    for (const r of REASONS) if (used.has(r.name)) process.stdout.write(`  ${r.name}: ${r.explanation}\n`);
  }
  process.stdout.write(`\n${rows.length} sessions: ${ok} ok, ${reason} with a reason, ${missed} MISSED\n`);
  const met = missed === 0;
  process.stdout.write(
    `target: every value within 1 % of the device's (NP 2 %) or a reason: ${met ? 'met' : 'MISSED'} (${missed} MISSED)\n`,
  );
  recordTarget({
    benchmark: 'device',
    target: 'every FIT fixture session: each value within 1 % of the device (NP 2 %) or a named reason',
    figure: `${rows.length} sessions: ${ok} ok, ${reason} reason, ${missed} MISSED`,
    met,
  });
  const report = {
    benchmark: 'device',
    at: new Date().toISOString(),
    node: process.version,
    cores: os.cpus().length,
    counts: { ok, reason, missed },
    rows: rows.map((r) => ({
      file: r.file,
      session: r.session.index,
      sport: r.session.sport,
      channels: r.ours?.channels ?? null,
      status: r.status,
      // The quantities the device has: its value, ours (null: none), the difference in %, and the reason of a disagreement.
      values: Object.fromEntries(
        r.cells
          .filter((c) => c.device !== undefined)
          .map((c) => [
            c.quantity,
            {
              device: c.device,
              ours: c.ours ?? null,
              diff_pct: c.diffPct === undefined ? null : round2(c.diffPct),
              agrees: c.agrees,
              ...(c.reason ? { reason: c.reason } : {}),
            },
          ]),
      ),
    })),
  };
  process.stdout.write(`wrote ${writeReport('device', report)} and bench/results/latest.json\n`);
  return report;
}
