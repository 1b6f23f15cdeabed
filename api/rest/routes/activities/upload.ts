import { z } from 'zod';
import { defineRoute } from '../../../http/route.ts';
import { readMultipart } from '../../activities/multipart.ts';
import { MAX_FILES_PER_UPLOAD, MAX_TAGS, storeUploads, UploadedSource } from '../../../services/activities/upload.ts';

const UploadForm = z
  .object({
    files: z
      .array(z.string().meta({ format: 'binary' }))
      .min(1)
      .max(MAX_FILES_PER_UPLOAD)
      .describe(
        '1 to 10 files: .fit, .csv, .gpx or .tcx, optionally gzip-compressed (.fit.gz, .csv.gz, .gpx.gz, .tcx.gz); GPX and TCX are recognised by their root element',
      ),
    sport: z
      .string()
      .nullable()
      .optional()
      .describe('Sport of CSV files without a `sport` column (required for them); for FIT files it replaces only `generic`'),
    tags: z
      .array(z.string())
      .max(MAX_TAGS)
      .optional()
      .describe(`Tags for every activity of these files (repeat the field or separate with commas); at most ${MAX_TAGS}`),
  })
  .meta({ id: 'ActivityUpload' });

const UploadAccepted = z.object({ sources: z.array(UploadedSource) }).meta({ id: 'UploadAccepted' });

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
      "uploaded again returns the existing source and its activities, with `duplicate: true`. Content is sniffed, whatever the part's Content-Type " +
      'says (or none): a file that is recognisably not FIT ' +
      'or CSV refuses the whole request with 422 naming it, and so does a file name with a control character (NUL included) or invalid Unicode; ' +
      'a damaged FIT or CSV file is accepted and fails on its own. ' +
      'A file larger than the limit (UPLOAD_MAX_FILE_BYTES, 64 MiB by default, also for decompressed gzip) is 413, answered ' +
      'as soon as its bytes pass the limit; a declared Content-Length beyond 10 such files is 413 before the body is read. ' +
      'While PostgreSQL or Redis is unreachable the answer is 503 with Retry-After: send the same files again then; a file ' +
      "stored but not queued (the outage began mid-request) is the same source again, and is queued by that retry. When the server's " +
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
    const body = await readMultipart(ctx, {
      fileField: 'files',
      maxFiles: MAX_FILES_PER_UPLOAD,
      maxFileBytes: ctx.deps.config.UPLOAD_MAX_FILE_BYTES,
      fields: ['sport', 'tags'],
    });
    try {
      const sources = await storeUploads(ctx.deps, ctx.state.principal!.userId, body);
      ctx.status = 202;
      ctx.body = { sources };
    } finally {
      await body.cleanup();
    }
  },
);
