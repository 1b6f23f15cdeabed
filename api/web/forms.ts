import { z } from 'zod';
import type { Ctx } from '../http/context.ts';
import { textProblem } from '../../lib/text.ts';

export type FormValues = Record<string, string>;
export type FieldErrors = Record<string, string | undefined>;

/**
 * A posted form as strings: a repeated field keeps its first value, a missing body is empty, and
 * anything that is not text (objects and arrays of a JSON body, however deep) is empty too.
 */
export function formBody(ctx: Ctx): FormValues {
  const body = ctx.request.body;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return {};
  return Object.fromEntries(
    Object.entries(body as Record<string, unknown>).map(([k, v]) => {
      const first: unknown = Array.isArray(v) ? v[0] : v;
      return [k, typeof first === 'string' || typeof first === 'number' || typeof first === 'boolean' ? String(first) : ''];
    }),
  );
}

/**
 * `schema` behind a check that no field holds text PostgreSQL cannot store (a NUL character, a lone
 * surrogate): such a field gets its own error, shown beside it on the form page, and nothing else
 * is checked until it is fixed.
 */
export function storable<T extends z.ZodType>(schema: T) {
  return z
    .record(z.string(), z.string())
    .superRefine((values, ctx) => {
      for (const [name, value] of Object.entries(values)) {
        const problem = textProblem(value);
        if (problem) ctx.addIssue({ code: 'custom', path: [name], message: `This field ${problem}.` });
      }
    })
    .pipe(schema as unknown as z.ZodType<z.output<T>, Record<string, string>>);
}

/** The first message per field, for showing next to each input. */
export function fieldErrors(error: z.ZodError): FieldErrors {
  const errors: FieldErrors = {};
  for (const issue of error.issues) errors[String(issue.path[0])] ??= issue.message;
  return errors;
}
