import { z } from 'zod';
import type { Ctx } from '../http/context.ts';
import { html } from './html.ts';
import { field, formError, page } from './layout.ts';
import { createUser, DuplicateEmailError, findUserByEmail } from '../../db/users.ts';
import { decoyHash, hashPassword, PASSWORD_RULES, passwordProblem, verifyPassword } from '../services/auth/passwords.ts';
import { SignInThrottle, SignUpThrottle } from '../services/auth/throttle.ts';
import { currentWebUser, endWebSession, safeNext, startWebSession } from '../http/web-session.ts';
import { assertSameOrigin } from '../http/origin-check.ts';
import { deleteSession } from '../../db/sessions.ts';
import { fieldErrors, formBody, storable, type FieldErrors, type FormValues } from './forms.ts';

const Email = z
  .string()
  .trim()
  .toLowerCase()
  .max(254)
  .pipe(z.email({ message: 'Enter a valid email address.' }));
const Name = (label: string) => z.string().trim().min(1, `${label} is required.`).max(100, `${label} must be at most 100 characters.`);

export const SignUpForm = z.object({
  first_name: Name('First name'),
  last_name: Name('Last name'),
  email: Email,
  password: z.string(),
  next: z.string().optional(),
});
const SignInForm = z.object({
  email: z.string().trim().toLowerCase().max(254),
  password: z.string().max(1000),
  next: z.string().optional(),
});

type Values = FormValues;
type Errors = FieldErrors;

function signUpPage(values: Values = {}, errors: Errors = {}, message?: string) {
  return page(
    { title: 'Sign up' },
    html`<h1>Create your account</h1>
<form method="post" action="/signup" class="stack" novalidate>
  ${formError(message)}
  ${field({ name: 'first_name', label: 'First name', value: values.first_name, autocomplete: 'given-name', error: errors.first_name })}
  ${field({ name: 'last_name', label: 'Last name', value: values.last_name, autocomplete: 'family-name', error: errors.last_name })}
  ${field({ name: 'email', label: 'Email', type: 'email', value: values.email, autocomplete: 'email', error: errors.email })}
  ${field({ name: 'password', label: 'Password', type: 'password', autocomplete: 'new-password', error: errors.password, hint: PASSWORD_RULES })}
  <input type="hidden" name="next" value="${values.next ?? ''}">
  <button type="submit">Sign up</button>
</form>
<p>Already have an account? <a href="/signin">Sign in</a></p>`,
  );
}

function signInPage(values: Values = {}, message?: string) {
  return page(
    { title: 'Sign in' },
    html`<h1>Sign in</h1>
<form method="post" action="/signin" class="stack" novalidate>
  ${formError(message)}
  ${field({ name: 'email', label: 'Email', type: 'email', value: values.email, autocomplete: 'username' })}
  ${field({ name: 'password', label: 'Password', type: 'password', autocomplete: 'current-password' })}
  <input type="hidden" name="next" value="${values.next ?? ''}">
  <button type="submit">Sign in</button>
</form>
<p>No account yet? <a href="/signup${values.next ? `?next=${encodeURIComponent(values.next)}` : ''}">Sign up</a></p>`,
  );
}

export async function showSignUp(ctx: Ctx) {
  if (await currentWebUser(ctx)) return ctx.redirect(safeNext(ctx.query.next));
  ctx.type = 'html';
  ctx.body = signUpPage({ next: safeNext(ctx.query.next, '') });
}

/**
 * POST /signup. An email that already has an account is answered as such (409, "already exists"):
 * this tells whoever asks that the address has an account here. We accept that (the service sends
 * no email, so it cannot answer "check your inbox" instead, and a vague answer would strand people
 * who forgot they signed up); sign-in does not tell (one message for both), and sign-up attempts are
 * throttled per client address (4 × SIGNIN_MAX_FAILURES per SIGNIN_WINDOW_SECONDS, 429 with
 * Retry-After), so addresses cannot be tested in bulk.
 */
export async function submitSignUp(ctx: Ctx) {
  assertSameOrigin(ctx);
  const values = formBody(ctx);
  const parsed = storable(SignUpForm).safeParse(values);
  const errors: Errors = parsed.success ? {} : fieldErrors(parsed.error);
  const weak = passwordProblem(values.password ?? '', {
    email: parsed.data?.email,
    names: [parsed.data?.first_name ?? '', parsed.data?.last_name ?? ''],
  });
  if (weak) errors.password ??= weak;
  if (!parsed.success || weak) {
    ctx.status = 422;
    ctx.type = 'html';
    ctx.body = signUpPage({ ...values, password: '' }, errors, 'Please correct the fields marked below.');
    return;
  }
  const { first_name, last_name, email, password, next } = parsed.data;
  const { deps } = ctx;
  const throttle = new SignUpThrottle(
    deps.redis,
    deps.config.QUEUE_PREFIX,
    deps.config.SIGNIN_MAX_FAILURES * 4,
    deps.config.SIGNIN_WINDOW_SECONDS,
  );
  const wait = await throttle.retryAfter(ctx.ip);
  if (wait > 0) {
    ctx.status = 429;
    ctx.set('Retry-After', String(wait));
    ctx.type = 'html';
    ctx.body = signUpPage({ ...values, password: '' }, {}, `Too many sign-ups from your network. Try again in ${minutes(wait)}.`);
    return;
  }
  await throttle.recordAttempt(ctx.ip);
  try {
    const user = await createUser(ctx.deps.db, { first_name, last_name, email, password_hash: await hashPassword(password) });
    await startWebSession(ctx, user);
    ctx.status = 303;
    ctx.redirect(safeNext(next));
  } catch (err) {
    if (!(err instanceof DuplicateEmailError)) throw err;
    ctx.status = 409;
    ctx.type = 'html';
    ctx.body = signUpPage({ ...values, password: '' }, { email: 'An account with this email already exists. Sign in instead.' });
  }
}

export async function showSignIn(ctx: Ctx) {
  // `reauth=1` (from prompt=login) asks a signed-in user to sign in again.
  if (ctx.query.reauth !== '1' && (await currentWebUser(ctx))) return ctx.redirect(safeNext(ctx.query.next));
  ctx.type = 'html';
  ctx.body = signInPage({ next: safeNext(ctx.query.next, '') });
}

export async function submitSignIn(ctx: Ctx) {
  assertSameOrigin(ctx);
  const { deps } = ctx;
  const values = formBody(ctx);
  const parsed = storable(SignInForm).safeParse(values);
  const email = parsed.data?.email ?? '';
  const throttle = new SignInThrottle(
    deps.redis,
    deps.config.QUEUE_PREFIX,
    deps.config.SIGNIN_MAX_FAILURES,
    deps.config.SIGNIN_WINDOW_SECONDS,
  );
  const wait = await throttle.retryAfter(email, ctx.ip);
  if (wait > 0) {
    ctx.status = 429;
    ctx.set('Retry-After', String(wait));
    ctx.type = 'html';
    ctx.body = signInPage({ email, next: values.next ?? '' }, `Too many failed sign-ins. Try again in ${minutes(wait)}.`);
    return;
  }
  const user = parsed.success ? await findUserByEmail(deps.db, email) : undefined;
  // Unknown emails are checked against a decoy hash so both paths take the same time.
  const ok = await verifyPassword(values.password ?? '', user?.password_hash ?? (await decoyHash()));
  if (!user || !ok) {
    await throttle.recordFailure(email, ctx.ip);
    ctx.status = 401;
    ctx.type = 'html';
    ctx.body = signInPage({ email, next: values.next ?? '' }, 'Incorrect email or password.');
    return;
  }
  await throttle.recordSuccess(email, ctx.ip);
  // Signing in again (prompt=login) replaces the session this browser had.
  const previous = await currentWebUser(ctx);
  if (previous) await deleteSession(deps.db, previous.sessionId);
  await startWebSession(ctx, user);
  ctx.status = 303;
  ctx.redirect(safeNext(parsed.data?.next));
}

function minutes(seconds: number): string {
  const m = Math.ceil(seconds / 60);
  return `${m} minute${m > 1 ? 's' : ''}`;
}

export async function signOut(ctx: Ctx) {
  assertSameOrigin(ctx);
  await endWebSession(ctx);
  ctx.status = 303;
  ctx.redirect('/signin');
}
