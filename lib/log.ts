/** Structured JSON logging: one object per line on stdout (errors on stderr). */
const LEVELS = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 } as const;
export type LogLevel = keyof typeof LEVELS;
export type Fields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: Fields): void;
  info(msg: string, fields?: Fields): void;
  warn(msg: string, fields?: Fields): void;
  error(msg: string, fields?: Fields): void;
  child(fields: Fields): Logger;
}

export function createLogger(level: LogLevel = 'info', base: Fields = {}): Logger {
  const threshold = LEVELS[level];
  const write = (lvl: Exclude<LogLevel, 'silent'>, msg: string, fields?: Fields) => {
    if (LEVELS[lvl] < threshold) return;
    const line = JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...base, ...fields }, errorReplacer);
    if (lvl === 'error') {
      flushStdout();
      process.stderr.write(line + '\n');
    } else {
      bufferStdout(line + '\n');
    }
  };
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
    child: (fields) => createLogger(level, { ...base, ...fields }),
  };
}

/**
 * Lines for stdout logged in one turn of the event loop go out in one write at its end: the API logs
 * a line per request, and under load one write per line was a write(2) per request (stdout to a file
 * or a pipe is written synchronously). Errors flush what is pending before they go to stderr, and
 * the process flushes at exit.
 */
let pendingStdout = '';
let flushScheduled = false;

function bufferStdout(text: string): void {
  pendingStdout += text;
  if (flushScheduled) return;
  flushScheduled = true;
  setImmediate(flushStdout);
}

function flushStdout(): void {
  flushScheduled = false;
  if (!pendingStdout) return;
  const text = pendingStdout;
  pendingStdout = '';
  process.stdout.write(text);
}

process.on('exit', flushStdout);

/**
 * A line for people (a banner) on stdout, after the log lines already buffered: what a process
 * logged before it printed "listening" comes before that line on the terminal and in a pipe.
 */
export function printLine(text: string): void {
  flushStdout();
  process.stdout.write(text + '\n');
}

function errorReplacer(_key: string, value: unknown) {
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  return value;
}
