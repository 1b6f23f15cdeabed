import { SingleBar } from 'cli-progress';
import type { BackfillProgress, FailedFile } from '../../db/backfill-progress.ts';
import type { BackfillCounts } from '../../db/backfills.ts';

/**
 * How `cli backfill --wait` shows progress: a bar on a terminal, a plain line every few seconds
 * otherwise, one JSON object per line with --json; each ends with a summary and the failed files.
 */

/** Where a backfill stands, with the rate and ETA measured since the watch began. */
export interface Snapshot {
  status: BackfillProgress['backfill']['status'];
  counts: BackfillCounts;
  loaded_until: string | null;
  /** Files done (loaded or failed) per second since the watch began. */
  rate: number;
  /** Seconds left at that rate; null until a file is done. */
  eta_seconds: number | null;
  elapsed_seconds: number;
}

export interface Reporter {
  update(s: Snapshot): void;
  finish(s: Snapshot, failures: FailedFile[], backfillError: string | null): void;
  /** The watch was interrupted (Ctrl-C): the backfill goes on in the workers. */
  interrupt(s: Snapshot | undefined): void;
}

/** Measures the rate from the files done when the watch began, so files loaded before it do not inflate it. */
export function rateMeter(startedAt: number) {
  let doneAtStart: number | undefined;
  return (p: BackfillProgress, counts: BackfillCounts, at: number): Snapshot => {
    const done = counts.loaded + counts.failed;
    doneAtStart ??= done;
    const elapsed = Math.max(0, (at - startedAt) / 1000);
    const rate = elapsed > 0 ? (done - doneAtStart) / elapsed : 0;
    return {
      status: p.backfill.status,
      counts,
      loaded_until: p.loaded_until,
      rate: Math.round(rate * 10) / 10,
      eta_seconds: rate > 0 ? Math.ceil(counts.waiting / rate) : counts.waiting === 0 ? 0 : null,
      elapsed_seconds: Math.round(elapsed * 10) / 10,
    };
  };
}

export function formatSeconds(s: number | null): string {
  if (s === null) return '…';
  if (s < 60) return `${Math.round(s)}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(Math.round(s % 60)).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

/** One line of a file name, code and message, tab-free (messages may hold newlines). */
function failureLine(f: FailedFile): string {
  const flat = (t: string) => t.replace(/\s+/g, ' ').trim();
  return `failed: ${flat(f.filename)}  ${f.code}  ${flat(f.message)}`;
}

function countsText(s: Snapshot): string {
  const c = s.counts;
  return `${c.loaded + c.failed}/${c.total} files (loaded ${c.loaded}, failed ${c.failed})`;
}

/** `by format: fit 3 (loaded 2, failed 1), gpx 1 (already stored 1)` and `skipped: unsupported 1, too_deep 1`, when there are any. */
export function breakdownLines(c: BackfillCounts): string[] {
  const formats = Object.entries(c.formats).map(([format, f]) => {
    const parts = [
      f.loaded ? `loaded ${f.loaded}` : '',
      f.already_stored ? `already stored ${f.already_stored}` : '',
      f.failed ? `failed ${f.failed}` : '',
      f.waiting ? `waiting ${f.waiting}` : '',
    ].filter(Boolean);
    return `${format} ${f.found}${parts.length ? ` (${parts.join(', ')})` : ''}`;
  });
  const skipped = Object.entries(c.skipped_by_reason).map(([reason, n]) => `${reason} ${n}`);
  const csv = c.strava;
  return [
    ...(formats.length ? [`by format: ${formats.join(', ')}`] : []),
    ...(skipped.length ? [`skipped: ${skipped.join(', ')}`] : []),
    ...(c.nested_archives ? [`nested archives opened: ${c.nested_archives}`] : []),
    ...(csv
      ? [
          `activities.csv: ${csv.rows} rows, ${csv.with_file} with their file, ${csv.without_file} without a file (entered by hand), ${csv.file_missing} naming a missing file`,
        ]
      : []),
  ];
}

function summaryText(s: Snapshot, failures: FailedFile[], backfillError: string | null): string {
  const c = s.counts;
  const extra = [c.already_stored ? `${c.already_stored} already stored` : '', c.skipped ? `${c.skipped} skipped` : ''].filter(Boolean);
  const lines = [
    `${s.status}: ${c.loaded} of ${c.total} files loaded, ${c.failed} failed${extra.length ? `, ${extra.join(', ')}` : ''} in ${formatSeconds(s.elapsed_seconds)} (${s.rate} files/s)` +
      `${s.loaded_until ? `; loaded back to ${s.loaded_until}` : ''}.`,
    ...breakdownLines(c),
    ...(backfillError ? [`error: ${backfillError}`] : []),
    ...failures.map(failureLine),
  ];
  return lines.join('\n') + '\n';
}

const interruptText = (s: Snapshot | undefined) =>
  `Stopped watching${s ? ` at ${countsText(s)}` : ''}; the workers go on loading the backfill.\n`;

/** A plain line at most every `everyMs` (and the summary), for logs and pipes. */
export function plainReporter(out: NodeJS.WritableStream, everyMs: number, now: () => number = Date.now): Reporter {
  let last = -Infinity;
  return {
    update(s) {
      if (now() - last < everyMs) return;
      last = now();
      out.write(
        `${s.status}: ${countsText(s)}, ${s.rate} files/s, ETA ${formatSeconds(s.eta_seconds)}${s.loaded_until ? `, loaded back to ${s.loaded_until}` : ''}\n`,
      );
    },
    finish(s, failures, backfillError) {
      out.write(summaryText(s, failures, backfillError));
    },
    interrupt(s) {
      out.write(interruptText(s));
    },
  };
}

/** NDJSON: `{"event":"progress",…}` at most every `everyMs`, then `{"event":"summary",…,"failures":[…]}`. */
export function jsonReporter(out: NodeJS.WritableStream, backfillId: string, everyMs: number, now: () => number = Date.now): Reporter {
  let last = -Infinity;
  const line = (value: unknown) => out.write(JSON.stringify(value) + '\n');
  const fields = (s: Snapshot) => ({
    backfill_id: backfillId,
    status: s.status,
    loaded: s.counts.loaded,
    failed: s.counts.failed,
    waiting: s.counts.waiting,
    total: s.counts.total,
    rate: s.rate,
    eta_seconds: s.eta_seconds,
    elapsed_seconds: s.elapsed_seconds,
    backfill_loaded_until: s.loaded_until,
  });
  return {
    update(s) {
      if (now() - last < everyMs) return;
      last = now();
      line({ event: 'progress', ...fields(s) });
    },
    finish(s, failures, backfillError) {
      line({
        event: 'summary',
        ...fields(s),
        already_stored: s.counts.already_stored,
        skipped: s.counts.skipped,
        formats: s.counts.formats,
        skipped_by_reason: s.counts.skipped_by_reason,
        nested_archives: s.counts.nested_archives,
        activities_csv: s.counts.strava,
        error: backfillError,
        failures: failures.map((f) => ({ filename: f.filename, code: f.code, message: f.message })),
      });
    },
    interrupt(s) {
      if (s) line({ event: 'interrupted', ...fields(s) });
    },
  };
}

/** A cli-progress bar on the terminal: files done of total, loaded, failed, rate, ETA. */
export function barReporter(out: NodeJS.WriteStream): Reporter {
  const bar = new SingleBar({
    stream: out,
    format: '{bar} {value}/{total} files | loaded {loaded} | failed {failed} | {rate} files/s | ETA {eta_text}',
    barsize: 30,
    hideCursor: true,
    fps: 5,
  });
  let started = false;
  const payload = (s: Snapshot) => ({
    loaded: s.counts.loaded,
    failed: s.counts.failed,
    rate: s.rate.toFixed(1),
    eta_text: formatSeconds(s.eta_seconds),
  });
  const show = (s: Snapshot) => {
    if (!started) {
      bar.start(s.counts.total, s.counts.loaded + s.counts.failed, payload(s));
      started = true;
    } else {
      bar.setTotal(s.counts.total);
      bar.update(s.counts.loaded + s.counts.failed, payload(s));
    }
  };
  return {
    update: show,
    finish(s, failures, backfillError) {
      show(s);
      bar.stop();
      out.write(summaryText(s, failures, backfillError));
    },
    interrupt(s) {
      if (started) bar.stop();
      out.write(interruptText(s));
    },
  };
}
