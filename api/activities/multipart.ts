import { randomBytes } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import formidable, { errors as formidableErrors } from 'formidable';
import type { Ctx } from '../context.ts';
import { PayloadTooLarge, UnprocessableEntity } from '../errors.ts';
import { tmpDir } from '../../lib/storage.ts';

export interface UploadedFile {
  /** The client's file name (for display only; never used in a path). */
  filename: string;
  /** Where the bytes were written, inside this request's temporary directory. */
  path: string;
  size: number;
}

export interface MultipartBody {
  files: UploadedFile[];
  fields: Record<string, string[]>;
  /** Removes the request's temporary directory; call it whatever happens. */
  cleanup(): Promise<void>;
}

const problem = (loc: (string | number)[], msg: string, type: string) => new UnprocessableEntity([{ loc: ['body', ...loc], msg, type }]);

/**
 * Read a multipart/form-data request into a temporary directory under DATA_DIR: the files of
 * `fileField` (at most `maxFiles`, each at most `maxFileBytes`) and the text fields. Too many files
 * is 422 naming the field; a file over the limit is 413; nothing is kept on failure.
 */
export async function readMultipart(ctx: Ctx, opts: { fileField: string; maxFiles: number; maxFileBytes: number; fields: string[] }): Promise<MultipartBody> {
  if (!ctx.is('multipart/form-data')) throw problem([], 'Expected a multipart/form-data body', 'value_error.content_type');
  const dir = path.join(tmpDir(ctx.deps.config.DATA_DIR), `upload-${randomBytes(8).toString('hex')}`);
  await mkdir(dir, { recursive: true });
  const cleanup = () => rm(dir, { recursive: true, force: true });
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
  // formidable lists files in the order their writes finish; the client's order is the order they began.
  const order = new Map<string, number>();
  form.on('fileBegin', (_name, file) => order.set(file.filepath, order.size));
  try {
    const [fields, files] = await form.parse(ctx.req);
    const list = [...(files[opts.fileField] ?? []), ...(files[`${opts.fileField}[]`] ?? [])].sort((a, b) => order.get(a.filepath)! - order.get(b.filepath)!);
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
    throw mapFormidableError(err, opts);
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
  if (typeof code === 'number') return problem([], `Malformed multipart body: ${(err as Error).message}`, 'value_error.multipart');
  return err;
}
