// The application form (create and edit): its fields' rules and the validation of a posted form.
import { z } from 'zod';
import type { Config } from '../../../lib/config.ts';
import { slugProblem } from '../../services/applications/model.ts';
import { redirectUriProblem } from '../../services/oauth/redirect-uris.ts';
import { LOOPBACK_HOSTS } from '../../../lib/ip-address.ts';
import { MAX_URL_LENGTH, webhookUrlProblem } from '../../../lib/webhook-url.ts';
import { fieldErrors, storable, type FieldErrors, type FormValues } from '../forms.ts';
import { shorten } from '../web-common.ts';

const MAX_REDIRECT_URIS = 20;
const MAX_WEBHOOK_ENDPOINTS = 10;
export const PUBLISH_NEEDS_FIELDS = 'Fill in description, URL, image and privacy statement to publish';

/** Why `value` is not an absolute https URL (or http on a loopback host), or undefined. */
function webUrlProblem(value: string): string | undefined {
  if (value.length > MAX_URL_LENGTH) return `must be at most ${MAX_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL, like https://example.com/';
  }
  if (/\s/.test(value)) return 'must not contain spaces';
  if (url.protocol === 'http:' && !LOOPBACK_HOSTS.has(url.hostname)) return 'must use https (plain http only for localhost and 127.0.0.1)';
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an https URL';
  if (!url.hostname) return 'must name a host';
  if (url.username || url.password) return 'must not contain a user name or password';
  return undefined;
}

/** The non-empty lines of a textarea with their line numbers (1-based, counting blank lines). */
function numberedLines(text: string): { line: number; value: string }[] {
  return text
    .split(/\r\n|\r|\n/)
    .map((value, i) => ({ line: i + 1, value: value.trim() }))
    .filter((l) => l.value !== '');
}

function linesField(label: string, max: number, problem: (value: string) => string | undefined) {
  return z
    .string()
    .default('')
    .transform(numberedLines)
    .superRefine((lines, ctx) => {
      if (lines.length > max) ctx.addIssue({ code: 'custom', message: `At most ${max} ${label} (one per line).` });
      for (const { line, value } of lines) {
        const p = problem(value);
        if (p) {
          ctx.addIssue({ code: 'custom', message: `Line ${line} ("${shorten(value)}"): ${label.replace(/s$/, '')} ${p}.` });
          return;
        }
      }
    })
    .transform((lines) => [...new Set(lines.map((l) => l.value))]);
}

const optionalText = (label: string, max: number) =>
  z
    .string()
    .default('')
    .transform((v) => v.trim())
    .refine((v) => v.length <= max, `${label} must be at most ${max} characters.`)
    .transform((v) => v || null);

const optionalUrl = (label: string) =>
  z
    .string()
    .default('')
    .transform((v) => v.trim())
    .superRefine((v, ctx) => {
      const p = v ? webUrlProblem(v) : undefined;
      if (p) ctx.addIssue({ code: 'custom', message: `${label} ${p}.` });
    })
    .transform((v) => v || null);

const checkbox = z
  .string()
  .default('')
  .transform((v) => v === 'on' || v === 'true' || v === '1');

function applicationForm(config: Config) {
  return z.object({
    name: z
      .string()
      .default('')
      .transform((v) => v.trim())
      .refine((v) => v.length >= 1, 'Name is required.')
      .refine((v) => v.length <= 100, 'Name must be at most 100 characters.'),
    description: optionalText('Description', 500),
    url: optionalUrl('URL'),
    image: optionalUrl('Image URL'),
    privacy_statement: optionalUrl('Privacy statement URL'),
    redirect_uris: linesField('redirect URIs', MAX_REDIRECT_URIS, redirectUriProblem),
    published: checkbox,
    page_slug: z
      .string()
      .default('')
      .transform((v) => v.trim())
      .superRefine((v, ctx) => {
        const p = v ? slugProblem(v) : undefined;
        if (p) ctx.addIssue({ code: 'custom', message: `The page slug ${p}.` });
      })
      .transform((v) => v || null),
    webhook_endpoints: linesField('webhook endpoints', MAX_WEBHOOK_ENDPOINTS, (v) =>
      webhookUrlProblem(v, { allowHttpLoopback: config.WEBHOOK_ALLOW_HTTP_LOOPBACK }),
    ),
    new_webhook_secret: checkbox,
  });
}
export type ApplicationInput = z.output<ReturnType<typeof applicationForm>>;

/** The posted application form checked: `input` when it is valid, else the message per field. */
export function validateApplication(values: FormValues, config: Config): { input?: ApplicationInput; errors: FieldErrors } {
  const parsed = storable(applicationForm(config)).safeParse(values);
  const errors = parsed.success ? {} : fieldErrors(parsed.error);
  // A private application cannot be published: checked on the raw values, so it shows with other errors.
  const wantsPublished = checkbox.parse(values.published);
  const missing = (['description', 'url', 'image', 'privacy_statement'] as const).some((k) => !(values[k] ?? '').trim());
  if (wantsPublished && missing) errors.published ??= PUBLISH_NEEDS_FIELDS;
  const failed = Object.values(errors).some(Boolean);
  return failed || !parsed.success ? { errors } : { input: parsed.data, errors };
}
