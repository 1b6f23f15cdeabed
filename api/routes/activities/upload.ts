import { z } from 'zod';
import { defineRoute } from '../../route.ts';
import { assertQueueReachable, PayloadTooLarge, UnprocessableEntity, type ValidationItem } from '../../errors.ts';
import { readMultipart } from '../../activities/multipart.ts';
import { TooLarge } from '../../../engine/ingest/check-file.ts';
import { checkFileOnDisk, type CheckedPath } from '../../../engine/ingest/check-file-on-disk.ts';
import { storeSourceFile } from '../../../db/source-store.ts';
import { SourceOut, sourceOut } from '../../activities/model.ts';
import { activityIdsOf } from '../../../db/sources.ts';
import { enqueueIngest, requeueIngest } from '../../../workers/queues.ts';
import { normaliseSport } from '../../../lib/sports.ts';
import { textProblem } from '../../../lib/text.ts';
import type { ActivityFormat } from '../../../engine/ingest/sniff.ts';

export const MAX_FILES_PER_UPLOAD = 10;

/** Why a part's file name cannot be kept (it is stored and shown), or undefined: control characters, NUL included, and invalid Unicode. */
function fileNameProblem(name: string): string | undefined {
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'contains a control character (U+0000–U+001F or U+007F)';
  return textProblem(name);
}
const TAG = /^[\p{L}\p{N}][\p{L}\p{N} _.:/-]{0,63}$/u;

const UploadForm = z
  .object({
    files: z.array(z.string().meta({ format: 'binary' })).min(1).max(MAX_FILES_PER_UPLOAD).describe('1 to 10 files: .fit or .csv, optionally gzip-compressed (.fit.gz, .csv.gz)'),
    sport: z.string().nullable().optional().describe('Sport of CSV files without a `sport` column (required for them); for FIT files it replaces only `generic`'),
    tags: z.array(z.string()).optional().describe('Tags for every activity of these files (repeat the field or separate with commas)'),
  })
  .meta({ id: 'ActivityUpload' });

const UploadAccepted = z.object({ sources: z.array(SourceOut) }).meta({ id: 'UploadAccepted' });

export const uploadRoute = defineRoute(
  {
    method: 'post',
    path: '/api/v1/activities/upload',
    operationId: 'upload_activities',
    summary: 'Upload activity files',
    description:
      'Accepts 1 to 10 files in the multipart field `files` and answers 202 with one source per file, `processing`. Workers parse ' +
      'them; follow each at `GET /api/v1/sources/{id}` until `processed` (with `activity_ids`) or `failed` (with an error code). ' +
      'A FIT file gives one activity per session. A CSV file needs a `timestamp` column of ISO 8601 instants with an offset and ' +
      'columns named as metrics (power, heart_rate, speed, cadence, altitude, distance, latitude, longitude, temperature, ' +
      'core_temperature, smo2, respiration_rate), and a sport (the `sport` field or a `sport` column). The same content ' +
      'uploaded again returns the existing source and its activities. Content is sniffed, whatever the part\'s Content-Type ' +
      'says (or none): a file that is recognisably not FIT ' +
      'or CSV refuses the whole request with 422 naming it, and so does a file name with a control character (NUL included) or invalid Unicode; ' +
      'a damaged FIT or CSV file is accepted and fails on its own. ' +
      'A file larger than the limit (UPLOAD_MAX_FILE_BYTES, 64 MiB by default, also for decompressed gzip) is 413, answered ' +
      'as soon as its bytes pass the limit; a declared Content-Length beyond 10 such files is 413 before the body is read. ' +
      'While PostgreSQL or Redis is unreachable the answer is 503 with Retry-After: send the same files again then; a file ' +
      'stored but not queued (the outage began mid-request) is the same source again, and is queued by that retry. When the server\'s ' +
      'disk is full the answer is 507 and nothing of the request is kept.',
    tags: ['activities'],
    auth: { scopes: ['data:write'] },
    multipartForm: UploadForm,
    responses: {
      202: { description: 'One source per file, in the order sent', schema: UploadAccepted },
      413: { description: 'A file is larger than the limit' },
      503: { description: 'PostgreSQL or Redis is unreachable; retry after `Retry-After` seconds' },
      507: { description: "The server's disk is full; nothing of the request was kept" },
    },
  },
  async (ctx) => {
    const { db, config, queues } = ctx.deps;
    const userId = ctx.state.principal!.userId;
    const body = await readMultipart(ctx, { fileField: 'files', maxFiles: MAX_FILES_PER_UPLOAD, maxFileBytes: config.UPLOAD_MAX_FILE_BYTES, fields: ['sport', 'tags'] });
    try {
      const problems: ValidationItem[] = [];
      if (!body.files.length) problems.push({ loc: ['body', 'files'], msg: 'At least one file is required', type: 'missing' });
      const sportField = body.fields.sport?.[0]?.trim() || null;
      const sport = sportField === null ? null : normaliseSport(sportField);
      if (sport === undefined) problems.push({ loc: ['body', 'sport'], msg: `"${sportField}" is not a sport (OpenSportTaxonomy, e.g. cycling.road)`, type: 'value_error.sport' });
      const tags = [...new Set((body.fields.tags ?? []).flatMap((t) => t.split(',')).map((t) => t.trim()).filter(Boolean))];
      for (const tag of tags) if (!TAG.test(tag)) problems.push({ loc: ['body', 'tags'], msg: `"${tag.slice(0, 80)}" is not a tag (1–64 letters, digits, space and _ . : / -)`, type: 'value_error.tag' });
      if (problems.length) throw new UnprocessableEntity(problems);

      // Every file is checked before any is stored: a refused request stores nothing. Files stay on
      // disk (a gzip file is decompressed beside it) and are moved into place, one at a time.
      const checked: (CheckedPath & { format: ActivityFormat })[] = [];
      for (const [i, file] of body.files.entries()) {
        const nameProblem = fileNameProblem(file.filename);
        if (nameProblem) {
          problems.push({ loc: ['body', 'files', i], msg: `The file name of files[${i}] ${nameProblem}`, type: 'value_error.filename' });
          continue;
        }
        let result: CheckedPath;
        try {
          result = await checkFileOnDisk(file.filename, file.path, config.UPLOAD_MAX_FILE_BYTES);
        } catch (err) {
          if (err instanceof TooLarge) throw new PayloadTooLarge(`files[${i}] "${file.filename}" is larger than ${config.UPLOAD_MAX_FILE_BYTES} bytes`);
          throw err;
        }
        if (!result.format) problems.push({ loc: ['body', 'files', i], msg: `"${file.filename}" is not a FIT or CSV file: ${result.unsupported}`, type: 'value_error.file_format' });
        else checked.push(result as CheckedPath & { format: ActivityFormat });
      }
      if (problems.length) throw new UnprocessableEntity(problems);

      assertQueueReachable(ctx.deps);
      const stored = [];
      for (const file of checked) stored.push(await storeSourceFile(db, config.DATA_DIR, file, { userId, origin: 'manual_upload', sport: sport ?? null, tags }));
      await enqueueIngest(queues, stored.filter((s) => s.created).map((s) => s.source.id));
      // A file sent again while its source is still `processing` is queued again if its job is gone
      // or over (a request that stored it but could not queue it, a job that failed for good).
      const pending = stored.filter((s) => !s.created && s.source.status === 'processing');
      if (pending.length) await requeueIngest(queues, pending.map((s) => ({ id: s.source.id, backfill: !!s.source.backfill_id })));
      const ids = await activityIdsOf(db, stored.map((s) => s.source.id));
      ctx.status = 202;
      ctx.body = { sources: stored.map(({ source }) => sourceOut(source, ids.get(source.id) ?? [])) };
    } finally {
      await body.cleanup();
    }
  },
);
