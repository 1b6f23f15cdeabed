import { randomBytes } from 'node:crypto';
import type { EventEmitter } from 'node:events';
import { mkdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import formidable, { errors as formidableErrors, type Part } from 'formidable';
import type { Ctx } from '../../http/context.ts';
import type { MultipartBody } from '../../services/activities/uploaded.ts';
import { PayloadTooLarge, UnprocessableEntity } from '../../services/errors.ts';
import { tmpDir } from '../../../lib/storage.ts';
import type { Logger } from '../../../lib/log.ts';

const problem = (loc: (string | number)[], msg: string, type: string) => new UnprocessableEntity([{ loc: ['body', ...loc], msg, type }]);

/** Room for the parts' headers and the text fields beside the files, in a declared Content-Length. */
const FORM_OVERHEAD_BYTES = 1024 * 1024;

/**
 * Read a multipart/form-data request into a temporary directory under DATA_DIR: the files of
 * `fileField` (at most `maxFiles`, each at most `maxFileBytes`) and the text fields. Too many files
 * is 422 naming the field; a file over the limit is 413 as soon as its bytes pass the limit (what is
 * on disk never exceeds it by more than one read), and a declared Content-Length beyond what the
 * files may add up to is 413 before anything is read; nothing is kept on failure.
 *
 * A part with a file name is a file whatever its Content-Type says, and also without one (python
 * `requests` sends none): the content decides what it is.
 */
export async function readMultipart(
  ctx: Ctx,
  opts: { fileField: string; maxFiles: number; maxFileBytes: number; fields: string[] },
): Promise<MultipartBody> {
  if (!ctx.is('multipart/form-data')) throw problem([], 'Expected a multipart/form-data body', 'value_error.content_type');
  const declared = Number(ctx.get('content-length'));
  if (declared > opts.maxFiles * opts.maxFileBytes + FORM_OVERHEAD_BYTES) {
    throw new PayloadTooLarge(`The body (${declared} bytes) is larger than ${opts.maxFiles} file(s) of at most ${opts.maxFileBytes} bytes`);
  }
  const dir = path.join(tmpDir(ctx.deps.config.DATA_DIR), `upload-${randomBytes(8).toString('hex')}`);
  await mkdir(dir, { recursive: true });
  const cleanup = () => removeUploadDir(dir, ctx.deps.log);
  const form = formidable({
    uploadDir: dir,
    keepExtensions: false,
    allowEmptyFiles: true,
    minFileSize: 0,
    maxFiles: opts.maxFiles,
    maxFileSize: opts.maxFileBytes,
    maxTotalFileSize: opts.maxFileBytes * opts.maxFiles,
    maxFields: 50,
    maxFieldsSize: 64 * 1024,
    filter: (part) => part.name === opts.fileField || part.name === `${opts.fileField}[]`,
  });
  const isFileField = (name: string | null) => name === opts.fileField || name === `${opts.fileField}[]`;
  const internals = form as unknown as { _handlePart(part: Part): void; _error(err: Error): void };
  form.onPart = (part) => {
    if (part.originalFilename === null || !isFileField(part.name)) return internals._handlePart(part);
    // formidable takes a part without a Content-Type for a text field; a named file is a file.
    if (!part.mimetype) part.mimetype = 'application/octet-stream';
    // formidable checks maxFileSize only when a file has ended: stop as soon as one passes it.
    let bytes = 0;
    part.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > opts.maxFileBytes)
        internals._error(
          Object.assign(new Error(`a file passed ${opts.maxFileBytes} bytes`), { code: formidableErrors.biggerThanMaxFileSize }),
        );
    });
    return internals._handlePart(part);
  };
  // formidable lists files in the order their writes finish; the client's order is the order they began.
  const order = new Map<string, number>();
  // A file's write error (ENOSPC) is ignored by formidable once the request has been read to its end
  // (its _error returns early then), and the short file is listed as complete: a full disk stored a
  // truncated upload and answered 202. The first such error fails the request here instead.
  let writeError: unknown;
  form.on('fileBegin', (_name, file) => {
    order.set(file.filepath, order.size);
    (file as unknown as EventEmitter).on('error', (err: unknown) => (writeError ??= err));
  });
  try {
    const [fields, files] = await form.parse(ctx.req);
    if (writeError) throw writeError;
    const list = [...(files[opts.fileField] ?? []), ...(files[`${opts.fileField}[]`] ?? [])].sort(
      (a, b) => order.get(a.filepath)! - order.get(b.filepath)!,
    );
    // And should a short write have raised no error at all: every byte received must be on disk.
    for (const f of list) {
      const written = (await stat(f.filepath)).size;
      if (written !== f.size)
        throw Object.assign(new Error(`no space left on device: ${written} of ${f.size} bytes of an upload written`), { code: 'ENOSPC' });
    }
    const text: Record<string, string[]> = {};
    for (const name of opts.fields) {
      const values = fields[name];
      if (values?.length) text[name] = values;
    }
    return {
      files: list.map((f) => ({ filename: f.originalFilename ?? 'upload', path: f.filepath, size: f.size })),
      fields: text,
      cleanup,
    };
  } catch (err) {
    await cleanup();
    // The parts parsed in the chunk that failed may still open their files after this: once more, later.
    setTimeout(() => void cleanup(), STRAGGLER_MS).unref();
    throw mapFormidableError(err, opts);
  }
}

/** How long after a failed parse the temporary directory is removed again. */
const STRAGGLER_MS = 1_000;

/**
 * Removes a request's temporary directory, retrying while it is not yet empty, and never rejects: a
 * failure to clean up must not replace the answer (a 422 for an 11th file was once a 500 here).
 * After formidable fails, the other parts of the chunk it was parsing still open their files, each
 * in its own asynchronous step: one created between the removal's listing and its rmdir made rmdir
 * fail with ENOTEMPTY. What cannot be removed is logged; housekeeping removes it after a day.
 */
export async function removeUploadDir(dir: string, log?: Logger): Promise<void> {
  try {
    await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 20 });
  } catch (err) {
    log?.warn("could not remove an upload's temporary directory", { dir, err: (err as Error).message });
  }
}

function mapFormidableError(err: unknown, opts: { fileField: string; maxFiles: number; maxFileBytes: number }): unknown {
  const code = (err as { code?: number }).code;
  if (code === formidableErrors.maxFilesExceeded) {
    return problem([opts.fileField], `At most ${opts.maxFiles} files per request`, 'value_error.list.max_items');
  }
  if (code === formidableErrors.biggerThanMaxFileSize || code === formidableErrors.biggerThanTotalMaxFileSize) {
    return new PayloadTooLarge(`Each file may be at most ${opts.maxFileBytes} bytes`);
  }
  if (code === formidableErrors.maxFieldsExceeded || code === formidableErrors.maxFieldsSizeExceeded) {
    return problem([], 'Too many or too large form fields', 'value_error.form');
  }
  // Our words, not formidable's (its messages name its parser's states).
  if (typeof code === 'number')
    return problem(
      [],
      'The multipart/form-data body is malformed: a missing or wrong boundary, a part without its headers, or a body cut short',
      'value_error.multipart',
    );
  return err;
}
