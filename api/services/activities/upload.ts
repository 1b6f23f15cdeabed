import { z } from 'zod';
import type { Deps } from '../../services/deps.ts';
import { assertQueueReachable, PayloadTooLarge, UnprocessableEntity, type ValidationItem } from '../errors.ts';
import type { MultipartBody } from './uploaded.ts';
import { TooLarge } from '../../../engine/ingest/check-file.ts';
import { checkFileOnDisk, type CheckedPath } from '../../../engine/ingest/check-file-on-disk.ts';
import type { ActivityFormat } from '../../../engine/ingest/sniff.ts';
import { storeSourceFile } from '../../../db/source-store.ts';
import { activityIdsOf } from '../../../db/sources.ts';
import { enqueueIngest, requeueIngest } from '../../../workers/queues.ts';
import { normaliseSport } from '../../../lib/sports.ts';
import { textProblem } from '../../../lib/text.ts';
import { SourceOut, sourceOut } from './model.ts';

/**
 * What POST /api/v1/activities/upload does with the files it read (api/rest/routes/activities/upload.ts
 * parses the request and answers): every file and field checked before any file is stored (a refused
 * request stores nothing), then each file stored as a source (the same content again is the same
 * source) and queued for ingestion, a source still `processing` from before queued again when its
 * job is gone or over.
 */

export const MAX_FILES_PER_UPLOAD = 10;

/** Why a part's file name cannot be kept (it is stored and shown), or undefined: control characters, NUL included, and invalid Unicode. */
function fileNameProblem(name: string): string | undefined {
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'contains a control character (U+0000–U+001F or U+007F)';
  return textProblem(name);
}

const TAG = /^[\p{L}\p{N}][\p{L}\p{N} _.:/-]{0,63}$/u;
/** The most tags an upload may give its activities (as a trace's and a query's tags). */
export const MAX_TAGS = 50;

/** An upload's answer for one file: its source, and whether that content was stored before. */
export const UploadedSource = SourceOut.extend({
  duplicate: z
    .boolean()
    .describe(
      'true when this content was already stored (an earlier upload, a history import, or an earlier file of this request): the source is that one, and nothing new is processed',
    ),
}).meta({ id: 'UploadedSource' });

export async function storeUploads(deps: Deps, userId: string, body: MultipartBody): Promise<z.output<typeof UploadedSource>[]> {
  const { db, config, queues } = deps;
  const problems: ValidationItem[] = [];
  if (!body.files.length) problems.push({ loc: ['body', 'files'], msg: 'At least one file is required', type: 'missing' });
  const sportField = body.fields.sport?.[0]?.trim() || null;
  const sport = sportField === null ? null : normaliseSport(sportField);
  if (sport === undefined)
    problems.push({
      loc: ['body', 'sport'],
      msg: `"${sportField}" is not a sport (OpenSportTaxonomy, e.g. cycling.road)`,
      type: 'value_error.sport',
    });
  const tags = [
    ...new Set(
      (body.fields.tags ?? [])
        .flatMap((t) => t.split(','))
        .map((t) => t.trim())
        .filter(Boolean),
    ),
  ];
  if (tags.length > MAX_TAGS)
    problems.push({ loc: ['body', 'tags'], msg: `at most ${MAX_TAGS} tags are allowed (got ${tags.length})`, type: 'too_big' });
  for (const tag of tags.slice(0, MAX_TAGS))
    if (!TAG.test(tag))
      problems.push({
        loc: ['body', 'tags'],
        msg: `"${tag.slice(0, 80)}" is not a tag (1–64 letters, digits, space and _ . : / -)`,
        type: 'value_error.tag',
      });
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
      if (err instanceof TooLarge)
        throw new PayloadTooLarge(`files[${i}] "${file.filename}" is larger than ${config.UPLOAD_MAX_FILE_BYTES} bytes`);
      throw err;
    }
    if (!result.format)
      problems.push({
        loc: ['body', 'files', i],
        msg: `"${file.filename}" is not a FIT or CSV file: ${result.unsupported}`,
        type: 'value_error.file_format',
      });
    else checked.push(result as CheckedPath & { format: ActivityFormat });
  }
  if (problems.length) throw new UnprocessableEntity(problems);

  assertQueueReachable(deps);
  const stored = [];
  for (const file of checked)
    stored.push(await storeSourceFile(db, deps.engine.files.store, file, { userId, origin: 'manual_upload', sport: sport ?? null, tags }));
  await enqueueIngest(
    queues,
    stored.filter((s) => s.created).map((s) => s.source.id),
  );
  // A file sent again while its source is still `processing` is queued again if its job is gone
  // or over (a request that stored it but could not queue it, a job that failed for good).
  const pending = stored.filter((s) => !s.created && s.source.status === 'processing');
  if (pending.length)
    await requeueIngest(
      queues,
      pending.map((s) => ({ id: s.source.id, backfill: !!s.source.backfill_id })),
    );
  const ids = await activityIdsOf(
    db,
    stored.map((s) => s.source.id),
  );
  return stored.map(({ source, created }) => ({ ...sourceOut(source, ids.get(source.id) ?? []), duplicate: !created }));
}
