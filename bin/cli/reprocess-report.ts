import { SingleBar } from 'cli-progress';
import { formatSeconds } from './backfill-report.ts';

/**
 * How `cli reprocess` shows progress: a bar on a terminal, a plain line every few seconds
 * otherwise, one JSON object per line with --json; each ends with the counts and the sources that
 * failed. Counted in activities: a job re-derives one source (a multisport file has several).
 */

/** What the finished jobs reported, added up. */
export interface ReprocessTally {
  sources: number;
  /** Activities selected when the jobs were queued. */
  activities: number;
  /** Of those, the activities of sources whose job is over. */
  done: number;
  reprocessed: number;
  unchanged: number;
  failed: number;
  missing_original: number;
  /** Deleted while their job ran. */
  gone: number;
  /** Jobs that failed after their retries (an error of ours: their activities count in `failed`). */
  jobs_failed: number;
  /** Jobs that finished without their outcome being seen (its event was lost). */
  unreported: number;
}

export interface ReprocessFailure {
  source_id: string;
  activities: number;
  code: string;
  message: string;
}

export interface ReprocessSnapshot {
  tally: ReprocessTally;
  /** Activities done per second since the jobs were queued. */
  rate: number;
  eta_seconds: number | null;
  elapsed_seconds: number;
}

export interface ReprocessReporter {
  update(s: ReprocessSnapshot): void;
  finish(s: ReprocessSnapshot, failures: ReprocessFailure[]): void;
  /** The watch was interrupted (Ctrl-C): the jobs go on in the workers. */
  interrupt(s: ReprocessSnapshot): void;
}

export function emptyTally(sources: number, activities: number): ReprocessTally {
  return {
    sources,
    activities,
    done: 0,
    reprocessed: 0,
    unchanged: 0,
    failed: 0,
    missing_original: 0,
    gone: 0,
    jobs_failed: 0,
    unreported: 0,
  };
}

export function snapshot(tally: ReprocessTally, startedAt: number, at: number): ReprocessSnapshot {
  const elapsed = Math.max(0, (at - startedAt) / 1000);
  const rate = elapsed > 0 ? tally.done / elapsed : 0;
  const left = Math.max(0, tally.activities - tally.done);
  return {
    tally: { ...tally },
    rate: Math.round(rate * 10) / 10,
    eta_seconds: left === 0 ? 0 : rate > 0 ? Math.ceil(left / rate) : null,
    elapsed_seconds: Math.round(elapsed * 10) / 10,
  };
}

const flat = (t: string) => t.replace(/\s+/g, ' ').trim();

function failureLine(f: ReprocessFailure): string {
  return `failed: source ${f.source_id} (${f.activities} ${f.activities === 1 ? 'activity' : 'activities'})  ${f.code}  ${flat(f.message)}`;
}

function progressText(s: ReprocessSnapshot): string {
  const t = s.tally;
  return `reprocessing: ${t.done}/${t.activities} activities (reprocessed ${t.reprocessed}, unchanged ${t.unchanged}, failed ${t.failed + t.missing_original}), ${s.rate}/s, ETA ${formatSeconds(s.eta_seconds)}`;
}

function summaryText(s: ReprocessSnapshot, failures: ReprocessFailure[]): string {
  const t = s.tally;
  const extra = [
    t.gone ? `${t.gone} deleted meanwhile` : '',
    t.jobs_failed ? `${t.jobs_failed} ${t.jobs_failed === 1 ? 'job' : 'jobs'} failed` : '',
    t.unreported ? `${t.unreported} ${t.unreported === 1 ? 'job' : 'jobs'} finished unreported` : '',
  ].filter(Boolean);
  const lines = [
    `done: ${t.activities} activities of ${t.sources} sources in ${formatSeconds(s.elapsed_seconds)}: ${t.reprocessed} reprocessed, ${t.unchanged} unchanged, ` +
      `${t.failed} failed, ${t.missing_original} with the original missing${extra.length ? `, ${extra.join(', ')}` : ''}.`,
    ...failures.map(failureLine),
  ];
  return lines.join('\n') + '\n';
}

const interruptText = (s: ReprocessSnapshot) =>
  `Stopped watching at ${s.tally.done}/${s.tally.activities} activities; the workers go on reprocessing.\n`;

/** A plain line at most every `everyMs` (and the summary), for logs and pipes. */
export function plainReprocessReporter(out: NodeJS.WritableStream, everyMs: number, now: () => number = Date.now): ReprocessReporter {
  let last = -Infinity;
  return {
    update(s) {
      if (now() - last < everyMs) return;
      last = now();
      out.write(progressText(s) + '\n');
    },
    finish(s, failures) {
      out.write(summaryText(s, failures));
    },
    interrupt(s) {
      out.write(interruptText(s));
    },
  };
}

/** NDJSON: `{"event":"progress",…}` at most every `everyMs`, then `{"event":"summary",…,"failures":[…]}`. */
export function jsonReprocessReporter(out: NodeJS.WritableStream, everyMs: number, now: () => number = Date.now): ReprocessReporter {
  let last = -Infinity;
  const line = (value: unknown) => out.write(JSON.stringify(value) + '\n');
  const fields = (s: ReprocessSnapshot) => ({ ...s.tally, rate: s.rate, eta_seconds: s.eta_seconds, elapsed_seconds: s.elapsed_seconds });
  return {
    update(s) {
      if (now() - last < everyMs) return;
      last = now();
      line({ event: 'progress', ...fields(s) });
    },
    finish(s, failures) {
      line({ event: 'summary', ...fields(s), failures });
    },
    interrupt(s) {
      line({ event: 'interrupted', ...fields(s) });
    },
  };
}

/** A cli-progress bar on the terminal: activities done of selected, reprocessed, unchanged, failed, rate, ETA. */
export function barReprocessReporter(out: NodeJS.WriteStream): ReprocessReporter {
  const bar = new SingleBar({
    stream: out,
    format:
      '{bar} {value}/{total} activities | reprocessed {reprocessed} | unchanged {unchanged} | failed {failed} | {rate}/s | ETA {eta_text}',
    barsize: 30,
    hideCursor: true,
    fps: 5,
  });
  let started = false;
  const payload = (s: ReprocessSnapshot) => ({
    reprocessed: s.tally.reprocessed,
    unchanged: s.tally.unchanged,
    failed: s.tally.failed + s.tally.missing_original,
    rate: s.rate.toFixed(1),
    eta_text: formatSeconds(s.eta_seconds),
  });
  const show = (s: ReprocessSnapshot) => {
    if (!started) {
      bar.start(s.tally.activities, s.tally.done, payload(s));
      started = true;
    } else {
      bar.update(s.tally.done, payload(s));
    }
  };
  return {
    update: show,
    finish(s, failures) {
      show(s);
      bar.stop();
      out.write(summaryText(s, failures));
    },
    interrupt(s) {
      if (started) bar.stop();
      out.write(interruptText(s));
    },
  };
}
