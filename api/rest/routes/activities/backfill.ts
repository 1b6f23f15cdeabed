import { PassThrough } from 'node:stream';
import { z } from 'zod';
import { defineRoute } from '../../../http/route.ts';
import { readMultipart } from '../../activities/multipart.ts';
import { BackfillOut, backfillOut } from '../../../services/activities/backfill-model.ts';
import { backfillCounts, earliestActivityStart, latestBackfill } from '../../../../db/backfills.ts';
import { refuseWhileImporting, startArchiveBackfill } from '../../../services/activities/backfill.ts';
import { watchBackfill } from '../../../../db/backfill-progress.ts';
import { CONTENT_ENCODING_HEADER } from '../../../http/middleware/compression.ts';

const BackfillForm = z
  .object({
    archive: z.string().meta({ format: 'binary' }).describe('A zip archive of .fit/.csv/.gpx/.tcx files (optionally .gz), folders allowed'),
  })
  .meta({ id: 'BackfillUpload' });

export const startBackfillRoute = defineRoute(
  {
    method: 'post',
    path: '/api/v1/activities/backfill',
    operationId: 'start_backfill',
    summary: 'Import a history archive (newest first)',
    description:
      "Accepts a zip archive (e.g. a training platform's bulk export) in the multipart field `archive` and answers 202. Workers read " +
      'it, make a source of every .fit/.csv/.gpx/.tcx(.gz) file in it (files already uploaded are recognised by content and not loaded ' +
      'twice), and load them newest first; follow the progress on `GET /api/v1/activities/backfill-status`. Other entries, unsafe ' +
      'names (absolute, `..`), and entries over the file-size limit or with an implausible compression ratio are skipped. ' +
      'The archive may be at most BACKFILL_MAX_ARCHIVE_BYTES (4 GiB by default; 413 beyond, as soon as its bytes or a declared ' +
      "Content-Length pass it). The part's Content-Type does not matter (none is fine). A user's imports run one at a time: " +
      'while one is still `scanning` or `loading`, another is refused with 409 (before its archive is read), naming the one in progress. ' +
      'While PostgreSQL or Redis is unreachable the answer is 503 with Retry-After and nothing is kept: send the archive again then. ' +
      "When the server's disk is full the answer is 507 and nothing is kept.",
    tags: ['activities'],
    auth: { scopes: ['data:write'] },
    multipartForm: BackfillForm,
    responses: {
      202: { description: 'The backfill, `scanning`', schema: BackfillOut },
      409: { description: 'Another history import of this user is still in progress (`scanning` or `loading`): imports run one at a time' },
      413: { description: 'The archive is larger than the limit' },
      503: { description: 'PostgreSQL or Redis is unreachable; nothing was kept: retry after `Retry-After` seconds' },
      507: { description: "The server's disk is full; nothing was kept" },
    },
  },
  async (ctx) => {
    const userId = ctx.state.principal!.userId;
    // Refused before the archive is read when the answer is already known; startArchiveBackfill decides races.
    await refuseWhileImporting(ctx.deps, userId);
    const body = await readMultipart(ctx, {
      fileField: 'archive',
      maxFiles: 1,
      maxFileBytes: ctx.deps.config.BACKFILL_MAX_ARCHIVE_BYTES,
      fields: [],
    });
    try {
      const backfill = await startArchiveBackfill(ctx.deps, userId, body.files[0]);
      ctx.status = 202;
      ctx.body = backfillOut(backfill);
    } finally {
      await body.cleanup();
    }
  },
);

const BackfillFiles = z
  .object({
    found: z.number().int().describe('Activity files in the history'),
    loaded: z.number().int().describe('Files loaded by this import: new content, processed'),
    already_stored: z.number().int().describe('Files whose content was stored before (an upload, an earlier import): not loaded again'),
    failed: z.number().int().describe('Files that could not be read (each also a BackfillError line)'),
    skipped: z.number().int().describe('Entries left out: other formats, unsafe names, too large'),
  })
  .meta({ id: 'BackfillFiles' });

const StatusLine = z.union([
  z
    .object({
      backfill_loaded_until: z.string().nullable().describe('Naive local date-time of the earliest activity loaded so far'),
      files: BackfillFiles.optional().describe('On the last line of a completed import only: what became of its files'),
    })
    .meta({ id: 'BackfillStatus' }),
  z.object({ error: z.string() }).meta({ id: 'BackfillError' }),
]);

export const backfillStatusRoute = defineRoute(
  {
    method: 'get',
    path: '/api/v1/activities/backfill-status',
    operationId: 'backfill_status',
    summary: 'Stream the progress of the history import (NDJSON)',
    description:
      'An `application/x-ndjson` stream about the user\'s latest backfill: a line `{"backfill_loaded_until": "<naive local ' +
      'date-time or null>"}` at once and then every 2 seconds, and a line `{"error": "<file>: <message> (<code>)"}` for each file ' +
      'that failed. Loading runs newest first, so `backfill_loaded_until` moves backward. The stream ends when the backfill ' +
      'completes (after a last status line, which also carries `files`: how many were loaded, already stored, failed or skipped) or after 60 seconds; reconnect to keep watching. A user without a backfill gets one ' +
      'line with the earliest activity they have (or null) and the stream ends.',
    tags: ['activities'],
    auth: { scopes: ['data:read'] },
    responses: {
      200: {
        description: 'NDJSON: one JSON object per line, each a BackfillStatus or a BackfillError',
        contentType: 'application/x-ndjson',
        schema: StatusLine,
        headers: {
          'Content-Encoding': `${CONTENT_ENCODING_HEADER}. Compressed, the stream is flushed after every line, so each line arrives when it is written`,
        },
      },
    },
  },
  async (ctx) => {
    const { db, config, log, now } = ctx.deps;
    const userId = ctx.state.principal!.userId;
    const backfill = await latestBackfill(db, userId);
    const stream = new PassThrough();
    ctx.status = 200;
    ctx.type = 'application/x-ndjson';
    ctx.set('Cache-Control', 'no-store');
    ctx.set('X-Accel-Buffering', 'no');
    ctx.body = stream;

    // Read from the service's clock (deps.now), which tests can move.
    const deadline = now().getTime() + config.BACKFILL_STATUS_SECONDS * 1000;
    const look = backfill ? watchBackfill(db, backfill.id) : undefined;
    let timer: NodeJS.Timeout | undefined;
    let closed = false;
    const write = (line: z.input<typeof StatusLine>) => stream.write(`${JSON.stringify(line)}\n`);
    const finish = () => {
      closed = true;
      clearTimeout(timer);
      stream.end();
    };
    ctx.res.once('close', () => {
      closed = true;
      clearTimeout(timer);
    });

    const tick = async () => {
      if (closed) return;
      try {
        if (!look) {
          write({ backfill_loaded_until: await earliestActivityStart(db, userId) });
          return finish();
        }
        const progress = await look();
        for (const failed of progress.failed) write({ error: `${failed.filename}: ${failed.message} (${failed.code})` });
        const current = progress.backfill;
        if (current.status === 'failed')
          write({ error: `${current.filename}: ${current.error_message ?? 'the archive could not be read'}` });
        // The counts only on a completed import's last line: one query then, not one per tick.
        const c = current.status === 'completed' ? await backfillCounts(db, current) : undefined;
        const files = c
          ? { found: c.found, loaded: c.loaded, already_stored: c.already_stored, failed: c.failed, skipped: c.skipped }
          : undefined;
        write({ backfill_loaded_until: progress.loaded_until, ...(files ? { files } : {}) });
        if (progress.done || now().getTime() >= deadline) return finish();
        timer = setTimeout(tick, Math.min(config.BACKFILL_STATUS_INTERVAL_MS, Math.max(0, deadline - now().getTime())));
      } catch (err) {
        log.error('backfill status stream failed', { err });
        finish();
      }
    };
    void tick();
  },
);
