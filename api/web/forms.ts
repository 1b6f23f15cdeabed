import type { z } from 'zod';
import type { Ctx } from '../context.ts';

export type FormValues = Record<string, string>;
export type FieldErrors = Record<string, string | undefined>;

/** A posted form as strings: a repeated field keeps its first value, a missing body is empty. */
export function formBody(ctx: Ctx): FormValues {
  const body = (ctx.request.body ?? {}) as Record<string, unknown>;
  return Object.fromEntries(Object.entries(body).map(([k, v]) => [k, Array.isArray(v) ? String(v[0] ?? '') : String(v ?? '')]));
}

/** The first message per field, for showing next to each input. */
export function fieldErrors(error: z.ZodError): FieldErrors {
  const errors: FieldErrors = {};
  for (const issue of error.issues) errors[String(issue.path[0])] ??= issue.message;
  return errors;
}
