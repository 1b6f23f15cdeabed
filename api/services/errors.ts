import type { z } from 'zod';

/** One item of a 422 body: where (`loc`), what (`msg`), and a machine-readable `type`. */
export interface ValidationItem {
  loc: (string | number)[];
  msg: string;
  type: string;
}

/** An error whose status, detail and headers are safe to show the client (status < 500). */
export class HttpError extends Error {
  readonly expose = true;
  constructor(
    readonly status: number,
    readonly detail: string | ValidationItem[],
    readonly headers: Record<string, string> = {},
  ) {
    super(typeof detail === 'string' ? detail : 'request validation failed');
    this.name = new.target.name;
  }
}

export class BadRequest extends HttpError {
  constructor(detail: string | ValidationItem[]) {
    super(400, detail);
  }
}
export class Unauthorized extends HttpError {
  constructor(detail = 'Not authenticated', headers: Record<string, string> = {}) {
    super(401, detail, { ...headers, 'WWW-Authenticate': `Bearer error="invalid_token", error_description="${quote(detail)}"` });
  }
}
export class InsufficientScope extends HttpError {
  constructor(scopes: readonly string[]) {
    super(403, `This request needs the scope ${scopes.join(' ')}`, {
      'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${scopes.join(' ')}"`,
    });
  }
}
export class Forbidden extends HttpError {
  constructor(detail = 'Forbidden') {
    super(403, detail);
  }
}
export class NotFound extends HttpError {
  constructor(detail = 'Not Found') {
    super(404, detail);
  }
}
export class Conflict extends HttpError {
  constructor(detail: string) {
    super(409, detail);
  }
}
export class PayloadTooLarge extends HttpError {
  constructor(detail = 'Request body too large') {
    super(413, detail);
  }
}
export class UnprocessableEntity extends HttpError {
  constructor(items: ValidationItem[]) {
    super(422, items);
  }
}
export class TooManyRequests extends HttpError {
  constructor(detail: string, retryAfterSeconds: number, headers: Record<string, string> = {}) {
    super(429, detail, { ...headers, 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) });
  }
}
export class ServiceUnavailable extends HttpError {
  constructor(detail = 'Service temporarily unavailable', retryAfterSeconds?: number) {
    super(503, detail, retryAfterSeconds ? { 'Retry-After': String(retryAfterSeconds) } : {});
  }
}

/** PostgreSQL or Redis is unreachable (lib/outage.ts): the client retries in a few seconds; /readyz says which. */
export class DependencyUnavailable extends ServiceUnavailable {
  constructor() {
    super('The service is temporarily unavailable (its database or queue cannot be reached); retry later', 5);
  }
}

/**
 * The server's disk is full (ENOSPC, EDQUOT; DuckDB's "No space left on device"): the request could
 * not be completed, and what it had written is removed. Not a 503: no Retry-After fits, an operator
 * must free space first.
 */
export class InsufficientStorage extends HttpError {
  constructor() {
    super(507, "The server's disk is full, so this request could not be completed (nothing of it was kept); try again later");
  }
}

/** Whether an error says the disk (or the quota) is full. */
export function isDiskFull(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (e?.code === 'ENOSPC' || e?.code === 'EDQUOT') return true;
  return typeof e?.message === 'string' && /no space left on device|disk quota exceeded/i.test(e.message);
}

/**
 * Before storing what must then be queued (an upload, a history import): while Redis is away the job
 * could not be queued, so nothing is stored and the client retries (503).
 */
export function assertQueueReachable(deps: { redis: { status: string } }): void {
  if (deps.redis.status !== 'ready') throw new DependencyUnavailable();
}

function quote(s: string) {
  return s.replace(/["\\]/g, '');
}

/** Map zod issues to 422 items, `loc` starting with where the value came from. */
export function validationItems(error: z.ZodError, source: 'body' | 'query' | 'path' | 'header'): ValidationItem[] {
  return error.issues.map((issue) => ({
    loc: [source, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))],
    msg: issue.message,
    type: issueType(issue),
  }));
}

function issueType(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      return issue.input === undefined ? 'missing' : `${issue.expected}_type`;
    case 'too_small':
      return issue.origin === 'string' || issue.origin === 'array' ? `${issue.origin}_too_short` : 'greater_than_equal';
    case 'too_big':
      return issue.origin === 'string' || issue.origin === 'array' ? `${issue.origin}_too_long` : 'less_than_equal';
    case 'invalid_format':
      return `${issue.format}_format`;
    case 'invalid_value':
      return 'enum';
    case 'unrecognized_keys':
      return 'extra_forbidden';
    case 'custom':
      return typeof issue.params?.type === 'string' ? issue.params.type : 'value_error';
    default:
      return issue.code;
  }
}
